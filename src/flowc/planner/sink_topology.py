"""Flink's expansion of a v2 sink that has a committer (``SupportsCommitter``, e.g. FileSink).

Flink 2.3's ``SinkTransformationTranslator`` turns ``sinkTo(FileSink)`` into a ``Writer``
transformation, a FORWARD partition with exchange mode BATCH (the "failover region") and a
``Committer`` transformation, drawing their three ids in that order while the sink is
translated, plus one virtual id when the partition is translated. The nodes are
``<name>: Writer`` and ``<name>: Committer``; both take the sink's parallelism, max
parallelism, slot sharing group and chaining strategy; the Writer keeps the sink's uid, the
Committer gets ``Sink Committer: <uid>``. In STREAMING the BATCH exchange is reset to
UNDEFINED, so the Committer chains to the Writer; in BATCH the edge blocks.

flowc plans the Committer only when the job sets the option ``flowc.sink_committers = true``:
the executors commit files themselves at the end of the job and do not run a Committer node
yet (docs/flink-differences.md, "file sinks").
"""

from __future__ import annotations

from dataclasses import dataclass

from flowc.operators import FileSink, KafkaSink, OperatorSpec, RowFormatFileSink, SinkSpec
from flowc.transformations import Config

SINK_COMMITTERS_OPTION = "flowc.sink_committers"


@dataclass(frozen=True, eq=False)
class SinkCommitterOp(OperatorSpec):
    """The Committer of a sink with a committer. Its input is the Writer's committables (in
    flowc's executors the Writer emits none); it emits nothing."""

    sink: SinkSpec

    @property
    def default_name(self) -> str:
        return "Committer"


def has_committer(sink: SinkSpec) -> bool:
    """Whether Flink's counterpart of ``sink`` implements ``SupportsCommitter``: FileSink
    (flowc's and PyFlink's row format) and KafkaSink do; print, discarding and collect
    sinks do not."""
    return isinstance(sink, (FileSink, RowFormatFileSink, KafkaSink))


def committers_enabled(config: Config) -> bool:
    return dict(config.options).get(SINK_COMMITTERS_OPTION, "false").lower() == "true"
