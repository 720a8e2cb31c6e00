"""The orders table of the DECIMAL cases (record_decimal.py, test_sql_decimal.py): a
currency conversion's inputs, generated deterministically."""

from __future__ import annotations

import random

CURRENCIES = ("EUR", "USD", "GBP", "JPY", "CHF")
DDL = ("CREATE TABLE orders (id BIGINT, cur STRING, amount DECIMAL(10, 2), "
       "rate DECIMAL(10, 4))")


def orders_csv(n: int = 300) -> str:
    """``id,cur,amount,rate`` lines, no header; every 37th amount is empty (NULL)."""
    rnd = random.Random(11)
    lines = []
    for i in range(1, n + 1):
        amount = "" if i % 37 == 0 else f"{rnd.randint(1, 999_999) / 100:.2f}"
        rate = f"{rnd.randint(50, 20_000) / 10_000:.4f}"
        lines.append(f"{i},{rnd.choice(CURRENCIES)},{amount},{rate}")
    return "\n".join(lines) + "\n"
