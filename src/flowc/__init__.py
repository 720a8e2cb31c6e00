"""flowc: Flink-style streaming pipelines compiled to operator chains and run on Apache Spark."""

__version__ = "0.1.0"
