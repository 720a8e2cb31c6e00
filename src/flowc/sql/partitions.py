"""``CREATE TABLE t (...) PARTITIONED BY (dt) WITH ('connector' = 'filesystem', ...,
'sink.partition-commit.policy.kind' = 'success-file')``: the partition columns and the
partition-commit options of a filesystem table, checked as Flink checks them.

flowc commits every partition when the job has finished (a bounded job; Flink commits them
all at the end of input too, whichever trigger is set), so the trigger and its delay,
time zone and time extractor are accepted and have nothing to change; what flowc cannot do
(the 'metastore' policy, which needs a Hive table, and Java classes: 'custom' policies and
time extractors) gets a positioned error naming it.
"""

from __future__ import annotations

from sqlglot import exp

from flowc.errors import FlowNameError, FlowSyntaxError, Span, UnsupportedError, did_you_mean
from flowc.parser import ast as A

OPTIONS = frozenset({
    "sink.partition-commit.policy.kind", "sink.partition-commit.success-file.name",
    "sink.partition-commit.trigger", "sink.partition-commit.delay",
    "sink.partition-commit.watermark-time-zone", "sink.partition-commit.policy.class",
    "partition.default-name", "partition.time-extractor.kind",
    "partition.time-extractor.timestamp-pattern",
    "partition.time-extractor.timestamp-formatter"})
_TRIGGERS = ("process-time", "partition-time")


def partition_columns(prop: exp.PartitionedByProperty, names: tuple[str, ...],
                      spans: object) -> tuple[str, ...]:
    cols = prop.this.expressions if isinstance(prop.this, exp.Schema) else [prop.this]
    out: list[str] = []
    for c in cols:
        name = c.name
        at = spans(c)  # type: ignore[operator]
        if not isinstance(c, (exp.Identifier, exp.Column)) or not name:
            raise FlowSyntaxError("PARTITIONED BY takes column names", at)
        if name not in names:
            raise FlowNameError(f"Partition column '{name}' not defined in the table schema. "
                                f"Available columns: [{', '.join(repr(n) for n in names)}]",
                                at, hint=did_you_mean(name, names))
        if name in out:
            raise FlowSyntaxError(f"partition column '{name}' is listed twice", at)
        out.append(name)
    return tuple(out)


def sink_options(options: dict[str, str], spans: dict[str, Span], partitioned: bool,
                 span: Span) -> tuple[A.Setting, ...]:
    """The .flow sink options (success_file, default_partition) of a filesystem table's
    partition options, after checking them all."""
    def at(key: str) -> Span:
        return spans.get(key, span)

    out: list[A.Setting] = []
    kinds = [k.strip() for k in options.get("sink.partition-commit.policy.kind", "").split(",")
             if k.strip()]
    for kind in kinds:
        where = at("sink.partition-commit.policy.kind")
        if kind == "metastore":
            raise UnsupportedError("Can not configure a 'metastore' partition commit policy "
                                   "for a file system table. You can only configure "
                                   "'metastore' partition commit policy for a hive table.",
                                   where, hint="use 'success-file'")
        if kind == "custom":
            raise UnsupportedError("the 'custom' partition commit policy (a Java class) is "
                                   "not supported", where, hint="use 'success-file'")
        if kind != "success-file":
            raise UnsupportedError(f"Unsupported partition commit policy: '{kind}'", where,
                                   hint=did_you_mean(kind, ["success-file", "metastore"]) or
                                   "flowc supports 'success-file'")
    trigger = options.get("sink.partition-commit.trigger")
    if trigger is not None and trigger not in _TRIGGERS:
        raise UnsupportedError(f"Could not parse value '{trigger}' for key "
                               "'sink.partition-commit.trigger'.",
                               at("sink.partition-commit.trigger"),
                               hint=did_you_mean(trigger, _TRIGGERS) or
                               "use 'process-time' or 'partition-time'")
    for key in ("sink.partition-commit.policy.class", "partition.time-extractor.kind"):
        if key in options and (key.endswith(".class") or options[key] != "default"):
            raise UnsupportedError(f"'{key}' = '{options[key]}' (a Java class) is not "
                                   "supported", at(key))
    used = [k for k in options if k in OPTIONS]
    if used and not partitioned:
        # Flink accepts them and commits nothing: a table without partitions has none
        return ()
    if "success-file" in kinds:
        name = options.get("sink.partition-commit.success-file.name", "_SUCCESS")
        s = at("sink.partition-commit.success-file.name")
        out.append(A.Setting("success_file", name, s, s, s))
    if "partition.default-name" in options:
        s = at("partition.default-name")
        out.append(A.Setting("default_partition", options["partition.default-name"], s, s, s))
    return tuple(out)
