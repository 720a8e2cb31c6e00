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


def job_graph_dump(env: StreamExecutionEnvironment) -> Any:
    jg = env.get_job_graph()
    out = []
    for v in sorted(jg.vertices.values(), key=lambda v: v.head):
        out.append((v.id, v.name, v.parallelism, v.slot_sharing_group, tuple(v.chain),
                     tuple((e.source, e.ship_strategy, e.result_type) for e in v.inputs)))
    return out
