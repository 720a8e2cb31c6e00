"""The REPL's Pygments lexer is registered as a Pygments plugin (entry point), so
``pygmentize -l flow`` and documentation tools find it once flowc is installed."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from pygments.lexer import Lexer
from pygments.token import Keyword, Name, String

tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")

PYPROJECT = Path(__file__).parents[2] / "pyproject.toml"


def test_entry_point_names_the_lexer() -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    target = project["entry-points"]["pygments.lexers"]["flowc"]
    module, _, name = target.partition(":")
    lexer = getattr(importlib.import_module(module), name)
    assert issubclass(lexer, Lexer)
    assert "flow" in lexer.aliases and "*.flow" in lexer.filenames


def test_lexer_tokens() -> None:
    from flowc.lexer import FlowLexer

    tokens = list(FlowLexer().get_tokens("SELECT user_id FROM clicks WHERE a = 'x';"))
    assert (Keyword, "SELECT") in tokens and (String.Single, "'x'") in tokens
    assert (Name, "user_id") in tokens
