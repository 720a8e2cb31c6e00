"""State by operator id: the stateful operators of a plan, the savepoint metadata format
(docs/savepoints.md) and ``flowc explain --diff`` (docs/upgrading.md)."""

from flowc.savepoint.diff import LOST, NEW, RESTORED, DiffEntry, StateDiff, diff_states
from flowc.savepoint.metadata import (
    FORMAT,
    METADATA_FILE,
    VERSION,
    OperatorMeta,
    SavepointMetadata,
    is_savepoint_dir,
    metadata_from_plan,
    read_metadata,
)
from flowc.savepoint.render import DIFF_FORMATS, render_diff
from flowc.savepoint.stateful import StatefulOperator, stateful_operators

__all__ = [
    "DIFF_FORMATS", "FORMAT", "LOST", "METADATA_FILE", "NEW", "RESTORED", "VERSION",
    "DiffEntry", "OperatorMeta", "SavepointMetadata", "StateDiff", "StatefulOperator",
    "diff_states", "is_savepoint_dir", "metadata_from_plan", "read_metadata", "render_diff",
    "stateful_operators",
]
