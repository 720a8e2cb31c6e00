"""State converters between columnar chain members and the row path's snapshot, by member
kind, for the streaming executor's columnar micro-batches (``columnar.py``).

A converter moves one member's state into the opened row operator whose
``task.operator_state`` is the member's ``op_<operator id>`` entry, and back; its
``inner`` gives the row operator a member runs itself (nothing to convert). Stateless
members that only keep the row operator's watermark (and their functions' data fields)
are ``MAP_LIKE``. Sessions: ``session_state.py``; joins: ``interval_state.py``,
``window_join_state.py``. The window aggregate's converter (``window_state.py``) predates this
registry and is called by ``columnar.py`` directly.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flowc.executor.arrow.chain import Member

# Members with a row operator of watermark and function fields only: a rolling aggregate's
# start (a map) and its changelog flat map (``pass``); a window join's tagging map
# (``tag``: the columnar edge carries the side's own records).
MAP_LIKE = ("rolling_start", "pass", "tag")


@dataclass(frozen=True)
class Converter:
    why_not: Callable[[Member], str | None]  # why the member's state has no row form
    to_row: Callable[[Any, Any, Member], None]  # (columnar member, row operator, member)
    from_row: Callable[[Any, Any, Member], None]  # (row operator, columnar member, member)
    inner: Callable[[Any], Any] = lambda c: None  # the row operator the member runs


def _rolling_why_not(m: Member) -> str | None:
    from flowc.executor.streaming.rolling_state import why_not

    why = why_not(m.spec)
    return None if why is None else f"'{m.name}' (a rolling aggregate): {why}"


def _rolling_to_row(c: Any, op: Any, m: Member) -> None:
    from flowc.executor.streaming.rolling_state import rolling_to_row

    if m.spec.agg is not None:
        rolling_to_row(c, op, m.spec.fn.agg)


def _rolling_from_row(op: Any, c: Any, m: Member) -> None:
    from flowc.executor.streaming.rolling_state import rolling_from_row

    if m.spec.agg is not None:
        rolling_from_row(op, c)


def _rolling_inner(c: Any) -> Any:
    """Over an updating input the member is the row ReduceOperator (``rowop.RollingRows``)."""
    from flowc.executor.arrow.rowop import RollingRows

    return c.op if isinstance(c, RollingRows) else None


def _session_to_row(c: Any, op: Any, m: Member) -> None:
    from flowc.executor.streaming.session_state import session_to_row

    session_to_row(c, op, m.in_schema)


def _session_from_row(op: Any, c: Any, m: Member) -> None:
    from flowc.executor.streaming.session_state import session_from_row

    session_from_row(op, c, m.in_schema)


def _interval_why_not(m: Member) -> str | None:
    if getattr(m.spec.op, "table", False):  # SQL's: the table runtime's operator
        return f"'{m.name}' is a SQL interval join (it runs row by row)"
    return None


def _interval_to_row(c: Any, op: Any, m: Member) -> None:
    from flowc.executor.streaming.interval_state import interval_to_row

    interval_to_row(c, op)


def _interval_from_row(op: Any, c: Any, m: Member) -> None:
    from flowc.executor.streaming.interval_state import interval_from_row

    interval_from_row(op, c)


def _window_join_to_row(c: Any, op: Any, m: Member) -> None:
    from flowc.executor.streaming.window_join_state import window_join_to_row

    window_join_to_row(c, op)


def _window_join_from_row(op: Any, c: Any, m: Member) -> None:
    from flowc.executor.streaming.window_join_state import window_join_from_row

    window_join_from_row(op, c)


CONVERTERS: dict[str, Converter] = {
    "rolling": Converter(_rolling_why_not, _rolling_to_row, _rolling_from_row, _rolling_inner),
    # an event-time session window (``session_state.py``: merged sessions, accumulators,
    # timers); ``arrow/plan.py`` plans only the kinds its vector form has
    "session": Converter(lambda m: None, _session_to_row, _session_from_row),
    # a DataStream interval join head (``interval_state.py``: the buffers and their
    # cleanup timers); ``columnar.py`` feeds it both inputs' channels
    "interval_join": Converter(_interval_why_not, _interval_to_row, _interval_from_row),
    # a window join head: the tagged union's WindowOperator (``window_join_state.py``)
    "window_join": Converter(lambda m: None, _window_join_to_row, _window_join_from_row),
}
