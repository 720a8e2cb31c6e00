"""Unbounded jobs: which sources never end, and the executors' refusal to run them as
bounded jobs (a monitored directory read once would silently lose every later file)."""

from __future__ import annotations

from flowc.chaining.job_graph import JobGraph
from flowc.errors import UnsupportedError
from flowc.planner.stream_graph import NodeKind, StreamNode


def unbounded_sources(job_graph: JobGraph) -> list[StreamNode]:
    """The job's CONTINUOUS_UNBOUNDED source nodes, in node order."""
    sg = job_graph.stream_graph
    return [n for _, n in sorted(sg.nodes.items())
            if n.kind is NodeKind.SOURCE and not getattr(n.operator, "bounded", True)]


def refuse_unbounded(job_graph: JobGraph, executor: str) -> None:
    """An executor that reads its sources to their end cannot run an unbounded source, nor
    write Kafka (only the streaming executor does)."""
    from flowc.operators import KafkaSink

    sg = job_graph.stream_graph
    for _, n in sorted(sg.nodes.items()):
        if n.kind is NodeKind.SINK and isinstance(n.operator, KafkaSink):
            raise UnsupportedError(
                f"'{n.name}' writes to Kafka; flowc writes Kafka from unbounded jobs only, "
                f"the {executor} cannot", n.span,
                hint="read an unbounded source (a monitored directory, Kafka, datagen "
                     "without a row limit) and run it with `flowc run`")
    nodes = unbounded_sources(job_graph)
    if nodes:
        n = nodes[0]
        reason = getattr(n.operator, "unbounded_reason", "it watches its directory for "
                                                          "new files")
        raise UnsupportedError(
            f"'{n.name}' is unbounded ({reason}); "
            f"the {executor} runs bounded jobs only", n.span,
            hint="run it with `flowc run` (or env.execute(), or "
                 "flowc.executor.streaming.runner.run_streaming)" +
                 (", or drop the monitor interval to read the files there once"
                  if hasattr(n.operator, "monitor_interval") else ""))
