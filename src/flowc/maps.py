"""SQL's MAP type at run time: a Python dict, iterated (and printed) in the order Java's
``HashMap`` iterates, since that is the order Flink prints a map in (``{a=1, b=2}``)."""

from __future__ import annotations

import re
from typing import Any


def _java_hash(v: Any) -> int:
    """``hashCode`` of a Java String / Long / Boolean, as a signed 32-bit int."""
    if isinstance(v, bool):
        return 1231 if v else 1237
    if isinstance(v, int):
        h = (v ^ (v >> 32)) & 0xFFFFFFFF
    else:
        h = 0
        for unit in str(v).encode("utf-16-be").hex(" ", 2).split():
            h = (31 * h + int(unit, 16)) & 0xFFFFFFFF
    return h


def hash_order(m: dict[Any, Any]) -> dict[Any, Any]:
    """``m`` re-ordered as a ``HashMap`` filled in ``m``'s order iterates: by bucket
    (``(h ^ h >>> 16) & (capacity - 1)``, capacity 16 doubled beyond 3/4 full), insertion
    order within a bucket."""
    capacity = 16
    while len(m) > capacity * 3 // 4:
        capacity *= 2

    def bucket(k: Any) -> int:
        if k is None:
            return 0
        h = _java_hash(k)
        return (h ^ (h >> 16)) & (capacity - 1)
    order = sorted(enumerate(m), key=lambda ik: (bucket(ik[1]), ik[0]))
    return {k: m[k] for _, k in order}


def str_to_map(text: Any, list_delimiter: Any = ",", kv_delimiter: Any = "=") -> Any:
    """Flink's STR_TO_MAP: ``text`` split on the regex ``list_delimiter``, each pair on the
    first ``kv_delimiter`` (a pair without one maps to null); a later key wins."""
    if text is None or list_delimiter is None or kv_delimiter is None:
        return None
    out: dict[str, Any] = {}
    if text == "":
        return out
    for pair in _java_split(text, list_delimiter):
        kv = _java_split(pair, kv_delimiter, 2)
        out[kv[0]] = kv[1] if len(kv) > 1 else None
    return hash_order(out)


def _java_split(s: str, regex: str, limit: int = 0) -> list[str]:
    """Java's ``String.split``: trailing empty strings dropped (limit 0), at most ``limit``
    parts otherwise; a leading empty string from a zero-width match at 0 dropped."""
    parts = re.split(regex, s, maxsplit=max(limit - 1, 0)) if s else [""]
    if limit == 0:
        while len(parts) > 1 and parts[-1] == "":
            parts.pop()
    return parts


def map_text(m: dict[Any, Any], value_text: Any) -> str:
    """``AbstractMap.toString``: ``{k=v, k2=v2}``."""
    return "{" + ", ".join(f"{value_text(k, '')}={value_text(v, '')}"
                           for k, v in m.items()) + "}"


def cast_map_string(m: Any) -> Any:
    """CAST(map AS STRING) as Flink writes it: ``{k=v}``, a null as ``NULL``."""
    if m is None:
        return None
    return "{" + ", ".join(f"{_cast_text(k)}={_cast_text(v)}" for k, v in m.items()) + "}"


def _cast_text(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    return str(v)


HELPERS = {"str_to_map": str_to_map, "cast_map_string": cast_map_string}
