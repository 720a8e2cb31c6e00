"""The ``to_dict()`` of every graph has exactly the shape docs/plan-format.md documents.

The shapes are read from the documentation itself (the code block under each
``## `X.to_dict()` `` heading), so the documentation, this test and the code cannot drift
apart: every documented key must be present, in the documented order, with a value of the
documented kind, and no undocumented key may appear. Golden files pin the full output for
two examples."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

import flink_spec
from flowc.chaining import build_execution_graph
from flowc.errors import PlanError

ROOT = Path(__file__).parent.parent
DOC = ROOT / "docs" / "plan-format.md"
GOLDEN = Path(__file__).parent / "golden" / "explain"


# ------------------------------------------------------------------ the documented shapes


@dataclass(frozen=True)
class Obj:
    fields: tuple[tuple[str, Any], ...]


@dataclass(frozen=True)
class ListOf:
    item: Any


@dataclass(frozen=True)
class OneOf:
    options: tuple[Any, ...]


@dataclass(frozen=True)
class Literal:
    value: Any


@dataclass(frozen=True)
class Template:
    pattern: re.Pattern[str]


HALF_OPEN = "half-open range"
_TOKEN = re.compile(r'\s*(?:(?P<str>"[^"]*")|(?P<num>-?\d+)|(?P<word>[A-Za-z_]+)'
                    r'|(?P<dots>\.\.\.)|(?P<punct>[{}\[\]():,|]))')


def _tokens(text: str) -> list[str]:
    text = re.sub(r"//[^\n]*", "", text)
    out, pos = [], 0
    while pos < len(text.rstrip()):
        m = _TOKEN.match(text, pos)
        assert m, f"cannot read the documented shape at: {text[pos:pos + 40]!r}"
        out.append(m.group(m.lastgroup or ""))
        pos = m.end()
    return out


class _Reader:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> str:
        return self.toks[self.i]

    def take(self, expected: str | None = None) -> str:
        tok = self.toks[self.i]
        assert expected is None or tok == expected, (expected, tok, self.toks[self.i - 5:])
        self.i += 1
        return tok

    def value(self) -> Any:
        options = [self.atom()]
        while self.i < len(self.toks) and self.peek() == "|":
            self.take("|")
            options.append(self.atom())
        return options[0] if len(options) == 1 else OneOf(tuple(options))

    def atom(self) -> Any:
        tok = self.take()
        if tok == "{":
            fields = []
            while self.peek() != "}":
                key = self.take()
                assert key.startswith('"'), key
                self.take(":")
                fields.append((key[1:-1], self.value()))
                if self.peek() == ",":
                    self.take(",")
            self.take("}")
            return Obj(tuple(fields))
        if tok == "[":
            if self.peek() == "start":  # [start, stop)
                self.take("start"), self.take(","), self.take("stop"), self.take(")")
                return HALF_OPEN
            item = self.value()
            self.take(","), self.take("...")
            self.take("]")
            return ListOf(item)
        if tok.startswith('"'):
            text = tok[1:-1]
            if "<" not in text:
                return Literal(text)
            parts = re.split(r"<[^>]*>", text)
            return Template(re.compile(".+".join(re.escape(p) for p in parts) + r"\Z"))
        if re.fullmatch(r"-?\d+", tok):
            return Literal(int(tok))
        assert tok in ("int", "str", "bool", "null"), tok
        return tok


def documented_shape(heading: str) -> Any:
    doc = DOC.read_text()
    section = doc.split(f"## `{heading}`", 1)[1]
    block = section.split("```", 2)[1]
    reader = _Reader(block)
    shape = reader.value()
    assert reader.i == len(reader.toks), "trailing text in the documented shape"
    return shape


def conforms(value: Any, shape: Any, path: str = "$") -> None:
    """Assert ``value`` has ``shape``; the message names the offending path."""
    if isinstance(shape, Obj):
        assert isinstance(value, dict), path
        assert list(value) == [k for k, _ in shape.fields], (
            f"{path}: keys {list(value)} != documented {[k for k, _ in shape.fields]}")
        for k, s in shape.fields:
            conforms(value[k], s, f"{path}.{k}")
    elif isinstance(shape, ListOf):
        assert isinstance(value, list), path
        for i, v in enumerate(value):
            conforms(v, shape.item, f"{path}[{i}]")
    elif isinstance(shape, OneOf):
        errors = []
        for option in shape.options:
            try:
                conforms(value, option, path)
                return
            except AssertionError as e:
                errors.append(str(e))
        raise AssertionError(f"{path}: {value!r} matches none of {errors}")
    elif isinstance(shape, Literal):
        assert value == shape.value and type(value) is type(shape.value), (path, value)
    elif isinstance(shape, Template):
        assert isinstance(value, str) and shape.pattern.match(value), (path, value)
    elif shape == HALF_OPEN:
        assert (isinstance(value, list) and len(value) == 2
                and all(type(x) is int for x in value) and 0 <= value[0] <= value[1]), (
            path, value)
    else:
        kinds = {"int": int, "str": str, "bool": bool, "null": type(None)}
        assert type(value) is kinds[shape], f"{path}: {value!r} is not {shape}"


SHAPES = {name: documented_shape(f"{name}.to_dict()")
          for name in ("StreamGraph", "JobGraph", "ExecutionGraph")}


def test_the_documented_shapes_are_read_completely() -> None:
    """The reader is not vacuous: it finds the keys the docs name, nested."""
    def keys(shape: Any) -> set[str]:
        if isinstance(shape, Obj):
            return {k for k, _ in shape.fields} | {x for _, s in shape.fields for x in keys(s)}
        if isinstance(shape, ListOf):
            return keys(shape.item)
        return set()

    assert keys(SHAPES["StreamGraph"]) >= {"mode", "nodes", "edges", "chaining_strategy",
                                           "output_tag", "line"}
    assert keys(SHAPES["JobGraph"]) >= {"vertices", "operators", "inputs",
                                        "not_chained_because", "pipelined_region"}
    assert keys(SHAPES["ExecutionGraph"]) >= {"subtasks", "subpartition", "results",
                                              "partitions", "subpartitions", "consumers"}
    with pytest.raises(AssertionError, match="keys"):
        conforms({"mode": "STREAMING"}, SHAPES["StreamGraph"])
    with pytest.raises(AssertionError):
        conforms([[2, 0]], ListOf(HALF_OPEN))
    with pytest.raises(AssertionError, match="matches none"):
        conforms("SIDEWAYS", SHAPES["JobGraph"].fields[0][1])


# ------------------------------------------------------------------ every graph conforms


def _graphs(spec: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    env = flink_spec.build(spec)
    try:
        jg = env.get_job_graph()
        eg = build_execution_graph(jg)
    except PlanError:
        return []
    return [("StreamGraph", jg.stream_graph.to_dict()), ("JobGraph", jg.to_dict()),
            ("ExecutionGraph", eg.to_dict())]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(flink_spec.programs(two_input=True))
def test_every_to_dict_has_the_documented_shape(spec: dict[str, Any]) -> None:
    for name, d in _graphs(spec):
        conforms(d, SHAPES[name])
        json.dumps(d)  # and it is JSON


def test_shapes_hold_for_unset_parallelism_and_side_outputs() -> None:
    """Corners the random programs rarely reach: parallelism -1 (no environment default),
    uid hashes, side-output tags."""
    from flowc.datastream import OutputTag, StreamExecutionEnvironment

    env = StreamExecutionEnvironment.get_execution_environment()
    src = env.from_sequence(0, 9).uid("src").set_uid_hash("0123456789abcdef0123456789abcdef")
    src.get_side_output(OutputTag("t")).map(lambda v: v).add_discarding_sink()
    jg = env.get_job_graph()
    d = jg.stream_graph.to_dict()
    assert d["parallelism"] == -1 and d["edges"][0]["output_tag"] == "t"
    for name, x in (("StreamGraph", d), ("JobGraph", jg.to_dict()),
                    ("ExecutionGraph", build_execution_graph(jg).to_dict())):
        conforms(x, SHAPES[name])


# ------------------------------------------------------------------ goldens


def _python_program_env(path: Path) -> Any:
    import runpy

    from flowc.api.environment import capture_environments

    with capture_environments(dry_run=True) as cap:
        runpy.run_path(str(path), run_name="__main__")
    return cap.jobs[-1]  # what its env.execute() planned (execute() clears the environment)


def _check_golden(name: str, d: dict[str, Any]) -> None:
    text = json.dumps(d, indent=2, ensure_ascii=False) + "\n"
    golden = GOLDEN / name
    if os.environ.get("FLOWC_UPDATE_GOLDEN"):
        golden.write_text(text)
    assert text == golden.read_text()


def test_stream_graph_to_dict_golden_wordcount(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    env = _python_program_env(Path("examples/wordcount.py"))
    d = env.get_stream_graph().to_dict()
    conforms(d, SHAPES["StreamGraph"])
    _check_golden("wordcount.stream_graph.json", d)


def test_stream_graph_to_dict_golden_hints(monkeypatch: pytest.MonkeyPatch) -> None:
    """hints.flow: uids, slot sharing groups, chaining hints, every partitioner kind."""
    from flowc.parser import compile_file

    monkeypatch.chdir(ROOT)
    d = compile_file("examples/hints.flow").env.get_stream_graph().to_dict()
    conforms(d, SHAPES["StreamGraph"])
    _check_golden("hints.stream_graph.json", d)
