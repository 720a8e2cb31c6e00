"""One SparkSession for the whole executor test session (Spark start-up costs seconds)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from flowc.executor import get_spark

    session = get_spark("local[2]")
    yield session
