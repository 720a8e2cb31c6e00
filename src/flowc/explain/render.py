"""Text, JSON, DOT, Mermaid and HTML renderings of the three graphs (deterministic)."""

from __future__ import annotations

import json
from typing import Any

from flowc.chaining.execution_graph import ExecutionGraph, build_execution_graph
from flowc.chaining.job_graph import JobGraph, JobVertex
from flowc.errors import ConfigError
from flowc.explain.html import html_page
from flowc.explain.plan_json import execution_plan_json
from flowc.planner.stream_graph import UPDATING, NodeKind, StreamGraph, StreamNode

LEVELS = ("stream", "job", "execution")
FORMATS = ("text", "json", "dot", "mermaid", "html")

Graph = StreamGraph | JobGraph | ExecutionGraph


def _line(node: StreamNode) -> str:
    return f"  (line {node.span.line})" if node.span is not None and node.span.line else ""


def _p(p: int) -> str:
    return "default" if p == -1 else str(p)


# ---------------------------------------------------------------------------- text


def stream_text(g: StreamGraph) -> str:
    c = g.config
    out = [f"StreamGraph  mode={c.mode.value}  chaining={'on' if c.chaining_enabled else 'off'}"
           f"  nodes={len(g.nodes)}  edges={len(g.edges)}", ""]
    modes = g.changelog_modes()
    for nid in sorted(g.nodes):
        n = g.nodes[nid]
        extras = []
        if modes[nid] == UPDATING and n.kind is not NodeKind.SINK:  # as Flink's EXPLAIN
            extras.append(f"changelogMode={UPDATING}")
        if n.uid:
            extras.append(f"uid={n.uid}")
        if n.is_keyed:
            extras.append("keyed")
        if n.chaining.value != "ALWAYS":
            extras.append(f"chaining={n.chaining.value}")
        out.append(f"[{nid}] {n.name}  p={_p(n.parallelism)} maxp={_p(n.max_parallelism)} "
                   f"slot={n.slot_sharing_group}" + (" " + " ".join(extras) if extras else "")
                   + _line(n))
        for e in g.inputs(nid):
            src = g.nodes[e.source_id]
            tag = f" side-output={e.output_tag.tag_id}" if e.output_tag else ""
            side = f" input{e.type_number}" if e.type_number else ""
            out.append(f"      <- [{src.id}] {src.name}  {e.partitioner}{side}{tag}")
    return "\n".join(out) + "\n"


def _vertex_header(v: JobVertex, index: dict[str, int]) -> str:
    return (f"[{index[v.id]}] {v.name}\n"
            f"    parallelism={_p(v.parallelism)} max_parallelism={_p(v.max_parallelism)} "
            f"slot_group={v.slot_sharing_group} id={v.id}")


def job_text(g: JobGraph) -> str:
    sg = g.stream_graph
    ordered = g.vertices_sorted()
    index = {v.id: i + 1 for i, v in enumerate(ordered)}
    n_ops = sum(len(v.operators) for v in ordered)
    modes = sg.changelog_modes()
    out = [f"JobGraph  mode={g.config.mode.value}  vertices={len(ordered)}  operators={n_ops}"
           f"  slots={g.slots_required()}", ""]
    for v in ordered:
        out.append(_vertex_header(v, index))
        for e in v.inputs:
            src = g.vertices[e.source]
            out.append(f"    <- [{index[src.id]}] {src.name}  {e.ship_strategy} "
                       f"{e.distribution_pattern} {e.result_type}")
            reasons = "; ".join(reason for _, reason in e.breaks) or "?"
            out.append(f"       not chained: {reasons}")
        out.append("    operators (Flink order, head last):")
        for o in v.operators:
            node = sg.nodes[o.node_id]
            uid = f" uid={o.uid}" if o.uid else ""
            mode = f" changelogMode={UPDATING}" if modes[o.node_id] == UPDATING and \
                node.kind is not NodeKind.SINK else ""
            out.append(f"      {o.id}  {o.name}{uid}{mode}{_line(node)}")
        out.append("")
    return "\n".join(out)


def execution_text(g: ExecutionGraph) -> str:
    index = {v.id: i + 1 for i, v in enumerate(g.vertices)}
    out = [f"ExecutionGraph  vertices={len(g.vertices)}  "
           f"subtasks={sum(v.parallelism for v in g.vertices)}  "
           f"pipelined_regions={len(g.regions)}  slots={g.slots_required()}", ""]
    for v in g.vertices:
        out.append(f"[{index[v.id]}] {v.name}  parallelism={v.parallelism} "
                   f"max_parallelism={v.max_parallelism}")
        for c in v.inputs:
            src = index[c.edge.source]
            if c.pattern == "ALL_TO_ALL":
                out.append(f"    <- [{src}] ALL_TO_ALL: each of {v.parallelism} subtasks reads "
                           f"all {c.producer_parallelism} partitions ({c.edge.ship_strategy})")
            else:
                wiring = ", ".join(
                    f"{i}<-{_range(c.partitions(i))}" for i in range(min(v.parallelism, 16)))
                more = " ..." if v.parallelism > 16 else ""
                out.append(f"    <- [{src}] POINTWISE ({c.edge.ship_strategy}): {wiring}{more}")
        out.append("")
    return "\n".join(out)


def _range(r: range) -> str:
    return str(r.start) if len(r) == 1 else f"{r.start}..{r.stop - 1}"


# ---------------------------------------------------------------------------- dot / mermaid


def _q(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def stream_dot(g: StreamGraph) -> str:
    out = ["digraph StreamGraph {", "  rankdir=LR;", "  node [shape=box];"]
    for nid in sorted(g.nodes):
        n = g.nodes[nid]
        out.append(f"  n{nid} [label={_q(f'{n.name} (p={_p(n.parallelism)})')}];")
    for e in g.edges:
        out.append(f"  n{e.source_id} -> n{e.target_id} [label={_q(str(e.partitioner))}];")
    out.append("}")
    return "\n".join(out) + "\n"


def job_dot(g: JobGraph) -> str:
    sg = g.stream_graph
    out = ["digraph JobGraph {", "  rankdir=LR;", "  node [shape=box];", "  compound=true;"]
    for i, v in enumerate(g.vertices_sorted()):
        out.append(f"  subgraph cluster_{i} {{")
        out.append(f"    label={_q(f'{v.name} (p={_p(v.parallelism)}, {v.slot_sharing_group})')};")
        for nid in reversed(v.chain):
            out.append(f"    n{nid} [label={_q(sg.nodes[nid].name)}];")
        for e in v.chained_edges:
            out.append(f"    n{e.source_id} -> n{e.target_id};")
        out.append("  }")
    for v in g.vertices_sorted():
        for e in v.inputs:
            se = e.stream_edge
            out.append(f"  n{se.source_id} -> n{se.target_id} [style=bold, "
                       f"label={_q(f'{e.ship_strategy} {e.distribution_pattern}')}];")
    out.append("}")
    return "\n".join(out) + "\n"


def execution_dot(g: ExecutionGraph) -> str:
    out = ["digraph ExecutionGraph {", "  rankdir=LR;", "  node [shape=box];"]
    index = {v.id: i for i, v in enumerate(g.vertices)}
    for v in g.vertices:
        out.append(f"  v{index[v.id]} [label={_q(f'{v.name} x{v.parallelism}')}];")
    for v in g.vertices:
        for c in v.inputs:
            out.append(f"  v{index[c.edge.source]} -> v{index[v.id]} "
                       f"[label={_q(f'{c.edge.ship_strategy} {c.pattern}')}];")
    out.append("}")
    return "\n".join(out) + "\n"


# Mermaid renders a quoted label as HTML and reads `#...;` as an entity code: markup and
# entity starts in a name are written as entity codes, so a name shows as written. ('>'
# alone opens no tag: chain names keep their "A -> B".)
_MERMAID_ESCAPES = str.maketrans({"#": "#35;", '"': "#quot;", "<": "#lt;", "&": "#amp;",
                                  "`": "#96;", "\n": " ", "\r": " "})


def _mid(s: str) -> str:
    return s.translate(_MERMAID_ESCAPES)


def stream_mermaid(g: StreamGraph) -> str:
    out = ["flowchart LR"]
    for nid in sorted(g.nodes):
        n = g.nodes[nid]
        out.append(f'  n{nid}["{_mid(n.name)} (p={_p(n.parallelism)})"]')
    for e in g.edges:
        out.append(f"  n{e.source_id} -->|{e.partitioner}| n{e.target_id}")
    return "\n".join(out) + "\n"


def job_mermaid(g: JobGraph) -> str:
    sg = g.stream_graph
    out = ["flowchart LR"]
    for i, v in enumerate(g.vertices_sorted()):
        out.append(f'  subgraph v{i}["{_mid(v.name)} (p={_p(v.parallelism)})"]')
        for nid in reversed(v.chain):
            out.append(f'    n{nid}["{_mid(sg.nodes[nid].name)}"]')
        for e in v.chained_edges:
            out.append(f"    n{e.source_id} --> n{e.target_id}")
        out.append("  end")
    for v in g.vertices_sorted():
        for e in v.inputs:
            se = e.stream_edge
            out.append(f"  n{se.source_id} ==>|{e.ship_strategy}| n{se.target_id}")
    return "\n".join(out) + "\n"


def execution_mermaid(g: ExecutionGraph) -> str:
    out = ["flowchart LR"]
    index = {v.id: i for i, v in enumerate(g.vertices)}
    for v in g.vertices:
        out.append(f'  v{index[v.id]}["{_mid(v.name)} x{v.parallelism}"]')
    for v in g.vertices:
        for c in v.inputs:
            out.append(f"  v{index[c.edge.source]} -->|{c.edge.ship_strategy} {c.pattern}| "
                       f"v{index[v.id]}")
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------- dispatch


def render(graph: Graph, fmt: str = "text", title: str = "flowc plan") -> str:
    """Render any of the three graphs. ``json`` of a StreamGraph is Flink's execution plan
    JSON (loads in Flink's plan visualizer); of the others, their ``to_dict()``. ``html`` is
    one page drawing the JobGraph with its ExecutionGraph's subtasks (of a JobGraph: built
    with default parallelism 1, as ``env.get_execution_graph()``); ``title`` is its title."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown format '{fmt}' (choose one of: {', '.join(FORMATS)})")
    if fmt == "html":
        return _html(graph, title)
    table: dict[type, dict[str, Any]] = {
        StreamGraph: {"text": stream_text, "json": execution_plan_json, "dot": stream_dot,
                      "mermaid": stream_mermaid},
        JobGraph: {"text": job_text, "json": lambda g: _json(g.to_dict()), "dot": job_dot,
                   "mermaid": job_mermaid},
        ExecutionGraph: {"text": execution_text, "json": lambda g: _json(g.to_dict()),
                         "dot": execution_dot, "mermaid": execution_mermaid},
    }
    return table[type(graph)][fmt](graph)


def _html(graph: Graph, title: str) -> str:
    if isinstance(graph, StreamGraph):
        raise ConfigError("the html format draws the JobGraph and its ExecutionGraph: use "
                          "--level job or --level execution (both give the same page)")
    eg = graph if isinstance(graph, ExecutionGraph) else build_execution_graph(graph)
    return html_page(eg.job_graph.to_dict(), eg.to_dict(), title)


def _json(d: dict[str, Any]) -> str:
    return json.dumps(d, indent=2, ensure_ascii=False) + "\n"
