"""Generate one Python function per JobVertex that runs its whole OperatorChain.

Stateless operators (map, filter, flat_map) are fused into the loop as statements: a
CodeFn's source is inlined, other functions are called directly. Stateful operators are
runtime operator objects (shared with the reference executor) whose outputs call generated
closures holding the rest of the chain. Non-chained outputs append
``(slot, (target subtask, (channel id, value, ts)))`` to a buffer the task yields in
chunks; sink outputs append ``(slot, value)``.
"""

from __future__ import annotations

import itertools
import keyword
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flowc.api.functions import FilterFunction, FlatMapFunction, Function, MapFunction
from flowc.chaining.job_graph import JobVertex
from flowc.executor import routing
from flowc.executor.runtime import LONG_MAX, LONG_MIN, TaskInfo, Watermark, create_operator
from flowc.executor.runtime.core import method_of
from flowc.executor.runtime.sources import source_watermarks
from flowc.executor.spark import tasks
from flowc.executor.spark.combine import Combiner
from flowc.operators import (
    CodeFn,
    DiscardingSink,
    FilterOp,
    FlatMapOp,
    MapOp,
    TimestampsAndWatermarksOp,
)
from flowc.planner.stream_graph import NodeKind, StreamEdge, StreamGraph
from flowc.transformations import PartitionerKind

CHUNK = 4096
_counter = itertools.count()


@dataclass
class Slot:
    """One non-chained output of the vertex: an edge to another vertex, or a sink."""

    index: int
    node: int
    edge: StreamEdge | None = None
    # edges: (consumer parallelism, consumer max parallelism, channel base id)
    consumer_parallelism: int = 0
    consumer_max_parallelism: int = 0
    edge_order: int = 0
    # edges: consumers connected to each producer subtask (ExecutionGraph wiring)
    targets: list[list[int]] = field(default_factory=list)
    sink: Any = None
    combine: Any = None  # the consumer's WindowOp when map-side combining applies


@dataclass
class VertexPlan:
    vertex: JobVertex
    parallelism: int
    max_parallelism: int
    batch: bool
    slots: list[Slot] = field(default_factory=list)
    edge_slot: dict[int, Slot] = field(default_factory=dict)  # id(edge) -> slot
    sink_slots: dict[int, Slot] = field(default_factory=dict)  # sink node -> slot


class _Gen:
    def __init__(self, sg: StreamGraph, plan: VertexPlan) -> None:
        self.sg = sg
        self.plan = plan
        self.ns: dict[str, Any] = {
            "_FWM": Watermark, "_FLONG_MAX": LONG_MAX, "_fcreate": create_operator,
            "_fTaskInfo": TaskInfo, "_fmethod": method_of, "_fselector": routing.make_selector,
            "_fislice": itertools.islice,
            "_ftask_error": tasks.task_error, "_fclose_all": tasks.close_all,
            "_FLONG_MIN": LONG_MIN, "_fCombiner": Combiner,
        }
        self.lines: list[str] = []
        self.line_nodes: dict[int, int] = {}
        members = set(plan.vertex.chain)
        self.members = members
        self.chained = {id(e) for e in plan.vertex.chained_edges}
        self.stateful: list[int] = []
        self.inline: dict[int, tuple[str, str]] = {}  # node -> (kind, expression template)

    # -- helpers ----------------------------------------------------------------

    def emit(self, indent: int, text: str, node: int | None = None) -> None:
        if node is not None:
            self.line_nodes[len(self.lines) + 1] = node
        self.lines.append("    " * indent + text)

    def const(self, name: str, value: Any) -> str:
        self.ns[name] = value
        return name

    def _env_ok(self, fn: CodeFn) -> bool:
        for k, v in fn.env.items():
            if not k.isidentifier() or keyword.iskeyword(k) or k.startswith("_f"):
                return False
            if k in self.ns and self.ns[k] is not v:
                return False
        return fn.params[0].isidentifier() and not fn.params[0].startswith("_f")

    def inline_value(self, nid: int, fn: Any, cls: type, method: str, var: str,
                     indent: int) -> str:
        if isinstance(fn, CodeFn) and len(fn.params) == 1 and self._env_ok(fn):
            for k, v in fn.env.items():
                self.ns[k] = v
            p = fn.params[0]
            if p != var:
                self.emit(indent, f"{p} = {var}", nid)
            return f"({fn.source})"
        name = f"_ff{nid}"
        self.ns[f"_fraw{nid}"] = fn
        self.setup_fns.append((nid, name, cls, method))
        return f"{name}({var})"

    # -- records ----------------------------------------------------------------

    def gen_out(self, nid: int, tag: Any, v: str, ts: str, indent: int) -> None:
        any_out = False
        for e in self.sg.outputs(nid):
            if e.output_tag != tag:
                continue
            any_out = True
            if id(e) in self.chained:
                self.gen_node(e.target_id, v, ts, indent)
            else:
                self.gen_slot(self.plan.edge_slot[id(e)], v, ts, indent)
        if not any_out:
            self.emit(indent, "pass")

    def gen_node(self, nid: int, v: str, ts: str, indent: int) -> None:
        node = self.sg.nodes[nid]
        spec = node.operator
        if node.kind is NodeKind.SINK:
            slot = self.plan.sink_slots[nid]
            self.emit(indent, f"_fc[{slot.index}] += 1", nid)
            if not isinstance(spec, DiscardingSink):
                self.emit(indent, f"_fappend(({slot.index}, {v}))", nid)
            return
        if isinstance(spec, MapOp):
            expr = self.inline_value(nid, spec.fn, MapFunction, "map", v, indent)
            self.emit(indent, f"_fv{nid} = {expr}", nid)
            self.gen_out(nid, None, f"_fv{nid}", ts, indent)
        elif isinstance(spec, FilterOp):
            expr = self.inline_value(nid, spec.fn, FilterFunction, "filter", v, indent)
            self.emit(indent, f"if {expr}:", nid)
            self.gen_out(nid, None, v, ts, indent + 1)
        elif isinstance(spec, FlatMapOp):
            expr = self.inline_value(nid, spec.fn, FlatMapFunction, "flat_map", v, indent)
            self.emit(indent, f"for _fv{nid} in ({expr}) or ():", nid)
            self.gen_out(nid, None, f"_fv{nid}", ts, indent + 1)
        elif self._inline_timestamps(nid):
            self.const(f"_fta{nid}", spec.strategy.timestamp_assigner)
            self.emit(indent, f"_fts{nid} = int(_fta{nid}({v}, _FLONG_MIN if {ts} is None "
                              f"else {ts}))", nid)
            self.gen_out(nid, None, v, f"_fts{nid}", indent)
        else:
            self.emit(indent, f"_fop{nid}.process({v}, {ts})", nid)

    def _inline_timestamps(self, nid: int) -> bool:
        """BATCH: the timestamps operator only assigns timestamps (no watermarks)."""
        spec = self.sg.nodes[nid].operator
        return (self.plan.batch and isinstance(spec, TimestampsAndWatermarksOp)
                and spec.strategy.timestamp_assigner is not None)

    def gen_slot(self, slot: Slot, v: str, ts: str, indent: int) -> None:
        i = slot.index
        self.emit(indent, f"_fc[{i}] += 1", slot.node)
        if slot.combine is not None:
            self.emit(indent, f"_fcomb{i}.add({v}, {ts})", slot.node)
            return
        item = f"(_fcid{i}, {v}, {ts})"
        kind = slot.edge.partitioner.kind  # type: ignore[union-attr]
        if kind is PartitionerKind.BROADCAST:
            self.emit(indent, f"for _ft in _ftg{i}:", slot.node)
            self.emit(indent + 1, f"_fappend(({i}, (_ft, {item})))", slot.node)
        elif kind is PartitionerKind.GLOBAL:
            self.emit(indent, f"_fappend(({i}, (0, {item})))", slot.node)
        elif kind.is_pointwise:
            self.emit(indent, f"_fappend(({i}, (_fsel{i}({v}), {item})))", slot.node)
        else:
            self.emit(indent, f"_fappend(({i}, (_fsel{i}({v}), {item})))", slot.node)

    def gen_source_record(self, head: int, indent: int) -> None:
        """One record ``_fv`` read by the source ``head``. A source with its own watermark
        strategy (Flink's ``fromSource``) runs TimestampsAndWatermarksOperator's rule inline:
        assign the timestamp, pass the record on, then (STREAMING) emit
        ``max_ts - strategy.lag`` if it rose (TimestampsAndWatermarksOperator's rule)."""
        spec = source_watermarks(self.sg.nodes[head])
        assigner = spec.strategy.timestamp_assigner if spec is not None else None
        if assigner is None:
            # No assigner: records keep the source's (absent) timestamp, so the generator
            # never sees one and emits nothing but the final watermark.
            self.gen_out(head, None, "_fv", "None", indent)
            return
        # A CodeFn's __call__ only forwards: call the function itself (one call less per
        # record).
        self.const("_fsrcta", assigner.fn if isinstance(assigner, CodeFn) else assigner)
        self.emit(indent, "_fts = int(_fsrcta(_fv, _FLONG_MIN))", head)
        self.gen_out(head, None, "_fv", "_fts", indent)
        strategy = spec.strategy  # type: ignore[union-attr]
        every = 1 if strategy.emit_every is None else strategy.emit_every
        eager = strategy.eager_ms  # an exact (SQL) generator's eager emission
        if self.plan.batch or strategy.out_of_orderness is None or (every == 0 and eager is None):
            return
        delay = strategy.lag
        # above the last emitted watermark and the generator's floor (0 for SQL's)
        above = "_fw > _fsrcwm" + ("" if strategy.floor == LONG_MIN else
                                   f" and _fw > {strategy.floor}")
        if every == 1:  # after every record (flowc.watermarks = per-record)
            self.emit(indent, "if _fts > _fsrcmax:", head)
            self.emit(indent + 1, "_fsrcmax = _fts", head)
            self.emit(indent + 1, f"_fw = _fts - {delay}", head)
            self.emit(indent + 1, f"if {above}:", head)
            self.emit(indent + 2, "_fsrcwm = _fw", head)
            self.emit(indent + 2, f"_fwm{head}(_fw)", head)
            return
        # Periodic (flowc.planner.watermark_timing): every `every` records; an exact generator
        # also once the watermark rose by more than `eager` ms.
        self.emit(indent, "if _fts > _fsrcmax:", head)
        self.emit(indent + 1, "_fsrcmax = _fts", head)
        self.emit(indent, f"_fw = _fsrcmax - {delay}", head)
        checks = []
        if every > 0:
            self.emit(indent, "_fsrcn += 1", head)
            checks.append((f"_fsrcn >= {every}", f"_fsrcmax != _FLONG_MIN and {above}"))
        if eager is not None:
            checks.append(("_fsrcmax != _FLONG_MIN", f"_fw - max(_fsrcwm, {strategy.floor}) "
                                                     f"> {eager}"))
        for n, (test, rose) in enumerate(checks):
            self.emit(indent, f"{'elif' if n else 'if'} {test}:", head)
            if test.startswith("_fsrcn"):
                self.emit(indent + 1, "_fsrcn = 0", head)
            self.emit(indent + 1, f"if {rose}:", head)
            self.emit(indent + 2, "_fsrcwm = _fw", head)
            self.emit(indent + 2, f"_fwm{head}(_fw)", head)

    # -- watermarks -------------------------------------------------------------

    def gen_wm_forward(self, nid: int, indent: int) -> None:
        """Body forwarding watermark ``_fw`` from node ``nid`` to all its outputs."""
        body = False
        for e in self.sg.outputs(nid):
            body = True
            if id(e) in self.chained:
                self.emit(indent, f"_fwm{e.target_id}(_fw)", nid)
            else:
                i = self.plan.edge_slot[id(e)].index
                self.emit(indent, f"for _ft in _ftg{i}:", nid)
                self.emit(indent + 1, f"_fappend(({i}, (_ft, (_fcid{i}, _FWM, _fw))))", nid)
        if not body:
            self.emit(indent, "pass")

    # -- the function -----------------------------------------------------------

    def generate(self) -> tuple[str, dict[str, Any], dict[int, int]]:
        plan, sg = self.plan, self.sg
        v = plan.vertex
        head = v.chain[-1]
        head_node = sg.nodes[head]
        order = list(reversed(v.chain))  # head first (reverse post-order is topological)
        self.setup_fns: list[tuple[int, str, type, str]] = []
        for nid in order:
            n = sg.nodes[nid]
            if n.kind is NodeKind.OPERATOR and not isinstance(
                    n.operator, (MapOp, FilterOp, FlatMapOp)) and not self._inline_timestamps(nid):
                self.stateful.append(nid)
        # Body first (into a separate buffer), setup afterwards needs setup_fns.
        body_start = len(self.lines)
        self.emit(0, "def _fchain(_fsubtask, _fin, _fon_end):")
        self.emit(1, "_fbuf = []")
        self.emit(1, "_fappend = _fbuf.append")
        self.emit(1, f"_fc = [0] * {len(plan.slots)}")
        self.emit(1, "_fnin = 0")
        self.emit(1, "_fnwm = 0")
        self.emit(1, "_fops = []")
        self.emit(1, "_fopened = []")
        self.emit(1, "_fsrcmax = _fsrcwm = _FLONG_MIN")
        self.emit(1, "_fsrcn = 0")
        self.emit(1, "try:")
        ind = 2
        P, M = plan.parallelism, plan.max_parallelism
        for s in plan.slots:
            if s.edge is None:
                continue
            i = s.index
            self.const(f"_fpart{i}", s.edge.partitioner)
            self.emit(ind, f"_fcid{i} = ({s.edge_order} << 16) | _fsubtask")
            self.const(f"_ftargets{i}", s.targets)
            self.emit(ind, f"_ftg{i} = _ftargets{i}[_fsubtask]")
            if s.combine is not None:
                self.const(f"_fcombspec{i}", s.combine)
                self.emit(ind, f"_fcomb{i} = _fCombiner(_fcombspec{i}, _fpart{i}.key, "
                               f"{s.consumer_max_parallelism}, {s.consumer_parallelism})")
            self.emit(ind, f"_fsel{i} = _fselector(_fpart{i}, producer=_fsubtask, targets=_ftg{i}, "
                           f"t={s.consumer_parallelism}, max_par={s.consumer_max_parallelism}, "
                           f"seed={s.edge.edge_id!r})")
        for nid in self.stateful:
            n = sg.nodes[nid]
            self.const(f"_fspec{nid}", n.operator)
            self.const(f"_fkeys{nid}", n.keys)
            self.emit(ind, f"_fop{nid} = _fcreate(_fspec{nid}, _fTaskInfo({n.name!r}, "
                           f"_fsubtask, {P}, {M}, {plan.batch}), _fkeys{nid})", nid)
            self.emit(ind, f"_fops.append(_fop{nid})")
        # Emitter closures for stateful operators.
        for nid in self.stateful:
            self.emit(ind, f"def _femit{nid}(_fv{nid}x, _fts{nid}):")
            self.gen_out(nid, None, f"_fv{nid}x", f"_fts{nid}", ind + 1)
            tags = []
            for e in sg.outputs(nid):
                if e.output_tag is not None and e.output_tag not in tags:
                    tags.append(e.output_tag)
            self.emit(ind, f"def _fside{nid}(_ftag, _fsv, _fsts):")
            if not tags:
                self.emit(ind + 1, "pass")
            for j, tag in enumerate(tags):
                self.const(f"_ftag{nid}_{j}", tag)
                self.emit(ind + 1, f"{'if' if j == 0 else 'elif'} _ftag == _ftag{nid}_{j}:")
                self.gen_out(nid, tag, "_fsv", "_fsts", ind + 2)
            self.emit(ind, f"def _fwmfwd{nid}(_fw):")
            self.gen_wm_forward(nid, ind + 1)
            self.emit(ind, f"_fop{nid}.out = _femit{nid}")
            self.emit(ind, f"_fop{nid}.side = _fside{nid}")
            self.emit(ind, f"_fop{nid}.out_wm = _fwmfwd{nid}")
            self.emit(ind, f"_fwm{nid} = _fop{nid}.on_watermark")
        # Watermark functions of stateless nodes (sinks swallow them), tail first so
        # every callee exists before its caller is defined... closures resolve late anyway.
        for nid in order:
            n = sg.nodes[nid]
            if nid in self.stateful:
                continue
            self.emit(ind, f"def _fwm{nid}(_fw):")
            if n.kind is NodeKind.SINK:
                self.emit(ind + 1, "pass")
            else:
                self.gen_wm_forward(nid, ind + 1)
        open_at = len(self.lines)  # the lifecycle block (below) goes here
        # Main loop.
        self.emit(ind, "while True:")
        # Reading the input (a file source's parser, a bad row) fails as the head.
        self.emit(ind + 1, f"_fchunk = list(_fislice(_fin, {CHUNK}))", head)
        self.emit(ind + 1, "if not _fchunk:")
        self.emit(ind + 2, "break")
        self.emit(ind + 1, "_fnin += len(_fchunk)")
        if head_node.kind is NodeKind.SOURCE:
            self.emit(ind + 1, "for _fv in _fchunk:", head)
            self.gen_source_record(head, ind + 2)
        else:
            self.emit(ind + 1, "for _fi, _fv, _fts in _fchunk:", head)
            self.emit(ind + 2, "if _fi == 0:")
            self.emit(ind + 3, "_fnwm += 1")
            self.emit(ind + 3, f"_fwm{head}(_fts)", head)
            if head_node.two_input:
                self.emit(ind + 2, "elif _fi == 1:")
                self.emit(ind + 3, f"_fop{head}.process1(_fv, _fts)", head)
                self.emit(ind + 2, "else:")
                self.emit(ind + 3, f"_fop{head}.process2(_fv, _fts)", head)
            else:
                self.emit(ind + 2, "else:")
                self.gen_node(head, "_fv", "_fts", ind + 3)
        self.emit(ind + 1, "if _fbuf:")
        self.emit(ind + 2, "yield from _fbuf")
        self.emit(ind + 2, "del _fbuf[:]")
        if head_node.kind is NodeKind.SOURCE and not plan.batch:
            self.emit(ind, f"_fwm{head}(_FLONG_MAX)", head)
        for nid in self.stateful:  # end of input, head first
            self.emit(ind, f"_fop{nid}.finish()", nid)
        for s in plan.slots:
            if s.combine is not None:
                self.emit(ind, f"_fcomb{s.index}.drain(_fappend, {s.index}, _fcid{s.index})",
                          s.node)
        # Close head -> tail: each pop closes the last opened member (flink-semantics §7).
        lifecycle = set(self.stateful) | {
            nid for nid, _, _, _ in self.setup_fns if isinstance(self.ns[f"_fraw{nid}"], Function)}
        for nid in order:
            if nid in lifecycle:
                self.emit(ind, "_fopened.pop()()", nid)
        self.emit(ind, "yield from _fbuf")
        self.emit(ind, "_fstats = [_fnin - _fnwm, sum(_fc[i] for i in _FEDGE_SLOTS), "
                       "sum(o.late_records_dropped for o in _fops), "
                       "sum(_fc[i] for i in _FSINK_SLOTS)]")
        self.emit(ind, "_fstats[0] += sum(o.extra_records for o in _fops)")
        self.emit(ind, "_fon_end(_fstats)")
        self.emit(1, "except Exception as _fe:")
        self.emit(2, "_fclose_all(_fopened)")
        self.emit(2, f"raise _ftask_error(_fe, _FFILE, _FLINES, {head}) from None")
        self.ns["_FEDGE_SLOTS"] = tuple(s.index for s in plan.slots if s.edge is not None)
        self.ns["_FSINK_SLOTS"] = tuple(s.index for s in plan.slots if s.sink is not None)
        # The lifecycle block, inserted before the main loop once every inlined function is
        # known: bind the inlined functions, then open the chain's members tail -> head
        # (v.chain is Flink's operator order, head last), each registering its close.
        block: list[tuple[str, int]] = []
        fn_objects: dict[int, str] = {}
        for nid, name, cls, method in self.setup_fns:
            block.append((f"{name} = _fmethod(_fraw{nid}, _fcls{nid}, {method!r})", nid))
            self.ns[f"_fcls{nid}"] = cls
            if isinstance(self.ns[f"_fraw{nid}"], Function):
                fn_objects[nid] = f"_fraw{nid}"
        for nid in v.chain:
            if nid in self.stateful:
                block.append((f"_fop{nid}.open()", nid))
                block.append((f"_fopened.append(_fop{nid}.close)", nid))
            elif nid in fn_objects:
                block.append((f"{fn_objects[nid]}.open(_fTaskInfoCtx(_fsubtask))", nid))
                block.append((f"_fopened.append({fn_objects[nid]}.close)", nid))
        shift = len(block)
        self.line_nodes = {(ln + shift if ln > open_at else ln): n
                           for ln, n in self.line_nodes.items()}
        for j, (_, nid) in enumerate(block):
            self.line_nodes[open_at + j + 1] = nid
        self.lines[open_at:open_at] = ["    " * ind + text for text, _ in block]
        assert body_start == 0
        return "\n".join(self.lines) + "\n", self.ns, self.line_nodes


def generate_chain(sg: StreamGraph, plan: VertexPlan) -> tuple[str, Callable[..., Any]]:
    """Source text and the compiled ``_fchain(subtask, elements)`` generator function."""
    from flowc.executor.runtime.clock import processing_clock, using_clock
    from flowc.executor.runtime.state import RuntimeContext

    gen = _Gen(sg, plan)
    src, ns, line_nodes = gen.generate()
    filename = f"<flowc-chain-{plan.vertex.id[:8]}-{next(_counter)}>"
    p, m = plan.parallelism, plan.max_parallelism
    name = plan.vertex.name
    ns["_FFILE"] = filename
    ns["__name__"] = "flowc_generated_chain"
    ns["_FLINES"] = line_nodes
    ns["_fTaskInfoCtx"] = lambda st: RuntimeContext(name, st, p, m, None)
    code = compile(src, filename, "exec")
    exec(code, ns)
    fchain = ns["_fchain"]

    clock = processing_clock()  # the driver's (an injected one in tests) reaches the tasks

    def chain(subtask: int, items: Any, on_end: Callable[[list[int]], None]) -> Any:
        with using_clock(clock):
            yield from tasks.gc_relaxed(fchain(subtask, items, on_end))
    return src, chain
