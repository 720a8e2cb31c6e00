"""The Spark executor: JobGraph -> RDDs, one mapPartitions per JobVertex."""

from flowc.executor.spark.runner import run_on_spark

__all__ = ["run_on_spark"]
