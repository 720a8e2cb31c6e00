"""Shared by the STREAMING session window tests (test_columnar_sessions_stream.py,
test_columnar_sessions_lateness.py): one planned session member run on the runtime
WindowOperator and on the vectorised ``StreamSessionWindow`` over the same chunks, each
giving its records and watermarks in order, its late side output and its dropped count."""

from __future__ import annotations

from typing import Any

from tests.executor.test_columnar_windows import _run

from flowc.executor.arrow import convert
from flowc.executor.arrow.stream_sessions import StreamSessionWindow
from flowc.executor.runtime.core import LONG_MAX, TaskInfo
from flowc.executor.runtime.factory import create_operator

Run = tuple[list[Any], list[Any], int]


def runtime_sessions(m: Any, chunks: list[Any]) -> Run:
    """The runtime WindowOperator fed the chunks' records and watermarks in order."""
    op = create_operator(m.spec, TaskInfo("w", 0, 1, 128, False), (m.key,))
    out: list[Any] = []
    late: list[Any] = []
    op.out = lambda v, ts: out.append((tuple(v), ts))
    op.out_wm = lambda w: out.append(("wm", w))
    op.side = lambda tag, v, ts: late.append((tuple(v), ts))
    op.open()
    for c in chunks:
        pos, vals = c.marks
        k = 0
        rows, ts = c.rows(), c.timestamps()
        for i in range(len(rows) + 1):
            while k < len(pos) and pos[k] == i:
                op.on_watermark(int(vals[k]))
                k += 1
            if i < len(rows):
                op.process(rows[i], ts[i])
    op.on_watermark(LONG_MAX)
    return out, late, op.late_records_dropped


def columnar_sessions(m: Any, chunks: list[Any]) -> Run:
    """``StreamSessionWindow`` fed the chunks, then a final watermark; checks that all
    fired and was cleaned (no session, key, merge tree, held row or final is left)."""
    w = StreamSessionWindow(m.spec, m.key, m.in_schema, convert.arrow_schema(m.out_schema))
    late: list[Any] = []

    def step(c: Any) -> Any:
        result = w.add(c)
        if w.late is not None:
            late.extend(r for r in _run(lambda x: x, [w.late]) if r[0] != "wm")
        return result
    end = convert.empty(convert.arrow_schema(m.in_schema))
    final = convert.Chunk(end.batch, end.ts, ([0], [LONG_MAX]))
    out = _run(step, [*chunks, final])
    # Cleanup times overflowing LONG_MAX would stay held: none in these tests.
    assert not (w.windows or w.pending or w.children or w.extent or w.key_ids)
    assert sum(t.num_rows for t in w.held) == 0
    assert not any(w.finals.values())
    return [(tuple(r), t) if r != "wm" else (r, t) for r, t in out], late, w.dropped
