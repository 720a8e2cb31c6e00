"""The transformation IR: what the Python API, the .flow lowering and SQL all produce.

Transformations are frozen. The API keeps them in a registry and replaces a node (with
``dataclasses.replace``) when a setter such as ``name()`` is called, exactly where Flink would
mutate its Transformation object. ``Program`` is the immutable snapshot the planner consumes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from flowc.errors import Span
from flowc.operators import OperatorSpec, SinkSpec, SourceSpec
from flowc.windowing import WatermarkStrategy


class RuntimeExecutionMode(Enum):
    STREAMING = "STREAMING"
    BATCH = "BATCH"
    AUTOMATIC = "AUTOMATIC"


class ChainingStrategy(Enum):
    ALWAYS = "ALWAYS"
    NEVER = "NEVER"
    HEAD = "HEAD"
    HEAD_WITH_SOURCES = "HEAD_WITH_SOURCES"


class PartitionerKind(Enum):
    """Flink's StreamPartitioner classes; ``value`` is their ``toString()``."""

    FORWARD = "FORWARD"
    REBALANCE = "REBALANCE"
    RESCALE = "RESCALE"
    SHUFFLE = "SHUFFLE"
    BROADCAST = "BROADCAST"
    GLOBAL = "GLOBAL"
    HASH = "HASH"
    CUSTOM = "CUSTOM"

    @property
    def is_pointwise(self) -> bool:
        return self in (PartitionerKind.FORWARD, PartitionerKind.RESCALE)


@dataclass(frozen=True, eq=False)
class KeySelector:
    """Extracts the key of a record. ``fields`` is set when the key is a projection of named
    fields (the DSL and SQL), which lets the executor inline it; ``fn`` always works."""

    fn: Callable[[Any], Any]
    fields: tuple[str, ...] = ()
    description: str = ""

    def __call__(self, value: Any) -> Any:
        return self.fn(value)


@dataclass(frozen=True)
class Partitioner:
    kind: PartitionerKind
    key: KeySelector | None = None
    # partition_custom: partition(key, num_partitions) -> int
    custom: Callable[[Any, int], int] | None = None

    def __post_init__(self) -> None:
        if self.kind is PartitionerKind.HASH and self.key is None:
            raise ValueError("HASH partitioner needs a key selector")
        if self.kind is PartitionerKind.CUSTOM and (self.custom is None or self.key is None):
            raise ValueError("CUSTOM partitioner needs a partitioner and a key selector")

    def __str__(self) -> str:
        return self.kind.value


@dataclass(frozen=True, eq=False)
class OutputTag:
    """A side-output tag; equal by id, like Flink's (id + type)."""

    tag_id: str
    type_info: Any = None

    def __post_init__(self) -> None:
        if not isinstance(self.tag_id, str) or not self.tag_id:
            raise ValueError("OutputTag id must not be empty.")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OutputTag) and other.tag_id == self.tag_id

    def __hash__(self) -> int:
        return hash(("OutputTag", self.tag_id))

    def __repr__(self) -> str:
        return f"OutputTag({self.tag_id!r})"


@dataclass(frozen=True, kw_only=True)
class Transformation:
    """Common fields. ``parallelism``/``max_parallelism`` -1 mean "not set"."""

    id: int
    name: str
    parallelism: int = -1
    max_parallelism: int = -1
    uid: str | None = None
    uid_hash: str | None = None
    slot_sharing_group: str | None = None
    chaining: ChainingStrategy = ChainingStrategy.ALWAYS
    span: Span | None = None
    # Opaque to the planner: the DSL/SQL schema of the output, or a PyFlink type hint.
    output_type: Any = None
    description: str = ""

    @property
    def inputs(self) -> tuple[int, ...]:
        return ()


@dataclass(frozen=True, kw_only=True)
class SourceTransformation(Transformation):
    source: SourceSpec
    # Flink's fromSource(source, watermarkStrategy, name): the source operator itself assigns
    # timestamps and generates watermarks (no separate operator). None: no watermarks.
    watermark_strategy: WatermarkStrategy | None = None


@dataclass(frozen=True, kw_only=True)
class OneInputTransformation(Transformation):
    input: int
    operator: OperatorSpec
    key: KeySelector | None = None

    @property
    def inputs(self) -> tuple[int, ...]:
        return (self.input,)


@dataclass(frozen=True, kw_only=True)
class TwoInputTransformation(Transformation):
    input1: int
    input2: int
    operator: OperatorSpec
    key1: KeySelector | None = None
    key2: KeySelector | None = None

    @property
    def inputs(self) -> tuple[int, ...]:
        return (self.input1, self.input2)


@dataclass(frozen=True, kw_only=True)
class UnionTransformation(Transformation):
    union_inputs: tuple[int, ...]

    @property
    def inputs(self) -> tuple[int, ...]:
        return self.union_inputs


@dataclass(frozen=True, kw_only=True)
class PartitionTransformation(Transformation):
    input: int
    partitioner: Partitioner

    @property
    def inputs(self) -> tuple[int, ...]:
        return (self.input,)


@dataclass(frozen=True, kw_only=True)
class SideOutputTransformation(Transformation):
    input: int
    tag: OutputTag

    @property
    def inputs(self) -> tuple[int, ...]:
        return (self.input,)


@dataclass(frozen=True, kw_only=True)
class SinkTransformation(Transformation):
    input: int
    sink: SinkSpec
    # Flink 2.x expands a v2 sink into a writer node named "<name>: Writer"; a legacy
    # SinkFunction becomes a node named "Sink: <name>".
    legacy: bool = False

    @property
    def inputs(self) -> tuple[int, ...]:
        return (self.input,)


@dataclass(frozen=True)
class Config:
    """Environment settings that the planner reads."""

    parallelism: int = -1
    max_parallelism: int = -1
    chaining_enabled: bool = True
    mode: RuntimeExecutionMode = RuntimeExecutionMode.STREAMING
    job_name: str = "flowc job"
    # Free-form options (``set key = value``) for later stages.
    options: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Program:
    """An immutable snapshot of everything the API built: the planner's input.

    ``transformations`` maps id -> node; ``roots`` lists, in creation order, the transformations
    Flink registers with the environment (operators and sinks) and translates from.
    """

    config: Config
    transformations: dict[int, Transformation] = field(default_factory=dict)
    roots: tuple[int, ...] = ()
    # The next transformation id: translation draws ids from here, as Flink's does from its
    # global counter (virtual partition / side-output nodes and v2 sink writers).
    next_id: int = 0


UNBOUNDED_IN_BATCH = ("Detected an UNBOUNDED source with the 'execution.runtime-mode' set to "
                      "'BATCH'. This combination is not allowed, please set the "
                      "'execution.runtime-mode' to STREAMING or AUTOMATIC")


def unbounded_sources(transformations: dict[int, Transformation],
                      roots: tuple[int, ...] | None = None) -> list[SourceTransformation]:
    """The CONTINUOUS_UNBOUNDED sources among the transitive inputs of ``roots`` (Flink's
    ``StreamGraphGenerator.existsUnboundedSource``); ``roots`` None: every source."""
    if roots is None:
        seen = set(transformations)
    else:
        seen = set()
        stack = list(roots)
        while stack:
            tid = stack.pop()
            if tid not in seen:
                seen.add(tid)
                stack.extend(transformations[tid].inputs)
    return [t for tid, t in sorted(transformations.items())
            if tid in seen and isinstance(t, SourceTransformation) and not t.source.bounded]


def resolve_mode(config: Config, unbounded: bool) -> Config:
    """AUTOMATIC is STREAMING when a source is unbounded, else BATCH (Flink's
    ``shouldExecuteInBatchMode``)."""
    if config.mode is not RuntimeExecutionMode.AUTOMATIC:
        return config
    import dataclasses

    mode = RuntimeExecutionMode.STREAMING if unbounded else RuntimeExecutionMode.BATCH
    return dataclasses.replace(config, mode=mode)

