"""A Python UDF for the columnar sink tests (a module Spark's workers can import)."""

from __future__ import annotations


def fail_at(n: int | None) -> int | None:
    """``n`` itself; fails the task on the record with n = 70,000 (past the first chunk)."""
    if n == 70_000:
        raise ValueError("record 70000 is refused")
    return n
