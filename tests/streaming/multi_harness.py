"""Shared by the test_streaming_multi_* tests: Python API jobs over several text-line file
sources (``key,timestamp,value`` lines), streamed from monitored directories one file per
source and micro-batch, against the reference executor's STREAMING run over the same
files read as bounded sources."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from flowc.executor.streaming.runner import StreamStats

from .harness import TRIGGER_MS, run_feeding

SENTINEL = 1_000_000_000_000
FILES = 4  # files per source before the sentinels


def strategy(idle_ms: int | None = None) -> Any:
    from flowc.common import WatermarkStrategy
    from flowc.datastream import Duration

    s = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(1000)) \
        .with_timestamp_assigner(lambda line, _: int(line.split(",")[1]))
    return s if idle_ms is None else s.with_idleness(Duration.of_millis(idle_ms))


def parse(line: str) -> tuple[str, int, int]:
    k, ts, v = line.split(",")
    return k, int(ts), int(v)


def graph(dirs: list[Path], monitored: bool, build: Callable[..., Any],
          bounded: tuple[int, ...] = (), idle_ms: int | None = None) -> Any:
    """``build(*streams)`` over one stream of parsed lines per directory (sentinel lines
    dropped after the watermarks); ``bounded``: sources never monitored."""
    from flowc.datastream import Duration, RuntimeExecutionMode, StreamExecutionEnvironment
    from flowc.datastream.connectors.file_system import FileSource, StreamFormat

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
    streams = []
    for i, d in enumerate(dirs):
        b = FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(d))
        if monitored and i not in bounded:
            b = b.monitor_continuously(Duration.of_millis(100))
        s = env.from_source(b.build(), strategy(idle_ms), f"in{i}")
        streams.append(s.filter(lambda line: not line.startswith("zz")).map(parse))
    build(*streams).print()
    return env.get_job_graph()


def lines(source: int, k: int) -> list[str]:
    """File ``k`` of source ``source``: 12 lines, timestamps within [3000k, 3000k + 2500)."""
    return [f"k{(j * 7 + k + source) % 4},{k * 3000 + (j * 397 + source * 211) % 2500},"
            f"{source * 100 + j}" for j in range(12)]


def land(d: Path, name: str, text: list[str]) -> None:
    tmp = d / f".{name}"
    tmp.write_text("\n".join(text) + "\n")
    tmp.rename(d / name)


def sentinels(d: Path) -> None:
    for i in range(2):  # one per source subtask
        land(d, f"zz{i}.txt", [f"zz,{SENTINEL},0"])


def stream(tmp: Path, jg: Any, feed: Callable[[Callable[[int], int]], None],
           ckpt: Path | None = None, trigger_ms: int = TRIGGER_MS) -> StreamStats:
    """Run ``jg`` while ``feed(wait)`` lands files (``wait(n)``: until completed batches
    read ``n`` files of the unbounded sources in all); stop when it returns."""
    return run_feeding(jg, ckpt or tmp / "ck", lambda progress: feed(progress.files),
                       trigger_ms=trigger_ms)


def dirs(tmp: Path, n: int) -> list[Path]:
    out = []
    for i in range(n):
        d = tmp / f"in{i}"
        d.mkdir()
        out.append(d)
    return out


def differential(tmp: Path, build: Callable[..., Any], n: int = 2,
                 bounded: tuple[int, ...] = ()) -> tuple[list[str], list[str]]:
    """(streamed printed lines, reference printed lines), both sorted."""
    from flowc.executor import run_reference

    ds = dirs(tmp, n)
    for i in bounded:
        land(ds[i], "all.txt", lines(i, 0) + lines(i, 1))
    live = [i for i in range(n) if i not in bounded]

    def feed(wait: Callable[[int], None]) -> None:
        for k in range(FILES):
            for i in live:
                land(ds[i], f"f{k:03d}.txt", lines(i, k))
            wait((k + 1) * len(live))
        for i in live:
            sentinels(ds[i])
        wait((FILES + 2) * len(live))

    stats = stream(tmp, graph(ds, True, build, bounded), feed)
    reference = run_reference(graph(ds, False, build))
    return sorted(stats.printed), sorted(reference.printed)
