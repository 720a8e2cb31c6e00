"""Shared by the rolling aggregate tests (test_columnar_rolling_distinct.py,
test_columnar_changelog.py): a job's vectorised rolling vertex run in this process,
its input fed in chunks - what carries state from one chunk to the next."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from flowc.chaining.job_graph import JobGraph
from flowc.executor.arrow import convert
from flowc.executor.arrow.chain import ChainProgram
from flowc.executor.arrow.plan import plan_members
from flowc.executor.arrow.rolling import compile_start


def rolling_vertex(job: JobGraph) -> tuple[Any, list[Any]]:
    """The columnar plan's ``rolling_start`` member and the members of the vertex that
    starts with the rolling aggregate, its sink wired to slot 0 (the runner's wiring)."""
    members = plan_members(job)
    assert isinstance(members, dict), members
    (start,) = [m for ms in members.values() for m in ms if m.kind == "rolling_start"]
    (vertex,) = [ms for ms in members.values() if ms[0].kind == "rolling"]
    return start, [dataclasses.replace(m, outputs=[("slot", 0)]) if m.kind == "sink" else m
                   for m in vertex]


def run_rolling(start: Any, vertex: list[Any], values: list[tuple[Any, ...]],
                bounds: list[int], streaming: bool) -> list[tuple[Any, int]]:
    """``vertex`` fed ``values`` (rows of ``start``'s input, the timestamp last) in the
    chunks ``values[bounds[i]:bounds[i + 1]]`` through ``start``, each chunk followed by a
    watermark in STREAMING: the records it emitted, with their timestamps, in order."""
    got: list[tuple[Any, int]] = []

    def emit(_slot: int, c: Any) -> None:
        got.extend(zip(c.rows(), c.timestamps()))
    program = ChainProgram(vertex, 0, 1, 128, "t", emit, streaming)
    step = compile_start(start.spec, convert.arrow_schema(start.out_schema))
    in_schema = convert.arrow_schema(start.in_schema)
    for lo, hi in zip(bounds, bounds[1:]):
        part = values[lo:hi]
        chunk = step(convert.from_rows(part, [r[-1] for r in part], in_schema))
        marks = (np.asarray([chunk.num_rows], np.int64), np.asarray([hi], np.int64))
        program.push(vertex[0].nid, convert.Chunk(chunk.batch, chunk.ts, marks)
                     if streaming else chunk)
    program.finish()
    program.close()
    return got
