"""Python UDFs for the columnar differential tests (a module Spark's workers can import)."""

from __future__ import annotations


def bump(x: int | None) -> int | None:
    return None if x is None else x * 3 + 1
