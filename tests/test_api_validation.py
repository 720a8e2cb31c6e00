"""The API rejects what Flink's Java API rejects, with Flink's texts."""

from __future__ import annotations

import pytest

from flowc.datastream import OutputTag
from flowc.errors import ApiError, PlanError
from planner_helpers import env, inc, key

# ------------------------------------------------------------------ API validation


def test_api_validation_messages() -> None:
    e = env()
    with pytest.raises(ApiError, match="must be at least 1"):
        e.from_sequence(0, 1).set_parallelism(0)
    s = e.from_sequence(0, 1)
    with pytest.raises(ApiError, match="only be called on an operator"):
        s.union(s).name("u")


def _api_error(call) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(ApiError) as info:
        call()
    return info.value.message


def test_api_validation_texts_are_flinks() -> None:
    """Each text is what Flink 2.3 threw for the same call (a Java probe against the 2.3 jars).
    """
    e = env()
    src = e.from_sequence(0, 9)
    assert _api_error(lambda: e.set_parallelism(0)) == (
        "Parallelism must be at least one, or ExecutionConfig.PARALLELISM_DEFAULT "
        "(use system default).")
    assert _api_error(lambda: src.map(inc).set_parallelism(0)) == (
        "The parallelism of an operator must be at least 1, or "
        "ExecutionConfig.PARALLELISM_DEFAULT (use system default).")
    for bad in (0, 40000):
        assert _api_error(lambda b=bad: e.set_max_parallelism(b)) == (
            f"maxParallelism is out of bounds 0 < maxParallelism <= 32768. Found: {bad}")
    assert _api_error(lambda: src.map(inc).set_max_parallelism(0)) == (
        "The maximum parallelism must be greater than 0.")
    assert _api_error(lambda: src.map(inc).set_max_parallelism(40000)) == (
        "Maximum parallelism must be between 1 and 32768. Found: 40000")
    assert _api_error(lambda: e.from_sequence(3, 1)) == (
        "Start of sequence must not be greater than the end")
    assert _api_error(lambda: src.map(inc).uid("")) == "Empty string operator uid is not allowed"
    sink = src.add_discarding_sink()
    assert _api_error(lambda: sink.set_uid_hash("0123456789abcdef0123456789abcdef")) == (
        "Cannot set a custom UID hash on a non-legacy sink")
    m = src.map(inc)
    m.get_side_output(OutputTag("x", int))
    m.get_side_output(OutputTag("x", int))  # the same tag again is fine
    assert _api_error(lambda: m.get_side_output(OutputTag("x", str))) == (
        "A side output with a matching id was already requested with a different type. This "
        "is not allowed, side output ids need to be unique.")
    assert _api_error(lambda: src.key_by(lambda v: [v], key_type=list)) == (
        "Type list cannot be used as key. Contained UNSUPPORTED key types: list. Look at the "
        "keyBy() documentation for the conditions a type has to satisfy in order to be "
        "eligible for a key.")
    from flowc.types import INT, array_of

    assert _api_error(lambda: src.key_by(lambda v: [v], key_type=array_of(INT))).startswith(
        "Type array<int> cannot be used as key.")
    src.key_by(lambda v: (v, v), key_type=tuple)  # tuples are keys (Flink Tuples)


def test_side_output_only_from_operators() -> None:
    # Java has getSideOutput only on SingleOutputStreamOperator: not on a union, a
    # partitioned stream or another side output.
    e = env()
    s = e.from_sequence(0, 1)
    tag = OutputTag("t")
    for stream in (s.union(s), s.rebalance(), s.map(inc).get_side_output(tag)):
        assert "only be called on an operator" in _api_error(
            lambda st=stream: st.get_side_output(tag))
    # A side output of a source or of an operator that never emits one is an (empty) stream,
    # as in Flink.
    s.get_side_output(tag).add_discarding_sink()
    s.map(inc).get_side_output(tag).add_discarding_sink()
    e.get_job_graph()


def test_window_with_process_function_may_emit_any_side_output() -> None:
    from flowc.datastream import ProcessWindowFunction, TumblingEventTimeWindows

    class Emit(ProcessWindowFunction):
        def process(self, key, context, elements):  # type: ignore[no-untyped-def]
            context.output(OutputTag("extra"), key)
            yield from elements

    late = OutputTag("late")
    e = env()
    w = (e.from_sequence(0, 9).key_by(key).window(TumblingEventTimeWindows.of(1000))
         .side_output_late_data(late))
    with_fn = w.reduce(lambda a, b: a + b, window_function=Emit())
    with_fn.get_side_output(OutputTag("extra")).add_discarding_sink()
    e.get_job_graph()  # the window function emits "extra": not a typo
    plain = w.reduce(lambda a, b: a + b)
    plain.get_side_output(OutputTag("typo")).add_discarding_sink()
    with pytest.raises(PlanError, match="its late data goes to 'late'"):
        e.get_job_graph()


def test_stream_classes_keep_their_import_paths() -> None:
    """flowc.api.stream re-exports the classes split into data_stream / keyed / connected;
    flowc.datastream exports the same objects."""
    import flowc.api.stream as stream
    import flowc.datastream as ds
    from flowc.api.connected import ConnectedStreams, JoinedStreams
    from flowc.api.data_stream import DataStream, DataStreamSink
    from flowc.api.keyed import KeyedStream, WindowedStream

    assert set(stream.__all__) >= {"DataStream", "DataStreamSink", "KeyedStream",
                                   "WindowedStream", "ConnectedStreams", "JoinedStreams",
                                   "IntervalJoin", "IntervalJoined", "CoGroupWindowFunction"}
    for cls in (DataStream, DataStreamSink, KeyedStream, WindowedStream, ConnectedStreams,
                JoinedStreams):
        assert getattr(stream, cls.__name__) is cls
    for name in ("DataStream", "DataStreamSink", "KeyedStream", "WindowedStream",
                 "ConnectedStreams"):
        assert getattr(ds, name) is getattr(stream, name)
    e = env()
    s = e.from_sequence(0, 9)
    assert type(s.key_by(key)) is KeyedStream
    assert type(s.key_by(key).window(
        ds.TumblingEventTimeWindows.of(1000))) is WindowedStream
    assert type(s.connect(s)) is ConnectedStreams and type(s.join(s)) is JoinedStreams
