"""The STREAMING columnar session window's state (``arrow/stream_sessions.py``'s
``StreamSessionWindow``) as the row WindowOperator's (``runtime/windows.py``, a merging
assigner) and back, for the streaming executor's snapshots (``columnar.py``).

The row operator holds per key Flink's MergingWindowSet mapping (``mapping``: session
window -> the state window whose accumulator it uses: the window of the session's first
record, kept through merges as ``mapping[merged[0]]``), the accumulators under (key,
state window) and the end / cleanup timers. The columnar state holds per key id the
session windows as session ids (sids) - a merged sid's children are the absorbed sids in
start order -, their rows (aggregate arguments, own rows by arrival) and the timers as
``TimerService`` holds them (a heap by (timestamp, registration) and the live ones).

To the row form: each held sid's accumulator is the row code's fold - its children's
accumulators merged in start order, then its own rows added in arrival order (so double
sums add up exactly as the row operator's) - by the row aggregate's own generated
``add`` / ``merge`` (``_specialised``) over the argument values; its state window is the
first leaf's window, or the one recorded when it was restored. From the row form: each
session window becomes a sid without children whose rows aggregate to its accumulator
(``window_state.as_rows``: a sum or a min in one row, count's neutral fillers, count
distinct's values one a row), its state window recorded on the member
(``state_windows``), the live timers registered in their firing order.
"""

from __future__ import annotations

import heapq
from operator import itemgetter
from typing import Any

import numpy as np
import pyarrow as pa

from flowc.executor.arrow import convert
from flowc.executor.arrow.stream_sessions import StreamSessionWindow
from flowc.executor.runtime.core import TimerService
from flowc.executor.streaming.window_state import as_rows, fake_row, key_fields
from flowc.parser.aggregates import _specialised
from flowc.types import Schema
from flowc.windowing import TimeWindow


def _state_windows(w: StreamSessionWindow) -> dict[int, tuple[int, int]]:
    """Restored sids' state windows (set by ``session_from_row``)."""
    got: dict[int, tuple[int, int]] | None = getattr(w, "state_windows", None)
    if got is None:
        got = w.state_windows = {}  # type: ignore[attr-defined]
    return got


def _folds(w: StreamSessionWindow) -> tuple[Any, Any, tuple[Any, ...]]:
    """The row aggregate's generated ``add`` / ``merge`` over a row of argument values
    (argument ``i`` at position ``i``) and its initial accumulator."""
    kinds = tuple(w.assigned.agg.kinds)
    args = tuple(None if a is None else itemgetter(i)
                 for i, a in enumerate(w.assigned.agg.args))
    fns = _specialised(kinds, args)
    from flowc.parser.aggregates import _init

    return fns["add"], fns["merge"], tuple(_init(k) for k in kinds)


def session_to_row(w: StreamSessionWindow, op: Any, in_schema: Schema) -> None:
    """Put ``w``'s held sessions into the opened row WindowOperator ``op`` (its mapping,
    accumulators and timers; ``columnar.py`` sets the watermark)."""
    width = len(in_schema)
    op.state, op.mapping = {}, {}
    op.timers = TimerService()
    fields = {i: k for k, i in w.key_ids.items()}
    keys = {i: op.key_fn(fake_row(w, width, f)) for i, f in fields.items()}
    accs = _accumulators(w)
    restored = _state_windows(w)
    state_window: dict[int, tuple[int, int]] = {}
    for sid in sorted(w.extent):  # children are older than their parent
        kids = w.children.get(sid)
        state_window[sid] = restored.get(sid) or (state_window[kids[0]] if kids
                                                  else w.extent[sid])
    for kid, held in w.windows.items():
        key = keys[kid]
        mapping = op.mapping[key] = {}
        for (start, end), sid in held.items():
            sw = TimeWindow(*state_window[sid])
            mapping[TimeWindow(start, end)] = sw
            op.state[(key, sw)] = accs[sid]
    pending = w.pending
    for ts, _, kid, start, end in sorted(w.timers):  # firing order
        if (ts, kid, start, end) in pending and kid in keys:
            op.timers.register(ts, keys[kid], TimeWindow(start, end))
    for sid in [s for s in restored if s not in w.extent]:  # cleaned up since restored
        del restored[sid]


def _accumulators(w: StreamSessionWindow) -> dict[int, tuple[Any, ...]]:
    """Every sid's row accumulator: children merged in start order, own rows added in
    arrival order."""
    add, merge, initial = _folds(w)
    own: dict[int, list[tuple[Any, ...]]] = {}
    if w.held:
        rows = w._rows()
        order = np.lexsort((rows.column("rid").to_numpy(), rows.column("sid").to_numpy()))
        rows = rows.take(pa.array(order))
        n = len(w.assigned.agg.kinds)
        values = [rows.column(f"a{i}").to_pylist() for i in range(n)]
        for sid, row in zip(rows.column("sid").to_pylist(), zip(*values) if n else
                            [()] * rows.num_rows):
            own.setdefault(sid, []).append(row)
    accs: dict[int, tuple[Any, ...]] = {}
    for sid in sorted(w.extent):
        kids = w.children.get(sid)
        acc = initial
        if kids:
            acc = accs[kids[0]]
            for c in kids[1:]:
                acc = merge(acc, accs[c])
        for row in own.get(sid, ()):
            acc = add(row, acc)
        accs[sid] = acc
    return accs


def session_from_row(op: Any, w: StreamSessionWindow, in_schema: Schema) -> None:
    """Put the row WindowOperator ``op``'s sessions (restored from a snapshot) into
    ``w``."""
    width = len(in_schema)
    n = len(w.assigned.keys)
    empty = w.assigned.table(convert.empty(convert.arrow_schema(in_schema)))
    types = {name: empty.schema.field(name).type for name in empty.column_names}
    w.windows, w.timers, w.pending, w.seq = {}, [], set(), 0
    w.sids, w.children, w.extent = 0, {}, {}
    w.finals = {i: {} for i in w.doubles}
    w.key_ids, w.next_key, w.events, w.cleaned = {}, 0, [], []
    restored = w.state_windows = {}  # type: ignore[attr-defined]
    cols: dict[str, list[Any]] = {name: [] for name in (*empty.column_names, "sid", "rid")}
    kinds = w.assigned.agg.kinds
    kids: dict[Any, int] = {}
    for key, mapping in op.mapping.items():
        if not mapping:  # written before the row operator dropped empty entries
            continue
        fields = key_fields(op, w, width, key, n)
        kid = kids[key] = w._key_id(tuple(fields))
        held = w.windows[kid] = {}
        for window, sw in mapping.items():
            sid = w._new(window.start, window.end)
            held[(window.start, window.end)] = sid
            restored[sid] = (sw.start, sw.end)
            acc = op.state.get((key, sw))
            if acc is None:
                continue
            per_kind = [as_rows(k, a, types[f"a{i}"]) for i, (k, a) in
                        enumerate(zip(kinds, acc))]
            size = max([len(v) for v in per_kind if v is not None] + [1])
            for j, k in enumerate(w.assigned.keys):
                cols[k] += [fields[j]] * size
            for i, values in enumerate(per_kind):
                cols[f"a{i}"] += [None] * size if values is None else \
                    values + [None] * (size - len(values))
            cols["sid"] += [sid] * size
            cols["rid"] += list(range(len(cols["rid"]), len(cols["rid"]) + size))
    schema = empty.schema.append(pa.field("sid", pa.int64())).append(
        pa.field("rid", pa.int64()))
    table = pa.Table.from_pydict(cols, schema=schema)
    w.held = [table] if table.num_rows else []
    w.seen = table.num_rows  # this batch's rows come after every restored one
    heap = op.timers._heap
    live = op.timers._live
    for ts, _, key, window in sorted(heap, key=lambda e: e[:2]):  # firing order
        if (ts, key, window) in live:
            kid = kids.get(key)
            if kid is None:
                kid = kids[key] = w._key_id(tuple(key_fields(op, w, width, key, n)))
            w._register(ts, kid, window.start, window.end)
    heapq.heapify(w.timers)
    w.wm = op.watermark
