"""Shared by the HTML plan view's tests: pages of example jobs, a DOM of a page, and
generated jobs (hostile names; 1,000 chains)."""

from __future__ import annotations

import random
from html.parser import HTMLParser
from pathlib import Path

from flowc.chaining.job_graph import JobGraph
from flowc.datastream import DataStream, StreamExecutionEnvironment
from flowc.explain import render
from flowc.parser import compile_file

ROOT = Path(__file__).parent.parent
HOSTILE = ['</script><script>window.pwned = 1</script>', '<img src=x onerror="window.pwned=2">',
           "a & b \"quoted\" 'single' <!-- -->", "]]> \u2028 \\u003c"]


class Dom(HTMLParser):
    """Elements as (tag, attrs, text) with the text directly inside each element."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str], list[str]]] = []
        self._open: list[int] = []
        self.feed(page)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}, []))
        if tag not in ("meta", "path", "rect", "br", "input"):
            self._open.append(len(self.elements) - 1)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, {k: v or "" for k, v in attrs}, []))

    def handle_endtag(self, tag: str) -> None:
        while self._open:
            i = self._open.pop()
            if self.elements[i][0] == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._open:
            self.elements[self._open[-1]][2].append(data)

    def find(self, tag: str, cls: str | None = None) -> list[tuple[dict[str, str], str]]:
        return [(a, "".join(t)) for g, a, t in self.elements
                if g == tag and (cls is None or cls in a.get("class", "").split())]


def job_graph(path: str) -> JobGraph:
    return compile_file(str(ROOT / path)).env.get_job_graph()


def page_of(jg: JobGraph) -> str:
    return render(jg, "html", "test")


def hostile_env() -> StreamExecutionEnvironment:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    s = env.from_sequence(0, 10).name(HOSTILE[0]).uid(HOSTILE[2])
    s = s.rebalance().map(lambda v: v).name(HOSTILE[1])
    s.key_by(lambda v: v).reduce(lambda a, b: a).name(HOSTILE[3]).print()
    return env


def big_env(vertices: int) -> StreamExecutionEnvironment:
    """A random DAG of exactly ``vertices`` JobVertices: every map is behind a rebalance (a
    new chain), fed by a recent stream or a union of two."""
    rng = random.Random(14)
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    streams: list[DataStream] = [env.from_sequence(0, 10)]
    for _ in range(vertices - 1):
        base = streams[-1 - min(len(streams) - 1, int(rng.expovariate(0.3)))]
        if rng.random() < 0.15 and len(streams) > 2:
            base = base.union(rng.choice(streams[-20:]))
        s = base.rebalance().map(lambda v: v)
        if rng.random() < 0.1:
            s.set_parallelism(rng.choice([1, 3, 4]))
        streams.append(s)
    streams[-1].print()
    return env
