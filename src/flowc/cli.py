"""The ``flowc`` command: run, explain, check.

Exit codes: 0 ok, 1 user error (bad script, bad data, bad flags), 2 internal error. A user
error prints a positioned diagnostic, never a traceback.
"""

from __future__ import annotations

import argparse
import linecache
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Any, NoReturn

from flowc import __version__
from flowc.errors import EXIT_INTERNAL, EXIT_OK, EXIT_USER, ConfigError, FlowcError, Span
from flowc.explain import FORMATS, LEVELS, render


class _ArgumentParser(argparse.ArgumentParser):
    """argparse exits 2 on a bad command line; for flowc that is a user error (1)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USER, f"{self.prog}: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    ap = _ArgumentParser(
        prog="flowc",
        description="Compile streaming pipelines into Flink-style operator chains and run "
                    "them on Apache Spark.")
    ap.add_argument("--version", action="version", version=f"flowc {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    def script_args(p: argparse.ArgumentParser, optional: bool = False) -> None:
        p.add_argument("file", nargs="?" if optional else None,
                       help="a .flow script, a .sql file or a PyFlink-style .py program")
        p.add_argument("--parallelism", "-p", type=int, default=None,
                       help="default parallelism (overrides the script's `set parallelism`)")
        p.add_argument("--set", dest="options", action="append", default=[], metavar="KEY=VALUE",
                       help="set an option, as `set KEY = VALUE;` would (repeatable)")

    run = sub.add_parser("run", help="run a job on Spark (local by default)")
    script_args(run)
    run.add_argument("--master", default=None,
                     help="Spark master URL (default: an embedded local[*] Spark)")
    run.add_argument("--verbose", "-v", action="store_true", help="show Spark's log output")
    run.add_argument("--no-progress", action="store_true", help="no progress display")
    run.add_argument("--conf", dest="spark_conf", action="append", default=[],
                     metavar="spark.KEY=VALUE",
                     help="a Spark setting, as spark-submit's --conf (repeatable; the same as "
                          "--set spark.KEY=VALUE)")
    run.add_argument("--packages", default=None, metavar="GROUP:ARTIFACT:VERSION,...",
                     help="Maven packages for Spark's classpath (spark.jars.packages)")
    run.add_argument("--jars", default=None, metavar="JAR,...",
                     help="jars for Spark's classpath (spark.jars)")
    run.add_argument("--checkpoint", default=None, metavar="DIR",
                     help="unbounded jobs: the checkpoint directory; a restart on the same "
                          "directory resumes where the job stopped (default: a temporary "
                          "one, removed at the end)")
    run.add_argument("--trigger", default=None, metavar="DURATION",
                     help="unbounded jobs: start a micro-batch every DURATION (1s, 500ms; "
                          "0: as soon as the previous one ended; default: the source's "
                          "monitor interval)")
    run.add_argument("--from-savepoint", default=None, metavar="DIR",
                     help="unbounded jobs: start from a savepoint's state, matched by "
                          "operator id (docs/upgrading.md)")
    run.add_argument("--allow-non-restored-state", action="store_true",
                     help="with --from-savepoint: skip state of operators the job no longer "
                          "has (Flink's --allowNonRestoredState)")
    run.add_argument("--savepoint-on-stop", default=None, metavar="DIR",
                     help="unbounded jobs: when Ctrl-C / SIGTERM stops the job, write a "
                          "savepoint of its last micro-batch to DIR")
    run.add_argument("--py-files", default=None, metavar="FILE,...",
                     help=".py / .zip / .egg files for the driver's and the workers' import "
                          "path (spark.submit.pyFiles)")

    explain = sub.add_parser("explain", help="show the plans")
    script_args(explain, optional=True)
    explain.add_argument("--diff", nargs=2, default=None, metavar=("OLD", "NEW"),
                         help="which state of OLD (a script, or a savepoint directory with "
                              "_metadata.json) NEW restores, loses or starts empty; exit 1 "
                              "when state would be lost (formats text, json)")
    explain.add_argument("--level", choices=LEVELS, default="job")
    explain.add_argument("--format", choices=FORMATS, default="text",
                         help="html: one self-contained page drawing the JobGraph")
    explain.add_argument("--output", "-o", default=None, metavar="FILE",
                         help="write to FILE instead of standard output")

    savepoint = sub.add_parser("savepoint", help="take or inspect savepoints of unbounded "
                                                 "jobs (docs/savepoints.md)")
    sp_sub = savepoint.add_subparsers(dest="savepoint_command", metavar="write|inspect",
                                      required=True)
    sp_write = sp_sub.add_parser("write", help="write a savepoint of a checkpoint's latest "
                                               "completed micro-batch")
    script_args(sp_write)
    sp_write.add_argument("--checkpoint", required=True, metavar="DIR",
                          help="the checkpoint the job ran with (flowc run --checkpoint)")
    sp_write.add_argument("--output", "-o", required=True, metavar="DIR",
                          help="the new savepoint directory")
    sp_inspect = sp_sub.add_parser("inspect", help="operators, state names, keys, sizes")
    sp_inspect.add_argument("dir", metavar="DIR")
    sp_inspect.add_argument("--format", choices=("table", "json"), default="table")

    check = sub.add_parser("check", help="parse, type-check and plan without running")
    script_args(check)

    repl = sub.add_parser("repl", help="interactive .flow and SQL on a warm Spark session")
    repl.add_argument("-i", "--init", default=None, metavar="FILE",
                      help="run a .flow or .sql script first (its definitions stay)")
    repl.add_argument("--master", default=None, help="Spark master URL")
    repl.add_argument("--history", default=None, metavar="FILE",
                      help="history file (default ~/.flowc_history)")
    return ap


def _overrides(args: argparse.Namespace) -> dict[str, str]:
    opts: dict[str, str] = {}
    for item in args.options:
        if "=" not in item:
            raise ConfigError(f"--set expects KEY=VALUE, got '{item}'")
        k, v = item.split("=", 1)
        k, v = k.strip(), v.strip()
        if k.startswith("spark.") and not (len(v) > 1 and v[0] == v[-1] == "'"):
            # Spark's values are plain text (2g, -Dx=1, paths), as spark-submit takes them.
            v = "'" + v.replace("'", "''") + "'"
        opts[k] = v
    if args.parallelism is not None:
        if args.parallelism < 1:
            raise ConfigError(f"--parallelism must be at least 1, got {args.parallelism}")
        opts["parallelism"] = str(args.parallelism)
    return opts


class _PythonProgram:
    """A PyFlink-style Python program, run with its environments captured."""

    def __init__(self, env: Any) -> None:
        self.env = env


def _run_python(path: str, dry_run: bool, **capture: Any) -> Any:
    import runpy

    from flowc import user_modules
    from flowc.api.environment import capture_environments

    # As `python prog.py` does: the program's directory is first on the import path, and
    # modules imported from it are shipped to Spark's workers by value.
    directory = os.path.dirname(os.path.abspath(path))
    sys.path.insert(0, directory)
    user_modules.add_directory(directory)
    with capture_environments(dry_run=dry_run, **capture) as cap:
        try:
            runpy.run_path(path, run_name="__main__")
        except SystemExit as e:
            if e.code not in (None, 0):
                raise ConfigError(f"{path} exited with status {e.code}") from None
        except FlowcError:
            raise
        except Exception as e:  # noqa: BLE001 - the user's program failed: a user error
            raise _program_error(path, e) from None
        finally:
            if directory in sys.path:
                sys.path.remove(directory)
    return cap


class ProgramError(FlowcError):
    """The user's Python program raised an exception of its own."""


def _program_error(path: str, e: BaseException) -> ProgramError:
    """Point at the innermost line of the program's own file that the exception passed."""
    target = os.path.abspath(path)
    span: Span | None = None
    tb = e.__traceback__
    while tb is not None:
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == target:
            line = linecache.getline(target, tb.tb_lineno).rstrip()
            start = len(line) - len(line.lstrip()) + 1
            span = Span(path, tb.tb_lineno, start, tb.tb_lineno, len(line) + 1)
        tb = tb.tb_next
    return ProgramError(f"the program raised {type(e).__name__}: {e}", span)


def _program_settings(args: argparse.Namespace) -> Any:
    """``-p``/``--set`` for a Python program: applied to each environment it creates."""
    opts = _overrides(args)
    if not opts:
        return None
    from flowc.parser import COMMAND_LINE, compile_source

    compile_source("", COMMAND_LINE, options=opts)  # bad options fail before the program runs

    def configure(env: Any) -> None:
        compile_source("", COMMAND_LINE, env=env, options=opts)

    return configure


def _compile(args: argparse.Namespace) -> Any:
    if not os.path.exists(args.file):
        raise ConfigError(f"no such file: {args.file}")
    if args.file.endswith(".py"):
        cap = _run_python(args.file, dry_run=True, configure=_program_settings(args))
        # The jobs its execute() calls planned, then environments built but not executed.
        envs = cap.jobs + [e for e in cap.environments if e.program().roots]
        if not envs:
            raise ConfigError(f"{args.file} built no pipeline (no StreamExecutionEnvironment "
                              "with operators)")
        return _PythonProgram(envs[-1])
    if args.file.endswith(".sql"):
        from flowc.sql import compile_sql_file

        return compile_sql_file(args.file, options=_overrides(args))
    from flowc.parser import compile_file

    return compile_file(args.file, options=_overrides(args))


def cmd_check(args: argparse.Namespace) -> int:
    script = _compile(args)
    from flowc.chaining import build_execution_graph
    from flowc.parser.plan_help import plan_help

    with plan_help(script.env):  # planner errors get script-level help
        jg = script.env.get_job_graph()
        build_execution_graph(jg)
    print(f"{args.file}: ok ({len(jg.stream_graph.nodes)} operators in "
          f"{len(jg.vertices)} tasks)")
    return EXIT_OK


def _sql_explains(script: Any, fmt: str = "text") -> None:
    sys.stdout.write(_explains_text(script, fmt))


def _explains_text(script: Any, fmt: str) -> str:
    return "".join(f"-- EXPLAIN at {x.span}\n" + render(env.get_job_graph(), fmt)
                   for x, env in getattr(script, "explains", []))


def cmd_explain(args: argparse.Namespace) -> int:
    code = EXIT_OK
    if args.diff is not None:
        if args.file is not None:
            raise ConfigError(f"explain takes either a FILE or --diff OLD NEW, not both "
                              f"(got {args.file} too)")
        from flowc.savepoint.cli import explain_diff

        text, lost = explain_diff(args, _compile)
        code = EXIT_USER if lost else EXIT_OK
    elif args.file is None:
        raise ConfigError("explain needs a FILE (a .flow, .sql or .py) or --diff OLD NEW")
    else:
        text = _explain_text(args)
    if args.output is None:
        sys.stdout.write(text)
        return code
    try:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise ConfigError(f"cannot write {args.output}: {e.strerror}") from None
    return code


def _explain_text(args: argparse.Namespace) -> str:
    script = _compile(args)
    explains = getattr(script, "explains", None)
    if explains and not script.sinks:  # a file of EXPLAIN statements only
        if args.format != "html":
            return _explains_text(script, args.format)
        if len(explains) > 1:  # one page draws one job
            raise ConfigError(f"--format html draws one job, and {args.file} has "
                              f"{len(explains)} EXPLAIN statements (and nothing else)")
        x, only = explains[0]
        return render(only.get_job_graph(), "html", f"{args.file}: EXPLAIN at {x.span}")
    env = script.env
    graph: Any
    from flowc.parser.plan_help import plan_help

    with plan_help(env):
        if args.level == "stream":
            graph = env.get_stream_graph()
        elif args.level == "job":
            graph = env.get_job_graph()
        else:
            graph = env.get_execution_graph()
    if args.format == "html":  # the page draws the job, not the file's EXPLAIN statements
        return render(graph, "html", args.file)
    # and the file's EXPLAIN statements, as `run` does
    return render(graph, args.format) + _explains_text(script, args.format)


def _spark_settings(args: argparse.Namespace) -> list[str]:
    """``--conf`` / ``--packages`` / ``--jars`` / ``--py-files`` as ``spark.*`` options
    (``KEY=VALUE``, what ``--set`` takes): they reach the SparkSession with the job's other
    ``spark.*`` options."""
    items = []
    for item in args.spark_conf:
        key = item.split("=", 1)[0].strip()
        if "=" not in item:
            raise ConfigError(f"--conf expects spark.KEY=VALUE, got '{item}'")
        if not key.startswith("spark."):
            raise ConfigError(f"--conf takes Spark settings (spark.*), not '{key}'",
                              hint="flowc's own settings go in --set")
        items.append(item)
    for value, key in ((args.packages, "spark.jars.packages"), (args.jars, "spark.jars")):
        if value:
            items.append(f"{key}={value}")
    if args.py_files:
        paths = [p.strip() for p in args.py_files.split(",") if p.strip()]
        for p in paths:
            if not os.path.exists(p):
                raise ConfigError(f"--py-files: no such file: {p}")
        # The driver imports from them too (a script's `import udf`), as spark-submit's.
        for p in reversed(paths):
            sys.path.insert(0, os.path.abspath(p))
        items.append("spark.submit.pyFiles=" + ",".join(os.path.abspath(p) for p in paths))
    return items


def cmd_run(args: argparse.Namespace) -> int:
    if args.trigger is not None:
        _trigger(args.trigger)  # a bad value fails before compiling, whatever the job
    args.options = [*args.options, *_spark_settings(args)]
    if args.file.endswith(".py"):
        # A Python program runs itself: its env.execute() calls use the Spark executor.
        if not os.path.exists(args.file):
            raise ConfigError(f"no such file: {args.file}")
        if _savepoint_flags(args):
            raise ConfigError("the savepoint flags apply to .flow and .sql jobs (a Python "
                              "program runs its own env.execute())")
        run_options = {"master": args.master, "verbose": args.verbose,
                       "progress": not args.no_progress and sys.stderr.isatty(),
                       "checkpoint": args.checkpoint,
                       "trigger_ms": None if args.trigger is None else _trigger(args.trigger)}
        _run_python(args.file, dry_run=False, configure=_program_settings(args),
                    run_options=run_options,
                    on_result=lambda result: print(result.summary(), file=sys.stderr))
        return EXIT_OK
    script = _compile(args)
    _sql_explains(script)
    if getattr(script, "explains", None) and not script.sinks:
        return EXIT_OK
    from flowc.executor import run_job_graph
    from flowc.parser.plan_help import plan_help

    env = script.env
    with plan_help(env):
        job_graph = env.get_job_graph()
    from flowc.executor.streaming import unbounded_sources

    if unbounded_sources(job_graph):
        return _run_streaming(args, env, job_graph, env.config.job_name)
    if args.checkpoint is not None or args.trigger is not None:
        raise ConfigError("--checkpoint and --trigger apply to unbounded jobs (a source with "
                          "a monitor interval); this job's sources are bounded")
    if _savepoint_flags(args):
        raise ConfigError("the savepoint flags apply to unbounded jobs (a source with a "
                          "monitor interval): Flink takes no savepoints of bounded jobs")
    result = run_job_graph(job_graph, master=args.master, verbose=args.verbose,
                           progress=not args.no_progress and sys.stderr.isatty(),
                           job_name=env.config.job_name)
    print(result.summary(), file=sys.stderr)
    return EXIT_OK


def _trigger(text: str) -> int:
    from flowc.executor.streaming.runner import parse_trigger

    return parse_trigger(text)


def _savepoint_flags(args: argparse.Namespace) -> bool:
    return bool(args.from_savepoint or args.savepoint_on_stop or args.allow_non_restored_state)


def _run_streaming(args: argparse.Namespace, env: Any, job_graph: Any, job_name: str) -> int:
    """Run an unbounded job until Ctrl-C / SIGTERM, which end it after the running
    micro-batch with a consistent checkpoint (and, with --savepoint-on-stop, a savepoint)."""
    from flowc.executor.streaming.runner import run_until_stopped
    from flowc.savepoint.cli import run_with_savepoints

    if args.allow_non_restored_state and not args.from_savepoint:
        raise ConfigError("--allow-non-restored-state applies with --from-savepoint")
    trigger = None if args.trigger is None else _trigger(args.trigger)
    stats = run_with_savepoints(args, env, lambda checkpoint: run_until_stopped(
        job_graph, checkpoint=checkpoint, trigger_ms=trigger, master=args.master,
        verbose=args.verbose, progress=not args.no_progress and sys.stderr.isatty(),
        job_name=job_name))
    print("\n" + stats.summary(), file=sys.stderr)
    return EXIT_OK


def cmd_savepoint(args: argparse.Namespace) -> int:
    from flowc.savepoint.cli import cmd_savepoint as run_savepoint

    return run_savepoint(args, _compile)


def cmd_repl(args: argparse.Namespace) -> int:
    if args.init is not None and not os.path.exists(args.init):
        raise ConfigError(f"no such file: {args.init}")
    from flowc.repl import main as repl_main

    return repl_main(args.init, args.master, args.history)


# Options whose value may begin with '-' (a negative duration): argparse would take
# `--trigger -1s` for two options and say "expected one argument", hiding the real error.
_DASH_VALUE_OPTIONS = ("--trigger",)


def _join_dash_values(argv: Sequence[str]) -> list[str]:
    """``--trigger -1s`` -> ``--trigger=-1s``, so the value reaches its own check."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if (arg in _DASH_VALUE_OPTIONS and i + 1 < len(argv)
                and argv[i + 1][:1] == "-" and argv[i + 1][1:2] not in ("", "-")
                and (argv[i + 1][1].isdigit() or argv[i + 1][1] == ".")):
            out.append(f"{arg}={argv[i + 1]}")
            i += 2
            continue
        out.append(arg)
        i += 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = _parser()
    args = ap.parse_args(_join_dash_values(sys.argv[1:] if argv is None else argv))
    if args.command is None:
        ap.print_help()
        return EXIT_OK
    handler = {"run": cmd_run, "explain": cmd_explain, "check": cmd_check,
               "repl": cmd_repl, "savepoint": cmd_savepoint}[args.command]
    try:
        return handler(args)
    except FlowcError as e:
        print(e.format(), file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("flowc: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as e:  # noqa: BLE001 - the boundary: anything else is our bug
        print(f"flowc: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        if os.environ.get("FLOWC_DEBUG"):
            traceback.print_exc()
        else:
            print("flowc: this is a bug in flowc; set FLOWC_DEBUG=1 to see the traceback",
                  file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
