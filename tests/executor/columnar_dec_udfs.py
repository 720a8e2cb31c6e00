"""A DECIMAL UDF for the columnar DECIMAL tests (a module Spark's workers can import)."""

from __future__ import annotations

from decimal import Decimal


def third(x: Decimal | None) -> Decimal | None:
    return None if x is None else x / 3
