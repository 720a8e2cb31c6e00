"""``flowc explain --diff OLD NEW``: plan both sides (or read OLD's savepoint metadata) and
compare their state (flowc.savepoint.diff)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from flowc.chaining.execution_graph import ExecutionGraph
from flowc.errors import ConfigError
from flowc.savepoint.diff import diff_states
from flowc.savepoint.metadata import METADATA_FILE, metadata_from_plan, read_metadata
from flowc.savepoint.render import DIFF_FORMATS, render_diff


def _plan(args: argparse.Namespace, path: str, compile_: Callable[[Any], Any]
          ) -> ExecutionGraph:
    from flowc.parser.plan_help import plan_help

    script = compile_(argparse.Namespace(**{**vars(args), "file": path}))
    env = script.env
    if not env.program().roots:
        raise ConfigError(f"{path} builds no job (no sink or INSERT) to compare")
    with plan_help(env):
        return env.get_execution_graph()  # type: ignore[no-any-return]


def explain_diff(args: argparse.Namespace, compile_: Callable[[Any], Any]) -> tuple[str, bool]:
    """The rendered comparison and whether state would be lost."""
    if args.format not in DIFF_FORMATS:
        raise ConfigError(f"--diff renders as {' or '.join(DIFF_FORMATS)}, not "
                          f"{args.format}")
    old_path, new_path = args.diff
    new = _plan(args, new_path, compile_)
    if os.path.isdir(old_path) or os.path.basename(old_path) == METADATA_FILE:
        old = read_metadata(old_path)
        diff = diff_states(old, new, new_path, pointer=old_path)
    else:
        old_graph = _plan(args, old_path, compile_)
        diff = diff_states(metadata_from_plan(old_graph, old_path), new, new_path,
                           old_graph=old_graph, pointer=f"<savepoint of {old_path}>")
    return render_diff(diff, args.format), diff.loses_state
