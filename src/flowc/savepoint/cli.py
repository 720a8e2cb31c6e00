"""The savepoint commands: ``flowc explain --diff OLD NEW`` (plan both sides, or read OLD's
savepoint metadata, and compare their state: flowc.savepoint.diff), ``flowc savepoint
write / inspect`` and ``flowc run``'s ``--from-savepoint`` / ``--savepoint-on-stop``."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
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


def _execution_graph(env: Any) -> ExecutionGraph:
    from flowc.parser.plan_help import plan_help

    with plan_help(env):
        return env.get_execution_graph()  # type: ignore[no-any-return]


def cmd_savepoint(args: argparse.Namespace, compile_: Callable[[Any], Any]) -> int:
    """``flowc savepoint write JOB --checkpoint C -o DIR`` / ``flowc savepoint inspect DIR``."""
    if args.savepoint_command == "inspect":
        from flowc.savepoint.inspect import inspect_savepoint, render_inspect

        sys.stdout.write(render_inspect(inspect_savepoint(args.dir), args.format))
        return 0
    from flowc.executor.streaming import unbounded_sources
    from flowc.savepoint.take import take_savepoint

    graph = _execution_graph(compile_(args).env)
    if not unbounded_sources(graph.job_graph):
        raise ConfigError(f"{args.file} is a bounded job: Flink takes no savepoints of it "
                          "(savepoints are of unbounded jobs run with --checkpoint)")
    print(take_savepoint(args.checkpoint, graph, args.file, args.output).summary(),
          file=sys.stderr)
    return 0


def run_with_savepoints(args: argparse.Namespace, env: Any,
                        run: Callable[[str | None], Any]) -> Any:
    """Run the streaming job (``run(checkpoint)``) restored from ``--from-savepoint`` and
    writing ``--savepoint-on-stop`` after its last micro-batch; the flags need a checkpoint,
    a temporary one when none is given."""
    if not (args.from_savepoint or args.savepoint_on_stop):
        return run(args.checkpoint)
    from flowc.savepoint.restore import read_savepoint, restore_savepoint
    from flowc.savepoint.take import take_savepoint

    out = args.savepoint_on_stop
    if out is not None and os.path.exists(out) and (not os.path.isdir(out)
                                                     or os.listdir(out)):
        raise ConfigError(f"--savepoint-on-stop: {out} already exists: a savepoint is "
                          "written to a new directory")
    if args.from_savepoint:
        read_savepoint(args.from_savepoint)  # a bad one fails before anything is created
    graph = _execution_graph(env)
    temporary = args.checkpoint is None
    checkpoint = tempfile.mkdtemp(prefix="flowc-checkpoint-") if temporary \
        else args.checkpoint
    try:
        if args.from_savepoint:
            restored = restore_savepoint(args.from_savepoint, graph, args.file, checkpoint,
                                         args.allow_non_restored_state)
            print(restored.summary(args.from_savepoint) if restored is not None else
                  f"flowc: {checkpoint} holds completed micro-batches: resuming from it, "
                  f"not from the savepoint {args.from_savepoint}", file=sys.stderr)
        stats = run(checkpoint)
        if out is not None:
            print(take_savepoint(checkpoint, graph, args.file, out).summary(),
                  file=sys.stderr)
        return stats
    finally:
        if temporary:
            shutil.rmtree(checkpoint, ignore_errors=True)
