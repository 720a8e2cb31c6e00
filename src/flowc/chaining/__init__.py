"""StreamGraph -> JobGraph (chaining) -> ExecutionGraph."""

from flowc.chaining.generator import create_job_graph
from flowc.chaining.job_graph import IntermediateDataSet, JobEdge, JobGraph, JobVertex
from flowc.chaining.rules import ChainBreak, chain_breaks, is_chainable


def build_execution_graph(job_graph: JobGraph, default_parallelism: int = 1):  # type: ignore[no-untyped-def]
    from flowc.chaining.execution_graph import build_execution_graph as build

    return build(job_graph, default_parallelism)


__all__ = [
    "ChainBreak", "IntermediateDataSet", "JobEdge", "JobGraph", "JobVertex",
    "build_execution_graph", "chain_breaks", "create_job_graph", "is_chainable",
]
