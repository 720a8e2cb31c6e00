"""State by operator id: the stateful operators of a plan."""

from flowc.savepoint.stateful import StatefulOperator, stateful_operators

__all__ = ["StatefulOperator", "stateful_operators"]
