"""A Python UDF for benchmarks/executor.py's clicks-udf job."""


def lower_action(action: str | None) -> str | None:
    return None if action is None else action.lower()
