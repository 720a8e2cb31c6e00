"""Partition directory names of a partitioned file sink, as Flink's filesystem sink names
them (shared by both executors' writers)."""

from __future__ import annotations


def escape_path_name(value: str) -> str:
    """Flink's (and Hive's, and Spark's) ``escapePathName``: control characters and
    ``"#%'*/:=?\\{[]^`` and DEL as ``%XX``."""
    return "".join(f"%{ord(c):02X}" if ord(c) < 0x20 or c in _ESCAPED else c for c in value)


_ESCAPED = frozenset('"#%\'*/:=?\\\x7f{[]^')


def partition_text(value: object, default: str) -> str:
    """A partition value as Flink's RowDataPartitionComputer writes it: its text, or the
    default name for a null or blank one."""
    text = default if value is None else ("true" if value is True else "false"
                                          if value is False else str(value))
    return text if text.strip() else default


def partition_dir(columns: tuple[str, ...], values: tuple[object, ...], default: str) -> str:
    """``dt=2024-05-01/k=3`` (Flink's generatePartitionPath)."""
    return "/".join(f"{escape_path_name(c)}={escape_path_name(partition_text(v, default))}"
                    for c, v in zip(columns, values))
