"""Flink's ``/*+ STATE_TTL('name' = 'duration', ...) */`` query hint: the idle state retention
of one query block's regular join (per side) or group aggregate, instead of the job's
``table.exec.state.ttl``.

A key names an input of the block by its alias, else its table / view / CTE name (Flink's
hint keys); each becomes a .flow hint of the step the block makes: ``left_state_ttl`` /
``right_state_ttl`` on a regular join, ``state_ttl`` on a rolling aggregate
(flowc.parser.steps_changelog reads them). A block with neither ignores the hint, as do
window aggregates, Top-N and other stateful operators (Flink's hint is for regular joins and
group aggregates only). Other hints are ignored, as Flink ignores hints it does not know.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from flowc.errors import FlowSyntaxError, FlowTypeError, Span, did_you_mean
from flowc.parser import ast as A
from flowc.sql.ddl import flink_duration

if TYPE_CHECKING:
    from flowc.sql.query import Piece


@dataclass(frozen=True)
class TtlHint:
    """The hint's entries: (input name, milliseconds, the entry's span)."""

    entries: tuple[tuple[str, int, Span], ...]
    span: Span


def state_ttl_hint(spans: Any, node: exp.Select) -> TtlHint | None:
    """The block's STATE_TTL hint, checked; None without one."""
    hint = node.args.get("hint")
    found = [h for h in (hint.expressions if hint is not None else ())
             if isinstance(h, exp.Anonymous) and str(h.this).upper() == "STATE_TTL"]
    if not found:
        return None
    at = spans.keyword_before(node.expressions[0], "STATE_TTL") if node.expressions \
        else spans(node)
    entries: list[tuple[str, int, Span]] = []
    for h in found:
        if not h.expressions:  # Flink's text
            raise FlowSyntaxError("Invalid STATE_TTL hint, expecting at least one key-value "
                                  "options specified.", at,
                                  hint="for example /*+ STATE_TTL('o' = '1d') */")
        for e in h.expressions:
            if not (isinstance(e, exp.EQ) and isinstance(e.this, exp.Literal) and
                    isinstance(e.expression, exp.Literal) and e.this.is_string and
                    e.expression.is_string):
                raise FlowSyntaxError("STATE_TTL takes 'name' = 'duration' pairs",
                                      spans(e), hint="for example STATE_TTL('o' = '1d')")
            name, text = str(e.this.this), str(e.expression.this)
            if not text.strip()[:1].isdigit():  # Flink's text (TimeUtils.parseDuration)
                raise FlowTypeError("Invalid STATE_TTL hint value: text does not start with a "
                                    "number, and is not a valid ISO-8601 duration format: "
                                    f"{text}", spans(e.expression),
                                    hint="for example '1d', '12h' or '30 min'")
            ms = flink_duration(text, spans(e.expression))
            entries.append((name, ms, spans(e)))
    return TtlHint(tuple(entries), at)


def _input_names(node: exp.Expression) -> tuple[str, ...]:
    """The names a hint key may give an input by: its alias, else its table name."""
    if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
        return (node.alias or node.name,)
    if isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous) and \
            node.this.expressions and not node.alias:  # a window TVF: its table's name
        arg = node.this.expressions[0]
        arg = arg.expression if isinstance(arg, exp.Kwarg) else arg
        return (arg.name,) if isinstance(arg, exp.Column) else ()
    alias = node.alias if isinstance(node, (exp.Subquery, exp.Table)) else ""
    return (alias,) if alias else ()


def hinted(hint: TtlHint | None, node: exp.Select, piece: Piece, first: int) -> Piece:
    """``piece`` with ``hint`` attached to the regular join or rolling aggregate among
    ``piece.steps[first:]`` (the steps this block made)."""
    if hint is not None:
        _attach(hint, node, piece, first)
    return piece


def _attach(hint: TtlHint, node: exp.Select, piece: Piece, first: int) -> None:
    frm = node.args.get("from_")
    joins = node.args.get("joins") or []
    inputs = [frm.this] + [j.this for j in joins] if frm is not None else []
    names = [_input_names(n) for n in inputs]
    for name, _, span in hint.entries:
        if not any(name in n for n in names):
            listed = ", ".join(f"`{n[0]}`" for n in names if n)
            raise FlowTypeError("The options of following hints cannot match the name of "
                                f"input tables or views: \n`{name}` in `STATE_TTL`", span,
                                hint=did_you_mean(name, [x for n in names for x in n]) or
                                (f"this query's inputs are {listed}" if listed else None))
    steps = piece.steps
    for i in range(first, len(steps)):
        step = steps[i]
        if isinstance(step, A.JoinStep) and step.kind is not None and step.window is None \
                and step.lower is None:
            hints = [A.Setting(("left_state_ttl", "right_state_ttl")[side], A.DurationLit(
                ms, span), span, span, span) for name, ms, span in hint.entries
                for side in (0, 1) if name in names[side]]
            steps[i] = replace(step, hints=step.hints + tuple(hints))
            return
        if isinstance(step, A.AggregateStep) and not any(
                isinstance(s, A.WindowStep) for s in steps[:i]) and not joins:
            name, ms, span = hint.entries[-1]
            steps[i] = replace(step, hints=step.hints + (A.Setting(
                "state_ttl", A.DurationLit(ms, span), span, span, span),))
            return
    # a block without either keeps no state the hint could set: Flink accepts and ignores it
