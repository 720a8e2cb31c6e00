from __future__ import annotations

from typing import Any

from flowc.api.environment import StreamExecutionEnvironment


def structure(env: StreamExecutionEnvironment) -> tuple[Any, ...]:
    """Everything about the transformations the planner reads, minus user functions."""
    p = env.program()
    rows = []
    for tid in sorted(p.transformations):
        t = p.transformations[tid]
        op = getattr(t, "operator", None) or getattr(t, "source", None) or getattr(t, "sink", None)
        part = getattr(t, "partitioner", None)
        keys = [getattr(t, k, None) for k in ("key", "key1", "key2")]
        rows.append((
            tid, type(t).__name__, type(op).__name__, t.name, t.inputs,
            str(part) if part is not None else None,
            part.key.fields if part is not None and part.key is not None else None,
            tuple(k.fields if k is not None else None for k in keys),
            t.parallelism, t.max_parallelism, t.uid, t.uid_hash, t.slot_sharing_group,
            t.chaining, getattr(getattr(t, "tag", None), "tag_id", None),
        ))
    return tuple(rows), p.roots, p.config


def _without_lines(value: Any) -> Any:
    """A plan's JSON without source lines (a script and a Python program differ there)."""
    if isinstance(value, dict):
        return {k: _without_lines(v) for k, v in value.items() if k != "line"}
    if isinstance(value, list):
        return [_without_lines(v) for v in value]
    return value


def stream_graph_dump(env: StreamExecutionEnvironment) -> Any:
    """The StreamGraph as the planner built it: nodes (with their operator class, output
    type, description, state keys and watermark strategy) and edges, minus lines."""
    sg = env.get_stream_graph()
    nodes = {n.id: (type(n.operator).__name__, str(n.output_type), n.description,
                    tuple(k.fields if k is not None else None for k in n.keys),
                    type(n.watermark_strategy).__name__, n.two_input, n.sink_writer)
             for n in sg.nodes.values()}
    return _without_lines(sg.to_dict()), nodes, sg.source_ids, sg.sink_ids


def job_graph_dump(env: StreamExecutionEnvironment) -> Any:
    """The JobGraph's stable JSON (chains, edges, slot groups, regions), minus lines."""
    return _without_lines(env.get_job_graph().to_dict())


def assert_same_graphs(script_env: StreamExecutionEnvironment,
                       program_env: StreamExecutionEnvironment) -> None:
    """Same transformations, StreamGraph and JobGraph (user functions aside)."""
    assert structure(script_env) == structure(program_env)
    assert stream_graph_dump(script_env) == stream_graph_dump(program_env)
    assert job_graph_dump(script_env) == job_graph_dump(program_env)
