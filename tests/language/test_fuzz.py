"""Random text and mutations of valid scripts: only FlowcError may come out, quickly.

Scripts that compile are planned through to the ExecutionGraph, as ``flowc check`` does, so
the planner is fuzzed too. Inputs include non-ASCII text (wide characters, combining marks,
emoji, invisible spaces, a byte order mark), which names, strings and carets must survive.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowc.chaining import build_execution_graph
from flowc.errors import FlowcError
from flowc.parser import compile_source
from flowc.parser.plan_help import plan_help

EXAMPLES = Path(__file__).parents[2] / "examples"
VALID = [p.read_text(encoding="utf-8") for p in sorted(EXAMPLES.glob("*.flow"))]
TOKENS = ["|", ";", "(", ")", ",", "'", "--", "=", "-", "5s", "0", "x", "map", "filter",
          "key by", "window", "tumbling", "aggregate", "count(*)", "as", "print", "source",
          "let", "set", "with", "(parallelism = 0)", "null", "and", "not", "case", "end",
          "join", "between", "union", "\n", " ", "[", "]", "9" * 30, "ts", "user_id", "\"",
          "'日本語'", "naïve", "ü", "\u00a0", "→", "'😀'", "\u200b", "e\u0301", "\ufeff",
          "'it''s'", "1d", "1.5s", "<>", "=="]
NON_ASCII = list("é日本語ß→😀") + ["\u00a0", "\u200b", "\u0301", "\ufeff", "\x00", "\x0c"]


@contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    def boom(signum: int, frame: object) -> None:
        raise TimeoutError(f"compile_source took more than {seconds} s")
    old = signal.signal(signal.SIGALRM, boom)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def only_flowc_errors(text: str) -> None:
    with time_limit(5):
        try:
            script = compile_source(text, "fuzz.flow")
            with plan_help(script.env):
                build_execution_graph(script.env.get_job_graph())
        except FlowcError as e:
            assert e.format()  # the formatter works for every error


FUZZ = settings(max_examples=300, deadline=timedelta(seconds=3),
                suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(st.text(alphabet=st.sampled_from(list("abcxyz_019 \n\t'\";|(),.=<>-+*/%[]!@#")
                                         + NON_ASCII), max_size=200))
def test_random_text(text: str) -> None:
    only_flowc_errors(text)


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=40))
def test_random_token_soup(tokens: list[str]) -> None:
    only_flowc_errors(" ".join(tokens))


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(VALID))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 20)))
        action = draw(st.sampled_from(["delete", "insert", "replace", "duplicate"]))
        if action == "delete":
            text = text[:i] + text[j:]
        elif action == "insert":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[i:]
        elif action == "replace":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[j:]
        else:
            text = text[:j] + text[i:j] + text[j:]
    return text


@FUZZ
@given(mutated())
def test_mutated_examples(text: str) -> None:
    only_flowc_errors(text)


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    for n in (60, 500, 5000):
        only_flowc_errors("source s (a int) values (1);\ns | map " + "(" * n + "a" + ")" * n
                          + " as b | print;")
        only_flowc_errors("source s (a int) values (1);\ns | map a" + " + a" * n
                          + " as b | print;")
        only_flowc_errors("source s (a int) values (1);\ns | map " + "-" * n + "a as b | print;")
