"""The reference executor streams: a subtask consumes its channels while its producers run,
so an operator's whole output is never held, and the streamed merge takes the elements in
exactly the order of ``merge_channels`` (the rule the Spark executor uses)."""

from __future__ import annotations

import tracemalloc
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from flowc.executor import run_reference
from flowc.executor.reference_stream import BLOCKED, Channel, stream_merge
from flowc.executor.runtime.channels import merge_channels
from flowc.executor.runtime.core import Watermark

from .helpers import collect, env_for

_element = st.one_of(st.tuples(st.integers(0, 99), st.integers(0, 9)),
                     st.tuples(st.just(Watermark), st.integers(0, 50)))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_element, max_size=8), max_size=4), st.booleans(), st.data())
def test_streamed_merge_equals_merge_channels(chans: list[list[Any]], batch: bool,
                                              data: Any) -> None:
    inputs = [data.draw(st.sampled_from([1, 2])) for _ in chans]
    for c in chans:  # watermarks of one channel rise, as producers send them
        wm = [v for v in c if v[0] is Watermark]
        c[:] = [v for v in c if v[0] is not Watermark] + sorted(wm, key=lambda v: v[1])
    expected = list(merge_channels(chans, inputs, batch))
    # the elements arrive one at a time, in an order the scheduler might pick
    streams = [Channel() for _ in chans]
    left = [list(c) for c in chans]
    merged = stream_merge(streams, inputs, batch)
    got: list[Any] = []
    for item in merged:
        while item is BLOCKED:
            waiting = [i for i, c in enumerate(left) if c or not streams[i].done]
            i = data.draw(st.sampled_from(waiting))
            if left[i]:
                streams[i].append(left[i].pop(0))
            else:
                streams[i].done = True
            item = next(merged, None)
            if item is None:
                break
        if item is None:
            break
        got.append(item)
    assert got == expected


def _pad(v: int) -> str:
    return f"{v:08d}" * 128  # 1 KB


def test_outputs_are_streamed_not_held() -> None:
    n = 40_000
    env = env_for(1, chaining=False)
    collect(env.from_collection(range(n)).map(_pad).filter(lambda s: s.endswith("x")))
    jg = env.get_job_graph()
    tracemalloc.start()
    try:
        result = run_reference(jg)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert result["out"] == []
    # node at a time, the map's 40k strings of 1 KB (> 40 MB) waited for the filter
    assert peak < 15 * 1024 * 1024, peak
