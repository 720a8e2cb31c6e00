"""Which strategy Flink's planner gives a Top-N (Rank) over an updating input, and what the
pieces before it tell it (Flink 2.3: RankProcessStrategy.analyzeRankProcessStrategies, with
FlinkRelMdUpsertKeys and FlinkRelMdModifiedMonotonicity).

UpdateFastStrategy[key] (flowc.parser.topn_update) when

- the input has an upsert key (a GroupAggregate's group keys, a keep-last deduplication's
  partition key, a Rank's input key, a join side's key when the other side is unique on the
  join key) that contains the Top-N's partition key;
- every ORDER BY column is constant for its row, or only moves towards the top: Flink's
  modified monotonicity (COUNT, MAX and a SUM of non-negative values grow, MIN and a SUM of
  non-positive values shrink, a Rank's first ORDER BY column moves as its input's did);
- nothing in between needs the retractions: a filter on a column outside the upsert key
  (FLINK-9528: ``WHERE cnt < 10`` after an aggregate), a GROUP BY on a changing column, a
  union (no key) make it RetractStrategy.

The facts live in :class:`flowc.sql.changelog.Updating` (``columns``: ``key:<k>`` / CONST
constant, UP / DOWN monotone; ``upsert``; ``fast``), kept by each piece that makes or passes
on an updating result; this module holds the rules, so the translators stay small.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from sqlglot import exp

from flowc.sql.changelog import CONST, DOWN, KEY, UP, Updating


def constant(kind: str | None) -> bool:
    return kind is not None and (kind == CONST or kind.startswith(KEY + ":"))


def update_fast_key(up: Updating, partition: Sequence[str],
                    order: Sequence[tuple[str, bool]]) -> tuple[str, ...] | None:
    """The upsert key of Flink's UpdateFastStrategy over ``up``, or None (RetractStrategy).
    ``order``: (column, descending) per ORDER BY item."""
    key = up.upsert_key()
    if not up.fast or not key or not set(partition) <= set(key) or not order:
        return None
    for name, desc in order:
        kind = up.columns.get(name)
        if not (constant(kind) or kind == (UP if desc else DOWN)):
            return None
    return tuple(key)


def after_filter(up: Updating, cond: exp.Expression) -> Updating:
    """A WHERE / HAVING over an updating piece: on upsert-key columns only the upserts
    still filter alike; on any other column (or an aggregate) a row that stops matching
    must be retracted, so what follows cannot be fed upserts (Flink's FLINK-9528 rule)."""
    key = set(up.upsert_key() or ())
    if any(isinstance(n, exp.AggFunc) for n in cond.walk()) or \
            any(c.name not in key for c in cond.find_all(exp.Column)):
        return replace(up, fast=False)
    return up


def aggregate_columns(up_in: Updating | None, key_names: Sequence[str],
                      group_inputs: Sequence[str | None],
                      calls: Sequence[tuple[str, str | None, bool, str | None]]) -> tuple[
                          dict[str, str], bool]:
    """Monotonicity of a GroupAggregate's output (key columns as ``key:<k>``) and whether a
    Rank after it may take upserts. ``group_inputs``: the input column of each key (None:
    an expression); ``calls``: (output name, UP / DOWN / None as over an insert-only input,
    whether it is a COUNT, its argument column or None)."""
    columns = {k: f"{KEY}:{k}" for k in key_names}
    fast = True
    if up_in is not None:
        # Flink: grouping on a column that changes has no monotonicity (null) at all
        fast = up_in.fast and all(g is not None and constant(up_in.columns.get(g))
                                  for g in group_inputs)
    for name, kind, is_count, arg in calls:
        if kind is None:
            continue
        if up_in is not None and not is_count and \
                (arg is None or up_in.columns.get(arg) != kind):
            continue  # over updates only COUNT keeps its direction whatever its input does
        columns[name] = kind
    return columns, fast


def sum_kind(arg: str, where: exp.Expression | None) -> str | None:
    """SUM's direction from its argument's range in the WHERE (Flink's column interval):
    a lower bound >= 0 makes it grow, else an upper bound <= 0 makes it shrink. Only
    conjuncts ``arg op literal`` (either side) and ``arg BETWEEN lo AND hi`` count."""
    lower: float | None = None
    upper: float | None = None
    stack = [where] if where is not None else []
    while stack:
        n = stack.pop()
        if isinstance(n, exp.Paren):
            stack.append(n.this)
        elif isinstance(n, exp.And):
            stack.extend((n.this, n.expression))
        elif isinstance(n, exp.Between) and _is_col(n.this, arg):
            lo, hi = _number(n.args.get("low")), _number(n.args.get("high"))
            lower = lo if lo is not None and (lower is None or lo > lower) else lower
            upper = hi if hi is not None and (upper is None or hi < upper) else upper
        elif isinstance(n, (exp.GT, exp.GTE, exp.LT, exp.LTE)):
            a, b, greater = n.this, n.expression, isinstance(n, (exp.GT, exp.GTE))
            if _is_col(b, arg):
                a, b, greater = b, a, not greater
            value = _number(b)
            if not _is_col(a, arg) or value is None:
                continue
            if greater:
                lower = value if lower is None or value > lower else lower
            else:
                upper = value if upper is None or value < upper else upper
    if lower is not None:
        return UP if lower >= 0 else None
    if upper is not None:
        return DOWN if upper <= 0 else None
    return None


def _is_col(node: exp.Expression | None, name: str) -> bool:
    return isinstance(node, exp.Column) and node.name == name


def _number(node: exp.Expression | None) -> float | None:
    sign = 1.0
    if isinstance(node, exp.Neg):
        sign, node = -1.0, node.this
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            return sign * float(node.this)
        except ValueError:
            return None
    return None


def rank_output(up_in: Updating | None, node: str, partition: Sequence[str],
                order: Sequence[tuple[str, bool]], rank_col: str | None, dedup: bool,
                on_rowtime: bool) -> Updating:
    """The Updating of a Top-N's output, for a Top-N after it. A keep-last deduplication
    of an insert-only input is keyed by its partition key (constant, the rest changes); a
    Top-N keeps its input's upsert keys that contain its partition key (plus the partition
    key and the rank number when that is output): partition key and rank number constant,
    the first ORDER BY column moving as its input's did towards the top."""
    if dedup:
        keep_last = len(order) == 1 and order[0][1]
        if up_in is not None or not keep_last or on_rowtime:
            # over updates Flink has no monotonicity; a first-row deduplication Flink 2.3
            # declares insert-only (docs/flink-differences.md); a row-time one is a
            # Deduplicate node without monotonicity: a later Top-N retracts
            return Updating(node, (), fast=False)
        columns = {p: CONST for p in (*partition, *([rank_col] if rank_col else []))}
        return Updating(node, (), columns, upsert=tuple(partition))  # rank_col: always 1
    if up_in is not None and (not up_in.fast or
                              not all(constant(up_in.columns.get(p)) for p in partition)):
        return Updating(node, (), fast=False)
    columns = {p: CONST for p in partition}
    if rank_col is not None:
        columns[rank_col] = CONST
    if order:
        first, desc = order[0]
        kind = CONST if up_in is None else up_in.columns.get(first)
        if constant(kind) or kind == (UP if desc else DOWN):
            columns[first] = UP if desc else DOWN
        else:
            columns.pop(first, None)
    key = up_in.upsert_key() if up_in is not None else None
    upsert = tuple(key) if key and set(partition) <= set(key) else None
    if upsert is None and rank_col is not None:
        upsert = (*partition, rank_col)
    return Updating(node, (), columns, upsert=upsert)


def join_output(left: Updating | None, right: Updating | None,
                keys: Sequence[tuple[str, str]], left_names: Sequence[str],
                right_names: dict[str, str], node: str, kind: str) -> Updating:
    """A regular join's Updating: a side's upsert key stays unique when the other side is
    unique on the join key and the join does not pad this side with nulls (Calcite's join
    unique keys; the left one first), the columns keep their monotonicity when neither
    side's join key changes. ``keys``: (left, right) column pairs; ``right_names``: right
    column -> output name; ``kind``: inner, left, right or full."""
    sides = [(left, {k for k, _ in keys}, {c: c for c in left_names}),
             (right, {k for _, k in keys}, right_names)]
    fast = all(u is None or u.fast for u, _, _ in sides)
    columns: dict[str, str] = {}
    for up, join_keys, out in sides:
        if up is None:  # insert-only: every column constant
            columns.update({o: CONST for o in out.values()})
            continue
        if not all(constant(up.columns.get(k)) for k in join_keys):
            fast = False
        columns.update({out[c]: (CONST if constant(k) else k)
                        for c, k in up.columns.items() if c in out})
    upsert: tuple[str, ...] | None = None
    padded = ({"right", "full"}, {"left", "full"})  # joins padding the left / right side
    for i, ((up, join_keys, out), (other, other_keys, _)) in enumerate(
            ((sides[0], sides[1]), (sides[1], sides[0]))):
        if kind in padded[i]:
            continue
        key = up.upsert_key() if up is not None else None
        other_key = other.upsert_key() if other is not None else None
        if key and join_keys <= set(key) and other_key and set(other_key) <= other_keys:
            upsert = tuple(out[c] for c in key)
            break
    return Updating(node, (), columns, upsert=upsert, fast=fast)
