"""``write csv 'out' partitioned by dt options (success_file = '_SUCCESS')``: a file sink
writing Hive-style partition directories (``out/dt=2024-05-01/part-...``), as Flink's
filesystem sink with ``PARTITIONED BY``: the partition columns name the directories and are
left out of the files; a null or blank value goes to ``dt=__DEFAULT_PARTITION__``
(``default_partition`` renames it); ``success_file`` writes that empty file into every
partition directory once the job has finished (Flink's 'success-file' commit policy)."""

from __future__ import annotations

from flowc.errors import FlowNameError, FlowSyntaxError, FlowTypeError, did_you_mean
from flowc.operators import DEFAULT_PARTITION
from flowc.parser import ast as A
from flowc.types import Schema

PARTITION_OPTIONS = ("success_file", "default_partition")
PARTITION_TYPES = ("string", "int", "bool")


def sink_partitions(schema: Schema, step: A.FileSinkStep
                    ) -> tuple[tuple[str, ...], str | None, str, tuple[A.Setting, ...]]:
    """(partition columns, success file, default partition name, the format's options)."""
    names: list[str] = []
    for ref in step.partition_by:
        f = schema.field(ref.name)
        if f is None:
            raise FlowNameError(f"unknown field '{ref.name}' in 'partitioned by'", ref.span,
                                hint=did_you_mean(ref.name, schema.names))
        if ref.name in names:
            raise FlowSyntaxError(f"'{ref.name}' is listed twice in 'partitioned by'", ref.span)
        if f.type.kind not in PARTITION_TYPES:
            raise FlowTypeError(f"cannot partition by '{ref.name}': it is a {f.type} (partition "
                                "columns are strings, ints or bools)", ref.span,
                                hint=f"partition by a string made of it, e.g. map ..., "
                                     f"date_format({ref.name}, 'yyyy-MM-dd') as dt")
        names.append(ref.name)
    success: str | None = None
    default = DEFAULT_PARTITION
    rest: list[A.Setting] = []
    for opt in step.options:
        if opt.key not in PARTITION_OPTIONS:
            rest.append(opt)
            continue
        if not names:
            raise FlowSyntaxError(f"'{opt.key}' applies to partitioned output", opt.key_span,
                                  hint="add 'partitioned by <field>' before the options")
        if not isinstance(opt.value, str) or not opt.value or "/" in opt.value:
            raise FlowTypeError(f"{opt.key} must be a file name (a non-empty string)",
                                opt.value_span)
        if opt.key == "success_file":
            success = opt.value
        else:
            default = opt.value
    return tuple(names), success, default, tuple(rest)
