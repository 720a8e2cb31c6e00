"""One error hierarchy and one formatter for every stage.

Every user-facing failure is a :class:`FlowcError`. Errors that carry a :class:`Span` are
rendered as ``file:line:col: error: message`` followed by the source line and a caret under
the span, so syntax, name, type, planner and runtime errors all look alike.
"""

from __future__ import annotations

import difflib
import unicodedata
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
                with open(self.file, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
            except OSError:
                return None
        # Lines are counted at "\n" only, as the lexer counts them (splitlines() would also
        # split at form feeds and other separators and show the wrong line).
        lines = text.split("\n")
        if not 1 <= self.line <= len(lines):
            return None
        line = lines[self.line - 1].removesuffix("\r")
        # A byte order mark takes no column (see parser.syntax), so it is not shown either.
        return line[1:] if self.line == 1 and line.startswith("\ufeff") else line

    def written(self) -> str | None:
        """The text a one-line span covers, as written (for hints), or None."""
        line = self.source_line() if self.end_line == self.line else None
        return line[self.column - 1:self.end_column - 1] if line else None

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
        related: Sequence[tuple[str, Span]] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.span = span
        self.hint = hint
        self.notes = tuple(notes)
        # Other places that explain the error ("the other operator with uid 'a' is here"),
        # each shown with its own line and caret.
        self.related = tuple(related)

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
        related: Sequence[tuple[str, Span]] = (),
    ) -> None:
        super().__init__(message, span, hint=hint, notes=notes, related=related)
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
        out.extend(_excerpt(span))
    if err.hint:
        out.append(f"  = help: {err.hint}")
    for note in err.notes:
        out.append(f"  = note: {note}")
    for note, where in err.related:
        out.append(f"{where}: note: {note}")
        out.extend(_excerpt(where))
    return "\n".join(out)


def _excerpt(span: Span) -> list[str]:
    """The span's source line and a caret line under the span, aligned in terminal cells."""
    line = span.source_line()
    if line is None:
        return []
    # Tabs would shift the caret; they are shown as single spaces on both lines. Other
    # control characters (a binary file's bytes) would garble the terminal: shown as U+FFFD.
    shown = "".join(" " if c == "\t" else "\ufffd" if _is_control(c) else c for c in line)
    start = min(max(span.column - 1, 0), len(shown))
    end = start + 1
    if span.end_line == span.line and span.end_column > span.column:
        end = span.end_column - 1
    end = max(start + 1, min(end, len(shown)))
    if display_width(shown) > _LONG_LINE:
        shown, start, end = _window(shown, start, end)
    gutter = f"{span.line:>4} | "
    pad = " " * display_width(shown[:start])
    carets = "^" * max(1, display_width(shown[start:end]))
    return [gutter + shown, " " * (len(gutter) - 2) + "| " + pad + carets]


# Lines wider than this (a generated script, a 1000-term expression) are shown as a window
# around the span, so that the excerpt stays readable in a terminal.
_LONG_LINE = 200
_BEFORE, _AFTER, _SPAN = 60, 40, 80


def _window(shown: str, start: int, end: int) -> tuple[str, int, int]:
    """A part of ``shown`` around ``[start, end)``, cut ends marked with '...'."""
    end = min(end, _cells_forward(shown, start, _SPAN))
    lo = start
    while lo > 0 and display_width(shown[lo - 1:start]) <= _BEFORE:
        lo -= 1
    hi = _cells_forward(shown, end, _AFTER)
    head = "..." if lo > 0 else ""
    tail = "..." if hi < len(shown) else ""
    return head + shown[lo:hi] + tail, start - lo + len(head), end - lo + len(head)


def _cells_forward(text: str, i: int, cells: int) -> int:
    """The index just past ``cells`` display cells of ``text`` from ``i``."""
    width = 0
    while i < len(text) and width + display_width(text[i]) <= cells:
        width += display_width(text[i])
        i += 1
    return i


def _is_control(c: str) -> bool:
    return unicodedata.category(c) == "Cc"


def display_width(text: str) -> int:
    """Terminal cells ``text`` takes: East Asian wide and fullwidth characters take two,
    combining marks and zero-width formatting characters none."""
    width = 0
    for c in text:
        if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me", "Cf"):
            continue
        width += 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1
    return width


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
