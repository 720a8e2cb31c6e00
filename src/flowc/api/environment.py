"""``StreamExecutionEnvironment``: PyFlink's entry point, building transformations."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from flowc.errors import ApiError, ConfigError, Span
from flowc.operators import (
    CollectionSource,
    FileSource,
    KafkaSource,
    SequenceSource,
    SocketSource,
    SourceSpec,
    TextLineFileSource,
)
from flowc.transformations import (
    Config,
    Program,
    RuntimeExecutionMode,
    SourceTransformation,
    Transformation,
    resolve_mode,
    unbounded_sources,
)
from flowc.windowing import WatermarkStrategy

if TYPE_CHECKING:
    from flowc.api.config import ExecutionConfig
    from flowc.api.stream import DataStream
    from flowc.chaining.execution_graph import ExecutionGraph
    from flowc.chaining.job_graph import JobGraph
    from flowc.planner.stream_graph import StreamGraph

UPPER_BOUND_MAX_PARALLELISM = 1 << 15

_FLOWC_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _Capture:
    """Environments created while a Python program runs under ``capture_environments``."""

    def __init__(self, dry_run: bool, configure: Callable[[Any], None] | None = None,
                 run_options: dict[str, Any] | None = None,
                 on_result: Callable[[Any], None] | None = None) -> None:
        self.dry_run = dry_run
        # ``flowc run -p/--set`` act as cluster defaults: applied when an environment is
        # created, so the program's own set_parallelism() etc. still win (as with Flink's
        # ``flink run -p``).
        self.configure = configure
        self.run_options = run_options or {}
        self.on_result = on_result
        self.environments: list[StreamExecutionEnvironment] = []
        # What each execute() call planned (a snapshot: execute() clears the environment).
        self.jobs: list[StreamExecutionEnvironment] = []


_capture_stack: list[_Capture] = []


@contextlib.contextmanager
def capture_environments(dry_run: bool = True, *,
                         configure: Callable[[Any], None] | None = None,
                         run_options: dict[str, Any] | None = None,
                         on_result: Callable[[Any], None] | None = None) -> Iterator[_Capture]:
    """Record every environment a program creates (``flowc explain prog.py``); with
    ``dry_run`` its ``execute()`` calls plan the job but do not run it. ``configure`` is
    applied to each new environment, ``run_options`` are passed to the executor and
    ``on_result`` sees each job's result (``flowc run prog.py``)."""
    cap = _Capture(dry_run, configure, run_options, on_result)
    _capture_stack.append(cap)
    try:
        yield cap
    finally:
        _capture_stack.remove(cap)


def validate_parallelism(p: Any, *, allow_default: bool = True) -> int:
    if isinstance(p, bool) or not isinstance(p, int):
        raise ApiError(f"parallelism must be an int, got {p!r}")
    if p == -1 and allow_default:
        return p
    if p < 1:
        raise ApiError("The parallelism of an operator must be at least 1, or "
                       "ExecutionConfig.PARALLELISM_DEFAULT (use system default).")
    return p


def validate_max_parallelism(m: Any) -> int:
    """An operator's max parallelism (Flink's OperatorValidationUtils texts)."""
    if isinstance(m, bool) or not isinstance(m, int):
        raise ApiError(f"max parallelism must be an int, got {m!r}")
    if m <= 0:
        raise ApiError("The maximum parallelism must be greater than 0.")
    if m > UPPER_BOUND_MAX_PARALLELISM:
        raise ApiError(f"Maximum parallelism must be between 1 and "
                       f"{UPPER_BOUND_MAX_PARALLELISM}. Found: {m}")
    return m


@functools.lru_cache(maxsize=512)
def _positions(code: Any) -> tuple[Any, ...]:
    # Materialising co_positions() costs O(code size); programs call the API from few code
    # objects many times, so cache per code object.
    positions = getattr(code, "co_positions", None)
    return tuple(positions()) if positions is not None else ()


def user_call_span() -> Span | None:
    """The span of the innermost call made from outside the flowc package (the user's
    program line that called into the API), or None."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_FLOWC_PKG):
        frame = frame.f_back
    return None if frame is None else _frame_span(frame)


def _frame_span(frame: Any) -> Span:
    """The span of the call being executed in ``frame`` (Python >= 3.11 knows its columns)."""
    line = frame.f_lineno
    positions = _positions(frame.f_code)
    if positions:
        i = frame.f_lasti // 2
        pos = positions[i] if 0 <= i < len(positions) else None
        if pos is not None and pos[0] == line and pos[2] is not None:
            end_line = pos[1] if pos[1] is not None else line
            end_col = (pos[3] + 1) if pos[3] is not None else 0
            return Span(frame.f_code.co_filename, line, pos[2] + 1, end_line, end_col)
    return Span(frame.f_code.co_filename, line, 1)


class StreamExecutionEnvironment:
    """Collects transformations; ``get_stream_graph()`` and friends plan them.

    Like a Flink cluster environment whose ``parallelism.default`` is 1: parallelism left
    unset stays -1 in the StreamGraph and JobGraph and becomes 1 in the ExecutionGraph.
    """

    def __init__(self) -> None:
        self._transformations: dict[int, Transformation] = {}
        self._roots: list[int] = []
        self._sources: list[int] = []  # source transformation ids (AUTOMATIC's check)
        self._next_id = 1
        self._config = Config()
        self._span_stack: list[Span | None] = []
        # Per operator: side-output tag id -> the type it was requested with (Flink's
        # SingleOutputStreamOperator.requestedSideOutputs).
        self._side_outputs: dict[int, dict[str, Any]] = {}

    # ------------------------------------------------------------------ configuration

    @staticmethod
    def get_execution_environment(configuration: Any = None) -> StreamExecutionEnvironment:
        env = StreamExecutionEnvironment()
        if _capture_stack:
            cap = _capture_stack[-1]
            cap.environments.append(env)
            if cap.configure is not None:
                cap.configure(env)
        return env

    def set_parallelism(self, parallelism: int) -> StreamExecutionEnvironment:
        if isinstance(parallelism, int) and not isinstance(parallelism, bool) \
                and parallelism < 1 and parallelism != -1:
            # Flink's ExecutionConfig.setParallelism (the environment's own text).
            raise ApiError("Parallelism must be at least one, or "
                           "ExecutionConfig.PARALLELISM_DEFAULT (use system default).")
        self._config = dataclasses.replace(
            self._config, parallelism=validate_parallelism(parallelism))
        return self

    def get_parallelism(self) -> int:
        return self._config.parallelism

    def set_max_parallelism(self, max_parallelism: int) -> StreamExecutionEnvironment:
        m = max_parallelism
        if isinstance(m, bool) or not isinstance(m, int):
            raise ApiError(f"max parallelism must be an int, got {m!r}")
        if not 0 < m <= UPPER_BOUND_MAX_PARALLELISM:
            # Flink's StreamExecutionEnvironment.setMaxParallelism text (the operator-level
            # setter words it differently).
            raise ApiError("maxParallelism is out of bounds 0 < maxParallelism <= "
                           f"{UPPER_BOUND_MAX_PARALLELISM}. Found: {m}")
        self._config = dataclasses.replace(self._config, max_parallelism=m)
        return self

    def get_max_parallelism(self) -> int:
        return self._config.max_parallelism

    def disable_operator_chaining(self) -> StreamExecutionEnvironment:
        self._config = dataclasses.replace(self._config, chaining_enabled=False)
        return self

    def is_chaining_enabled(self) -> bool:
        return self._config.chaining_enabled

    def set_runtime_mode(self, mode: RuntimeExecutionMode) -> StreamExecutionEnvironment:
        if not isinstance(mode, RuntimeExecutionMode):
            raise ApiError(f"runtime mode must be a RuntimeExecutionMode, got {mode!r}")
        # AUTOMATIC stays until the sources are known (see ``config``).
        self._config = dataclasses.replace(self._config, mode=mode)
        return self

    def set_option(self, key: str, value: str) -> StreamExecutionEnvironment:
        opts = dict(self._config.options)
        opts[key] = value
        self._config = dataclasses.replace(self._config, options=tuple(sorted(opts.items())))
        return self

    def set_job_name(self, name: str) -> StreamExecutionEnvironment:
        self._config = dataclasses.replace(self._config, job_name=name)
        return self

    @property
    def config(self) -> Config:
        """The settings, AUTOMATIC resolved as Flink does (STREAMING when a source is
        unbounded, else BATCH) over the sources declared so far; the StreamGraph generator
        resolves it again over the sources its sinks read."""
        if self._config.mode is not RuntimeExecutionMode.AUTOMATIC:
            return self._config
        # Only the sources are looked at: this runs for every operator added.
        sources = {i: self._transformations[i] for i in self._sources}
        return resolve_mode(self._config, bool(unbounded_sources(sources)))

    def get_config(self) -> ExecutionConfig:
        from flowc.api.config import ExecutionConfig

        return ExecutionConfig(self)

    # ------------------------------------------------------------------ sources

    def from_collection(self, collection: Iterable[Any], type_info: Any = None) -> DataStream:
        from flowc.api.typed import converted

        values = converted(collection, type_info)
        t = self._new_source(CollectionSource(values), None, type_info, parallelism=1)
        return self._stream(t.id)

    def from_sequence(self, start: int, end: int) -> DataStream:
        if start > end:
            raise ApiError("Start of sequence must not be greater than the end")
        return self._stream(self._new_source(SequenceSource(int(start), int(end)), None, None).id)

    def socket_text_stream(self, hostname: str, port: int, delimiter: str = "\n",
                           max_retry: int = 0) -> DataStream:
        """Lines from a TCP server, as Flink's ``socketTextStream``: the legacy, non-parallel
        ``Socket Stream`` source (parallelism 1), unbounded (the job runs on the streaming
        executor). Only the line delimiter ``\\n`` is supported (Spark's socket source
        splits lines), and no reconnecting (``max_retry`` 0)."""
        if not isinstance(hostname, str) or not hostname:
            raise ApiError(f"socket_text_stream needs a host name, got {hostname!r}")
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            # Flink's checkArgument text (isValidClientPort)
            raise ApiError("port is out of range")
        if delimiter != "\n":
            raise ApiError(f"socket_text_stream supports the delimiter '\\n' only, got "
                           f"{delimiter!r}")
        if max_retry != 0:
            raise ApiError("socket_text_stream does not reconnect: max_retry must be 0")
        from flowc.common.typeinfo import Types

        t = self._new_source(SocketSource(hostname, port), None, Types.STRING(), parallelism=1)
        return self._stream(t.id)

    def from_source(self, source: SourceSpec, watermark_strategy: WatermarkStrategy | None,
                    source_name: str, type_info: Any = None) -> DataStream:
        """Any :class:`SourceSpec`. As in Flink, the source operator applies the watermark
        strategy itself (its timestamp assigner and watermark generator): one node."""
        if not isinstance(source, SourceSpec):
            raise ApiError(f"from_source needs a flowc source, got {source!r}")
        if watermark_strategy is not None and not isinstance(watermark_strategy,
                                                              WatermarkStrategy):
            raise ApiError(f"from_source needs a WatermarkStrategy, got {watermark_strategy!r}")
        strategy = (watermark_strategy if watermark_strategy is not None
                    and watermark_strategy.out_of_orderness is not None else None)
        if type_info is None and (isinstance(source, (TextLineFileSource, SocketSource)) or (
                isinstance(source, KafkaSource) and source.format is None)):
            from flowc.common.typeinfo import Types

            type_info = Types.STRING()  # text lines, SimpleStringSchema values: Strings
        if isinstance(source, FileSource) and source.format == "csv" and \
                not any(k == "header" for k, _ in source.options):
            # the same default as .flow and SQL: a csv file's first line names its columns
            source = dataclasses.replace(source, options=(("header", "true"),) + source.options)
        t = self._new_source(source, source_name, type_info, watermark_strategy=strategy)
        return self._stream(t.id)

    def _new_source(self, spec: SourceSpec, name: str | None, type_info: Any,
                    parallelism: int | None = None,
                    watermark_strategy: WatermarkStrategy | None = None) -> SourceTransformation:
        t = SourceTransformation(
            id=self._draw_id(), name=name or spec.default_name, source=spec,
            watermark_strategy=watermark_strategy,
            parallelism=self._config.parallelism if parallelism is None else parallelism,
            span=self._caller_span(), output_type=type_info)
        self._transformations[t.id] = t
        self._sources.append(t.id)
        return t

    # ------------------------------------------------------------------ registry (internal)

    def _draw_id(self) -> int:
        tid = self._next_id
        self._next_id += 1
        return tid

    def _add(self, t: Transformation, *, register: bool) -> Transformation:
        """Store a new transformation; ``register`` marks it as one Flink's environment
        records (operators and sinks), which the planner translates from, in order."""
        self._transformations[t.id] = t
        if register:
            self._roots.append(t.id)
        return t

    def _get(self, tid: int) -> Transformation:
        return self._transformations[tid]

    def _update(self, tid: int, **changes: Any) -> None:
        self._transformations[tid] = dataclasses.replace(self._transformations[tid], **changes)

    def _stream(self, tid: int) -> DataStream:
        from flowc.api.stream import DataStream

        return DataStream(self, tid)

    @contextlib.contextmanager
    def at(self, span: Span | None) -> Iterator[None]:
        """Attribute transformations created inside to ``span`` (used by the .flow and SQL
        front ends so planner errors point at script lines)."""
        self._span_stack.append(span)
        try:
            yield
        finally:
            self._span_stack.pop()

    def _caller_span(self) -> Span | None:
        if self._span_stack:
            return self._span_stack[-1]
        return user_call_span()

    # ------------------------------------------------------------------ graphs

    def program(self) -> Program:
        """The immutable snapshot of what was built so far."""
        return Program(self._config, dict(self._transformations), tuple(self._roots),
                       self._next_id)

    def get_stream_graph(self) -> StreamGraph:
        from flowc.planner import generate_stream_graph

        return generate_stream_graph(self.program())

    def get_job_graph(self) -> JobGraph:
        from flowc.chaining import create_job_graph

        return create_job_graph(self.get_stream_graph())

    def get_execution_graph(self, default_parallelism: int = 1) -> ExecutionGraph:
        from flowc.chaining import build_execution_graph

        return build_execution_graph(self.get_job_graph(), default_parallelism)

    def get_execution_plan(self) -> str:
        from flowc.explain.plan_json import execution_plan_json

        return execution_plan_json(self.get_stream_graph())

    def _take_job(self) -> StreamExecutionEnvironment:
        """A copy of this environment holding what was built so far, which is then cleared:
        PyFlink's ``execute()`` generates the StreamGraph with ``clear_transformations=True``,
        so a second ``execute()`` runs only what was added after the first. Transformation
        ids keep counting (Flink's counter is global)."""
        job = StreamExecutionEnvironment()
        job._transformations = dict(self._transformations)
        job._roots = list(self._roots)
        job._sources = list(self._sources)
        job._next_id = self._next_id
        job._config = self._config
        job._side_outputs = {k: dict(v) for k, v in self._side_outputs.items()}
        self._roots = []
        return job

    def execute(self, job_name: str | None = None) -> Any:
        """Run the job on the Spark executor and return its result (collected outputs and
        per-vertex counts). Like PyFlink, it clears the environment's transformations."""
        cap = _capture_stack[-1] if _capture_stack else None
        if cap is not None and cap.dry_run:
            job = self._take_job()
            job.get_job_graph()  # plan errors still surface
            cap.jobs.append(job)
            return None
        try:
            from flowc.executor import run_job_graph
        except ImportError as e:  # pragma: no cover - only before the executor exists
            raise ConfigError("no executor is available in this build of flowc") from e
        graph = self._take_job().get_job_graph()
        options = dict(cap.run_options) if cap else {}
        from flowc.executor.streaming import unbounded_sources

        if unbounded_sources(graph):  # runs until SIGINT / SIGTERM, as PyFlink's would
            from flowc.executor.streaming.runner import run_until_stopped

            result = run_until_stopped(graph, job_name=job_name or self._config.job_name,
                                       **options)
        else:
            options.pop("checkpoint", None)
            options.pop("trigger_ms", None)
            result = run_job_graph(graph, job_name=job_name or self._config.job_name,
                                   **options)
        if cap is not None and cap.on_result is not None:
            cap.on_result(result)
        return result
