"""One SparkSession for the whole test run (shared with tests/executor)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from flowc.executor import get_spark

    yield get_spark("local[2]")
