"""What a reference run produces besides its channels (``reference.py``): results, print
lines, file-sink records and dead letters per node, staged and committed together at the
end (``write_files``); a source subtask's records (``subtask_source``) and where a sink
subtask's records go (``sink_buffer``)."""

from __future__ import annotations

from typing import Any

from flowc.errors import FlowcError
from flowc.executor.failures import wrap
from flowc.executor.result import JobResult
from flowc.executor.runtime import files
from flowc.executor.runtime.sources import source_values
from flowc.executor.sinks import (
    Staged,
    declared_arrow_schema,
    declared_columns,
    infer_columns,
    narrow_ints,
    print_prefix,
    row_checker,
    shaper,
    sink_path,
    stage_lines,
    stage_python,
    stage_row_format,
)
from flowc.operators import (
    CollectSink,
    DiscardingSink,
    FileSink,
    FileSource,
    PrintSink,
    RowFormatFileSink,
)
from flowc.planner.stream_graph import StreamGraph, StreamNode


class Outputs:
    """What a run produces besides channels: results, print lines, file-sink records and
    dead letters per node (written and committed together at the end), file splits."""

    def __init__(self, result: JobResult) -> None:
        self.result = result
        # per (node, subtask), joined in that order at the end as a node-at-a-time run would
        # (the micro-batch model: per (batch, node, subtask))
        self.collected: dict[tuple[int, ...], tuple[str, list[Any]]] = {}
        self.printed: dict[tuple[int, ...], tuple[str, Any, list[Any]]] = {}
        self.files: dict[int, dict[tuple[int, ...], list[Any]]] = {}
        self.dead: dict[int, files.BadRows] = {}
        self.splits: dict[int, list[files.Split]] = {}


def write_files(sg: StreamGraph, outs: Outputs) -> None:
    """Every file sink and dead-letter file into a temp dir, then all renamed into place
    (nothing is committed unless everything was written)."""
    staged = Staged()
    try:
        for nid in sorted(outs.files):
            node = sg.nodes[nid]
            spec = node.operator
            if isinstance(spec, RowFormatFileSink):
                parts = [part for _, part in sorted(outs.files[nid].items())]
                try:
                    staged.add(stage_row_format(spec, node.output_type, parts),
                               sink_path(spec))
                except FlowcError as exc:
                    raise wrap(node, exc) from None
                continue
            values = [v for _, part in sorted(outs.files[nid].items()) for v in part]
            try:
                columns = declared_columns(spec, node.output_type)
                if columns is None:
                    columns = infer_columns(spec, values)
                check = row_checker(spec.path, columns, shaper([c for c, _ in columns]))
                schema = declared_arrow_schema(spec, node.output_type)
                narrow = narrow_ints(spec.path, schema)
                rows = [narrow(check(v)) for v in values]
                staged.add(stage_python(spec, columns, rows, schema), sink_path(spec))
            except FlowcError as exc:
                raise wrap(node, exc) from None
        for nid in sorted(outs.dead):
            spec = sg.nodes[nid].operator
            if spec.dead_letter is None:
                continue
            path = files.dead_letter_path(spec.dead_letter)
            try:
                staged.add(stage_lines(path, outs.dead[nid].lines), path)
            except FlowcError as exc:  # named as the source, with its line
                raise wrap(sg.nodes[nid], exc) from None
        staged.commit()
    except BaseException:
        staged.abort()
        raise


def subtask_source(node: StreamNode, subtask: int, p: int, outs: Outputs) -> Any:
    spec = node.operator
    if not isinstance(spec, FileSource):
        return source_values(spec, subtask, p)
    if node.id not in outs.splits:
        outs.splits[node.id] = files.local_splits(spec, p)
    bad = outs.dead.setdefault(node.id, files.BadRows(spec))
    return files.read_local(spec, files.subtask_splits(outs.splits[node.id], subtask, p), bad)


def sink_buffer(node: StreamNode, subtask: int, p: int, outs: Outputs,
                 batch: tuple[int, ...] = ()) -> list[Any] | None:
    """Where a sink subtask's records go (None: nowhere); print lines are made at the end.
    ``batch``: (micro-batch,) in the micro-batch model, which keys outputs by it first."""
    spec = node.operator
    values: list[Any] = []
    if isinstance(spec, CollectSink):
        outs.collected[(*batch, node.id, subtask)] = (spec.name, values)
    elif isinstance(spec, PrintSink):
        outs.printed[(*batch, node.id, subtask)] = (print_prefix(spec, subtask, p), spec,
                                                    values)
    elif isinstance(spec, (FileSink, RowFormatFileSink)):
        outs.files.setdefault(node.id, {})[(*batch, subtask)] = values
    elif isinstance(spec, DiscardingSink):
        return None
    else:
        from flowc.errors import UnsupportedError

        raise UnsupportedError(f"sink kind '{type(spec).__name__}' is not supported")
    return values
