"""Processing-time timers of two runtime operators in one columnar chain (a keyed process
function chained to another one over the same key, as ``reinterpretAsKeyedStream`` gives
it): at the start of a micro-batch the head's due timers fire, then the chained member's
after the records its predecessor's timers produced (``task.fire_processing_timers``: head
to tail) - so a timer the second one sets, due at once, for a record the first one's
timer produced fires in this batch, not the next -, on the columnar path as row by row;
each batch's outputs, stats and snapshots are the row path's, and the printed lines are
the reference executor's micro-batch model's with the same batch timestamps (the chained
member takes its predecessor's timer records at the batch's time: its due timers fire
before each, as the runtime polls before every element). No Spark
(``test_streaming_columnar.Driver``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flowc.api.keyed import KeyedStream
from flowc.datastream import KeyedProcessFunction
from flowc.executor.streaming.columnar import plan_columnar
from flowc.executor.streaming.plan import plan_streaming
from flowc.parser import compile_source

from .columnar_paths import Driver, model_lines, printed, row_and_columnar

SOURCE = """set parallelism = 1;
set flowc.executor = columnar;
source clicks (k string, v int, ts timestamp)
  from csv '{src}' monitor every 100ms
  watermark ts - 1s;
"""


class First(KeyedProcessFunction):
    """Each record passes on and sets a timer 500 ms on; the timer emits."""

    def process_element(self, value: Any, ctx: Any) -> Any:
        ctx.timer_service().register_processing_time_timer(
            ctx.timer_service().current_processing_time() + 500)
        yield (value[0], f"in {value[1]}")

    def on_timer(self, ts: int, ctx: Any) -> Any:
        yield (ctx.get_current_key(), f"first timer {ts}")


class Second(KeyedProcessFunction):
    """Each record passes on and sets a timer 300 ms on - one from the first function's
    timer at once: due at this batch's time -; the timer emits."""

    def process_element(self, value: Any, ctx: Any) -> Any:
        now = ctx.timer_service().current_processing_time()
        ctx.timer_service().register_processing_time_timer(
            now if "timer" in value[1] else now + 300)
        yield f"{value[0]}: {value[1]}"

    def on_timer(self, ts: int, ctx: Any) -> Any:
        yield f"{ctx.get_current_key()}: second timer {ts}"


class ChainDriver(Driver):
    def __init__(self, work: Path) -> None:
        self.work = work
        (work / "in").mkdir(exist_ok=True)
        script = compile_source(SOURCE.format(src=str(work / "in") + "/"),
                                str(work / "job.flow"))
        env = script.env
        first = script.streams["clicks"].stream.key_by(lambda r: r[0]).process(First())
        # the same key, no shuffle: the second process function chains to the first
        KeyedStream(env, first._id, env._get(first._id).key).process(Second()).print("out")
        jg = env.get_job_graph()
        self.jg, self.sg = jg, jg.stream_graph
        self.plan = plan_streaming(jg)
        self.chains = plan_columnar(jg, self.plan)  # type: ignore[assignment]


def test_a_chained_members_timers_fire_after_its_predecessors_timer_outputs(
        tmp_path: Path) -> None:
    d = ChainDriver(tmp_path)
    assert not isinstance(d.chains, str), d.chains
    kinds = [[m.kind for m in c.members] for c in d.chains.values()]
    assert ["row_op", "row_op", "sink"] in kinds, kinds
    files = []
    for b, rows in enumerate([["a,1,100", "b,2,200"], [], ["a,3,300"], [], []]):
        path = d.work / "in" / f"f{b}.csv"
        path.write_text("k,v,ts\n" + "".join(r + "\n" for r in rows))
        files.append([str(path)])
    runs = row_and_columnar(d, files)
    lines = printed(d, runs["row"])
    assert any("second timer" in line for line in lines)
    for name in ("col", "col-row", "row-col"):
        for b, (r, c) in enumerate(zip(runs["row"], runs[name])):
            assert c["sinks"] == r["sinks"], (name, b, printed(d, [c]), printed(d, [r]))
            assert c["stats"] == r["stats"], (name, b)
            assert c["snapshots"] == r["snapshots"], (name, b)
    # the micro-batch model runs the chained member at the batch's time too: its timers
    # registered at 1700, not at the previous batch's 1000, the one due at once in the batch
    assert model_lines(d.jg, files, timed=True).printed == lines
