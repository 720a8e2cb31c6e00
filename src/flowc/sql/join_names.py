"""Column names on the two sides of a join and after it: which side ``q.c`` / ``c`` names,
its physical column after the join (a right column whose name the left has is renamed
``<right alias>_<name>``, as .flow's join does), and ``*`` / ``q.*`` with Calcite's SQL names.
One set of rules for every join path (regular, interval, window joins of TVFs and of window
aggregates)."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlglot import exp

from flowc.errors import FlowNameError, Span, UnsupportedError, did_you_mean
from flowc.parser import ast as A
from flowc.types import Schema


@dataclass(frozen=True)
class JoinSides:
    left_alias: str
    right_alias: str
    left: Schema
    right: Schema
    # a window join of two window TVFs: ``q.window_start`` / ``q.window_end`` name the
    # window (for its ON condition), not a column of either side
    window_columns: bool = False
    physical_right: dict[str, str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "physical_right", {
            f: (f if f not in self.left.names else f"{self.right_alias}_{f}")
            for f in self.right.names})

    def which(self, col: exp.Column, span: Span) -> tuple[str, str]:
        """("left" | "right", column name on that side) of ``col``."""
        lq, rq = self.left_alias, self.right_alias
        q, name = col.table, col.name
        if q:
            if q not in (lq, rq):
                raise FlowNameError(f"unknown table '{q}'", span, hint=did_you_mean(q, [lq, rq]))
            schema = self.left if q == lq else self.right
            if name not in schema.names and not (
                    self.window_columns and name in ("window_start", "window_end")):
                raise FlowNameError(f"unknown column '{name}' in '{q}'", span,
                                    hint=did_you_mean(name, schema.names))
            return ("left" if q == lq else "right"), name
        in_l, in_r = name in self.left.names, name in self.right.names
        if in_l and in_r:
            raise FlowNameError(f"column '{name}' is ambiguous: both sides have it", span,
                                hint=f"write {lq}.{name} or {rq}.{name}")
        if not in_l and not in_r:
            raise FlowNameError(f"unknown column '{name}'", span, hint=did_you_mean(
                name, list(self.left.names) + list(self.right.names)))
        return ("left" if in_l else "right"), name

    def names(self) -> list[str]:
        """The joined stream's columns."""
        return list(self.left.names) + [self.physical_right[f] for f in self.right.names]

    def resolve(self, col: exp.Column, span: Span) -> A.Expr:
        side, name = self.which(col, span)
        if self.window_columns and name in ("window_start", "window_end") and \
                name not in (self.left if side == "left" else self.right).names:
            raise UnsupportedError(f"{name} is not available after a window join", span,
                                   hint="select the joined columns; the window is implied")
        return A.FieldRef(name if side == "left" else self.physical_right[name], None, span)

    def stars(self, q: str, span: Span) -> list[tuple[str, str]]:
        """(physical column, SQL name) of ``*`` (q empty) or ``q.*``."""
        left = [(f, f) for f in self.left.names]
        right = [(self.physical_right[f], f) for f in self.right.names]
        if not q:
            return left + right
        if q in (self.left_alias, self.right_alias):
            return left if q == self.left_alias else right
        raise FlowNameError(f"unknown table '{q}'", span,
                            hint=did_you_mean(q, [self.left_alias, self.right_alias]))
