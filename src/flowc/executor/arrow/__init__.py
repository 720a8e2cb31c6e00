"""The columnar executor: operator chains over Arrow record batches on Spark (see
``runner.py``); it shares the operator runtime and the Spark plumbing of ``executor.spark``."""
