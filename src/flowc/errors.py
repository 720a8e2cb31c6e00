"""One error hierarchy and one formatter for every stage.

Every user-facing failure is a :class:`FlowcError`. Errors that carry a :class:`Span` are
rendered as ``file:line:col: error: message`` followed by the source line and a caret under
the span, so syntax, name, type, planner and runtime errors all look alike.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

EXIT_OK = 0
EXIT_USER = 1
EXIT_INTERNAL = 2


@dataclass(frozen=True)
class Span:
    """A region of source text; lines and columns are 1-based, ``end_column`` exclusive."""

    file: str
    line: int
    column: int
    end_line: int = 0
    end_column: int = 0
    # The whole source text, shared by reference (not copied), so the formatter can show the
    # line even for sources that never existed on disk (REPL input, SQL strings, tests).
    text: str | None = field(default=None, compare=False, repr=False)

    def source_line(self) -> str | None:
        text = self.text
        if text is None:
            try:
                with open(self.file, encoding="utf-8") as fh:
                    text = fh.read()
            except OSError:
                return None
        lines = text.splitlines()
        if 1 <= self.line <= len(lines):
            return lines[self.line - 1]
        return None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class FlowcError(Exception):
    """Base of every error flowc reports to a user. ``exit_code`` is what the CLI returns."""

    exit_code = EXIT_USER
    severity = "error"

    def __init__(
        self,
        message: str,
        span: Span | None = None,
        *,
        hint: str | None = None,
        notes: Sequence[str] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.span = span
        self.hint = hint
        self.notes = tuple(notes)

    def format(self) -> str:
        return format_diagnostic(self)

    def __str__(self) -> str:
        return self.message


class FlowSyntaxError(FlowcError):
    """The text does not parse."""


class FlowNameError(FlowcError):
    """An unknown stream, field, function, option or module."""


class FlowTypeError(FlowcError):
    """An expression or operator is applied to values of the wrong type."""


class PlanError(FlowcError):
    """The pipeline is well-typed but cannot be planned (Flink would reject it too).

    ``java_class`` is the exception class Flink throws for the same program, so golden tests
    can compare ``<class>: <message>`` with a real Flink run.
    """

    def __init__(
        self,
        message: str,
        span: Span | None = None,
        *,
        java_class: str = "IllegalStateException",
        hint: str | None = None,
        notes: Sequence[str] = (),
    ) -> None:
        super().__init__(message, span, hint=hint, notes=notes)
        self.java_class = java_class


class ApiError(FlowcError):
    """A Python API call with invalid arguments (Flink's IllegalArgumentException)."""


class ExecutionError(FlowcError):
    """The job failed while running: a bad data row, a failing UDF, a missing input file."""


class ConfigError(FlowcError):
    """A bad option, flag or environment (for example, no ``java`` on the PATH)."""


class UnsupportedError(FlowcError):
    """A construct flowc recognises but does not implement; the message names it."""


class InternalError(FlowcError):
    """A bug in flowc. Reported with exit code 2."""

    exit_code = EXIT_INTERNAL


class MultipleErrors(FlowcError):
    """Several independent errors found in one run (for example one per bad statement)."""

    def __init__(self, errors: Sequence[FlowcError]) -> None:
        if not errors:
            raise ValueError("MultipleErrors needs at least one error")
        super().__init__(errors[0].message, errors[0].span)
        self.errors = tuple(errors)

    def format(self) -> str:
        parts = [format_diagnostic(e) for e in self.errors]
        n = len(self.errors)
        parts.append(f"{n} error{'s' if n != 1 else ''}")
        return "\n".join(parts)


def format_diagnostic(err: FlowcError) -> str:
    """``file:line:col: error: message``, the source line, a caret line, then hint/notes."""
    span = err.span
    out: list[str] = []
    if span is None:
        out.append(f"{err.severity}: {err.message}")
    else:
        out.append(f"{span}: {err.severity}: {err.message}")
        line = span.source_line()
        if line is not None:
            # Tabs would shift the caret; render them as single spaces on both lines.
            shown = line.replace("\t", " ")
            width = 1
            if span.end_line == span.line and span.end_column > span.column:
                width = span.end_column - span.column
            width = max(1, min(width, max(1, len(shown) - span.column + 1)))
            gutter = f"{span.line:>4} | "
            out.append(gutter + shown)
            out.append(" " * (len(gutter) - 2) + "| " + " " * (span.column - 1) + "^" * width)
    if err.hint:
        out.append(f"  = help: {err.hint}")
    for note in err.notes:
        out.append(f"  = note: {note}")
    return "\n".join(out)


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """A ``did you mean 'x'?`` hint for an unknown name, or None when nothing is close."""
    pool = sorted(set(candidates))
    if not pool:
        return None
    lowered = {c.lower(): c for c in pool}
    if name.lower() in lowered and lowered[name.lower()] != name:
        return f"did you mean '{lowered[name.lower()]}'?"
    close = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    if not close:
        close = [lowered[c] for c in difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)]
    return f"did you mean '{close[0]}'?" if close else None
