"""Turning a failure inside an operator into a user-facing ExecutionError."""

from __future__ import annotations

from typing import Any

from flowc.errors import ExecutionError, FlowcError, Span
from flowc.transformations import PartitionerKind

# Flink's KeyGroupRangeAssignment text for a null key (flowc.keygroups raises it).
NULL_KEY = "Assigned key must not be null!"


def operator_error(name: str, span: Span | None, error_type: str, message: str,
                   *, is_flowc: bool = False, hint: str | None = None) -> ExecutionError:
    where = f" (defined at {span.file}:{span.line})" if span is not None else ""
    text = message if is_flowc else f"{error_type}: {message}"
    return ExecutionError(f"operator '{name}'{where} failed: {text}", span, hint=hint)


def blame(sg: Any, node: Any, error_type: str, message: str, *,
          is_flowc: bool = False) -> ExecutionError:
    """The error of ``node`` (a StreamNode of ``sg``). A null key is routed by the node
    that *feeds* a ``key by``, but the key is the keyed operator's: it is blamed on that
    operator, with a hint to drop the null keys before the ``key by``."""
    if message == NULL_KEY and sg is not None:
        keyed = [e for e in sg.outputs(node.id) if e.partitioner.kind is PartitionerKind.HASH]
        if len(keyed) == 1:
            key = keyed[0].partitioner.key
            target = sg.nodes[keyed[0].target_id]
            fields = tuple(getattr(key, "fields", ()) or ())
            shown = ", ".join(fields) or getattr(key, "description", "") or "key"
            if fields:
                hint = ("drop those records before the key by, e.g. `| filter "
                        + " and ".join(f"{f} is not null" for f in fields) + "`")
            else:
                hint = "drop the records whose key is None before key_by (a filter)"
            return operator_error(
                target.name, target.span, error_type,
                f"{NULL_KEY} (key by {shown}: a record from '{node.name}' has a null key)",
                is_flowc=is_flowc, hint=hint)
    return operator_error(node.name, node.span, error_type, message, is_flowc=is_flowc)


def wrap(node: Any, exc: BaseException, sg: Any = None) -> FlowcError:
    """An exception raised while running ``node`` (a StreamNode of ``sg``)."""
    if isinstance(exc, FlowcError) and not isinstance(exc, ExecutionError):
        return exc
    if isinstance(exc, ExecutionError) and exc.message.startswith("operator '"):
        return exc
    return blame(sg, node, type(exc).__name__, str(exc),
                 is_flowc=isinstance(exc, ExecutionError))
