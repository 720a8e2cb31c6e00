"""Turning a failure inside an operator into a user-facing ExecutionError."""

from __future__ import annotations

from typing import Any

from flowc.errors import ExecutionError, FlowcError, Span


def operator_error(name: str, span: Span | None, error_type: str, message: str,
                   *, is_flowc: bool = False) -> ExecutionError:
    where = f" (defined at {span.file}:{span.line})" if span is not None else ""
    text = message if is_flowc else f"{error_type}: {message}"
    return ExecutionError(f"operator '{name}'{where} failed: {text}", span)


def wrap(node: Any, exc: BaseException) -> FlowcError:
    """An exception raised while running ``node`` (a StreamNode)."""
    if isinstance(exc, FlowcError) and not isinstance(exc, ExecutionError):
        return exc
    if isinstance(exc, ExecutionError) and exc.message.startswith("operator '"):
        return exc
    return operator_error(node.name, node.span, type(exc).__name__, str(exc),
                          is_flowc=isinstance(exc, ExecutionError))
