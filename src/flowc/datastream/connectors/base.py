"""``pyflink.datastream.connectors.base``: the sinks' delivery guarantee."""

from __future__ import annotations

from enum import Enum


class DeliveryGuarantee(Enum):
    """Flink's ``DeliveryGuarantee``; the value is Flink SQL's 'sink.delivery-guarantee'."""

    EXACTLY_ONCE = "exactly-once"
    AT_LEAST_ONCE = "at-least-once"
    NONE = "none"


__all__ = ["DeliveryGuarantee"]
