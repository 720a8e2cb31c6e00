"""Mermaid output: names with markup or entity starts are escaped, at every level."""

from __future__ import annotations

import re

import pytest

from flowc.chaining import build_execution_graph
from flowc.explain import render
from flowc.parser import compile_source

NAME = 'a <b>bold</b> & "q" #35; `x`'
SCRIPT = f"""
source t (k string, n int) values ('a', 1) with (name = '{NAME.replace("'", "''")}');
t | filter n > 0 with (name = '<img src=x onerror=alert(1)>') | print;
"""


@pytest.mark.parametrize("level", ["stream", "job", "execution"])
def test_mermaid_escapes_markup_in_names(level: str) -> None:
    script = compile_source(SCRIPT, "m.flow")
    job = script.env.get_job_graph()
    graph = {"stream": job.stream_graph, "job": job,
             "execution": build_execution_graph(job)}[level]
    out = render(graph, "mermaid")
    labels = re.findall(r'\["(.*?)"\]', out)
    assert labels
    for label in labels:
        assert not re.search(r'[<"`&]', label), label  # no tag can open
        # every '#' starts one of the entity codes written for the escapes
        assert re.fullmatch(r"(?:[^#]|#(?:35|quot|lt|amp|96);)*", label), label
    assert "#lt;b>bold#lt;/b> #amp; #quot;q#quot; #35;35; #96;x#96;" in out
    assert "#lt;img src=x onerror=alert(1)>" in out
