"""``pyflink.common.serialization``: the row encoder of PyFlink's ``FileSink`` and the
Kafka source's value deserializer.

flowc has ``Encoder.simple_string_encoder()`` (each record's ``toString()`` and a newline,
UTF-8) and ``SimpleStringSchema`` (a message value as a UTF-8 string); the other
serialization schemas are absent (docs/flink-differences.md, "PyFlink module layout")."""

from __future__ import annotations

from flowc.errors import ApiError


class Encoder:
    """How ``FileSink.for_row_format`` writes a record: flowc has Flink's
    ``SimpleStringEncoder``."""

    def __init__(self, charset: str) -> None:
        self.charset = charset

    @staticmethod
    def simple_string_encoder(charset_name: str = "UTF-8") -> Encoder:
        if not isinstance(charset_name, str) or charset_name.replace("-", "").upper() != "UTF8":
            from flowc.api.environment import user_call_span

            raise ApiError(f"flowc writes text files as UTF-8, not {charset_name}",
                           user_call_span())
        return Encoder("UTF-8")

    def __repr__(self) -> str:
        return f"SimpleStringEncoder({self.charset})"


class SimpleStringSchema:
    """A Kafka message value as a string (PyFlink's ``SimpleStringSchema``; UTF-8)."""

    def __init__(self, charset: str = "UTF-8") -> None:
        if not isinstance(charset, str) or charset.replace("-", "").upper() != "UTF8":
            from flowc.api.environment import user_call_span

            raise ApiError(f"flowc reads strings as UTF-8, not {charset}", user_call_span())
        self.charset = "UTF-8"

    def __repr__(self) -> str:
        return "SimpleStringSchema(UTF-8)"


__all__ = ["Encoder", "SimpleStringSchema"]
