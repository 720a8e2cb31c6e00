"""Every ```flow example in docs/language.md parses, lowers, builds transformations and plans."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from flowc.parser import compile_source

DOC = (Path(__file__).parents[2] / "docs" / "language.md").read_text(encoding="utf-8")
PRELUDE = re.search(r"```flow-prelude\n(.*?)```", DOC, re.S).group(1)  # type: ignore[union-attr]
BLOCKS = re.findall(r"```flow\n(.*?)```", DOC, re.S)
UDFS = '''
def score(article_id, position):
    return None if article_id is None else len(article_id) / (position or 1)

def tags(article_id):
    return [] if article_id is None else article_id.split("_")
'''


def test_there_are_many_examples() -> None:
    assert len(BLOCKS) >= 15


@pytest.mark.parametrize("block", BLOCKS, ids=[f"example{i}" for i in range(len(BLOCKS))])
def test_doc_example(block: str, tmp_path: Path) -> None:
    (tmp_path / "examples_udfs.py").write_text(UDFS, encoding="utf-8")
    text = block if "source clicks" in block else PRELUDE + block
    script = compile_source(text, "doc.flow", base_dir=str(tmp_path))
    program = script.env.program()
    assert program.roots and script.sinks
    for t in program.transformations.values():
        assert t.span is not None and t.span.file == "doc.flow"
    script.env.get_job_graph()
