"""``SELECT DISTINCT``, ``UNION`` (without ``ALL``), ``INTERSECT`` and ``EXCEPT`` in BATCH
mode, where a keyed aggregation emits one final row per key (a bounded job): a GROUP BY of
every column. In STREAMING mode Flink keeps every row seen in state and emits changes (a row
of ``EXCEPT`` is retracted when the right side catches up); flowc has no such operator, so
they are positioned errors there.

INTERSECT and EXCEPT tag each side's rows (``_setop_l``, ``_setop_r``), union them, keep the
per-row maximum of the tags and filter: in both sides (INTERSECT), in the left only
(EXCEPT). Both are set operations (distinct rows, nulls equal), as in SQL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from flowc.errors import Span, UnsupportedError
from flowc.parser import ast as A
from flowc.types import INT

if TYPE_CHECKING:
    from flowc.sql.query import Piece, QueryTranslator

_L, _R = "_setop_l", "_setop_r"
BATCH_HINT = "it is supported in BATCH mode: SET 'execution.runtime-mode' = 'batch'"


def streaming_error(what: str, span: Span) -> UnsupportedError:
    return UnsupportedError(f"{what} is not supported in STREAMING mode (flowc has no "
                            "operator that keeps every row seen and revises its output)", span,
                            hint=BATCH_HINT)


def _ref(name: str, span: Span) -> A.FieldRef:
    return A.FieldRef(name, None, span)


def _items(names: list[str], span: Span) -> tuple[A.SelectItem, ...]:
    return tuple(A.SelectItem(_ref(n, span), None, span) for n in names)


def _agg(fn: str, arg: str | None, alias: str, span: Span) -> A.SelectItem:
    call = A.Call(fn, () if arg is None else (_ref(arg, span),), span, span, star=arg is None)
    return A.SelectItem(call, alias, span)


def distinct_steps(names: list[str], span: Span) -> list[A.Step]:
    """One row per distinct row of a stream with columns ``names`` (BATCH)."""
    return [A.KeyByStep(tuple(_ref(n, span) for n in names), span, row_key=True),
            A.AggregateStep((_agg("count", None, "_setop_n", span),), span),
            A.MapStep(_items(names, span), span)]


def tag_step(names: list[str], left: bool, span: Span) -> A.MapStep:
    """The left or right input of INTERSECT / EXCEPT, tagged."""
    def lit(v: int, alias: str) -> A.SelectItem:
        return A.SelectItem(A.Literal(v, INT, span), alias, span)
    return A.MapStep(_items(names, span) + (lit(int(left), _L), lit(int(not left), _R)),
                     span)


def intersect_except_steps(names: list[str], kind: str, span: Span) -> list[A.Step]:
    """Over the union of the two tagged inputs: the rows INTERSECT / EXCEPT keeps."""
    def eq(col: str, v: int) -> A.Binary:
        return A.Binary("=", _ref(col, span), A.Literal(v, INT, span), span)
    keep = A.Binary("and", eq(_L, 1), eq(_R, 1 if kind == "intersect" else 0), span)
    return [A.KeyByStep(tuple(_ref(n, span) for n in names), span, row_key=True),
            A.AggregateStep((_agg("max", _L, _L, span), _agg("max", _R, _R, span)), span),
            A.FilterStep(keep, span),
            A.MapStep(_items(names, span), span)]


def _piece() -> type[Piece]:
    from flowc.sql.query import Piece  # query.py imports this module

    return Piece


def distinct(qt: QueryTranslator, piece: Piece, span: Span) -> Piece:
    """One row per distinct row of ``piece``."""
    name = qt.named(piece)
    schema = qt.catalog.schema_of(name)
    assert schema is not None
    names = list(schema.names)
    return _piece()((A.FieldRef(name, None, span),), distinct_steps(names, span), names, name,
                    span, updating=piece.updating)


def intersect_except(qt: QueryTranslator, node: exp.Intersect | exp.Except) -> Piece:
    what = node.key.upper()
    span = qt.spans(node)
    if not node.args.get("distinct"):
        raise UnsupportedError(f"{what} ALL is not supported", span,
                               hint=f"{what} (without ALL) is, in BATCH mode")
    if not qt.catalog.is_batch():
        raise streaming_error(what, span)
    for mod in ("order", "limit"):
        if node.args.get(mod) is not None:
            qt._modifier(node, mod)  # noqa: SLF001 - the translator's own check
    piece_t = _piece()
    branches = [node.this, node.expression]
    pieces = [qt.query(b) for b in branches]
    refs = qt._union_inputs(branches, [qt.named(p) for p in pieces], pieces)  # noqa: SLF001
    schema = qt.catalog.schema_of(refs[0].name)
    assert schema is not None
    names = list(schema.names)
    tagged = [qt.named(piece_t((ref,), [tag_step(names, i == 0, span)], None, ref.name, span,
                               updating=p.updating))
              for i, (ref, p) in enumerate(zip(refs, pieces))]
    union = piece_t(tuple(A.FieldRef(t, None, span) for t in tagged), [], None, tagged[0],
                    span, head_is_union=True)
    return piece_t((A.FieldRef(qt.named(union), None, span),),
                   intersect_except_steps(names, node.key, span), names, tagged[0], span)
