"""One SparkSession for the streaming tests run in this process."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from flowc.executor import get_spark

    session = get_spark("local[2]")
    yield session
