"""Flink's key-group assignment with Java ``hashCode`` semantics (never Python's ``hash()``,
which is salted per process)."""

from __future__ import annotations

import math
import struct
from typing import Any

from flowc.errors import ExecutionError, PlanError

UPPER_BOUND_MAX_PARALLELISM = 1 << 15
DEFAULT_LOWER_BOUND_MAX_PARALLELISM = 1 << 7
_M32 = 0xFFFFFFFF


def _i32(x: int) -> int:
    x &= _M32
    return x - (1 << 32) if x >= (1 << 31) else x


def _rotl(x: int, r: int) -> int:
    x &= _M32
    return ((x << r) | (x >> (32 - r))) & _M32


def string_hash(s: str) -> int:
    """Java ``String.hashCode`` over UTF-16 code units."""
    h = 0
    data = s.encode("utf-16-le", "surrogatepass")
    for (unit,) in struct.iter_unpack("<H", data):
        h = (31 * h + unit) & _M32
    return _i32(h)


def long_hash(v: int) -> int:
    if not -(1 << 63) <= v < (1 << 63):
        raise ExecutionError(f"key {v} does not fit in a 64-bit long")
    u = v & 0xFFFFFFFFFFFFFFFF
    return _i32(u ^ (u >> 32))


def double_hash(d: float) -> int:
    if math.isnan(d):
        bits = 0x7FF8000000000000  # Double.doubleToLongBits canonicalises NaN
    else:
        (bits,) = struct.unpack("<q", struct.pack("<d", d))
        bits &= 0xFFFFFFFFFFFFFFFF
    return _i32(bits ^ (bits >> 32))


def java_hash_code(key: Any) -> int:
    """``hashCode()`` of the key as Flink sees it: str -> String, int -> Long, float -> Double,
    bool -> Boolean, tuple -> Flink Tuple. A null key fails, as in Flink."""
    if key is None:
        raise ExecutionError("Assigned key must not be null!")
    if isinstance(key, bool):
        return 1231 if key else 1237
    if isinstance(key, int):
        return long_hash(key)
    if isinstance(key, float):
        return double_hash(key)
    if isinstance(key, str):
        return string_hash(key)
    if isinstance(key, tuple):
        h = 0
        for f in key:
            h = _i32(31 * h + (0 if f is None else java_hash_code(f)))
        return h
    raise ExecutionError(f"cannot use a value of type {type(key).__name__} as a key "
                         "(keys must be str, int, float, bool or tuples of them)")


def murmur_hash(code: int) -> int:
    """Flink's ``MathUtils.murmurHash(int)``: non-negative."""
    c = code & _M32
    c = (c * 0xCC9E2D51) & _M32
    c = _rotl(c, 15)
    c = (c * 0x1B873593) & _M32
    c = _rotl(c, 13)
    c = (c * 5 + 0xE6546B64) & _M32
    c ^= 4
    # fmix32
    c ^= c >> 16
    c = (c * 0x85EBCA6B) & _M32
    c ^= c >> 13
    c = (c * 0xC2B2AE35) & _M32
    c ^= c >> 16
    s = _i32(c)
    if s >= 0:
        return s
    if s != -(1 << 31):
        return -s
    return 0


def murmur_hash_array(codes: Any) -> Any:
    """``murmur_hash`` of every int32 hash code in a numpy array (vectorised)."""
    import numpy as np

    m = np.uint64(_M32)

    def rotl(x: Any, r: int) -> Any:
        return ((x << np.uint64(r)) | (x >> np.uint64(32 - r))) & m
    c = codes.astype(np.int64).astype(np.uint64) & m
    c = (c * np.uint64(0xCC9E2D51)) & m
    c = rotl(c, 15)
    c = (c * np.uint64(0x1B873593)) & m
    c = rotl(c, 13)
    c = (c * np.uint64(5) + np.uint64(0xE6546B64)) & m
    c ^= np.uint64(4)
    c ^= c >> np.uint64(16)
    c = (c * np.uint64(0x85EBCA6B)) & m
    c ^= c >> np.uint64(13)
    c = (c * np.uint64(0xC2B2AE35)) & m
    c ^= c >> np.uint64(16)
    s = c.astype(np.int64)
    s = np.where(s >= 1 << 31, s - (1 << 32), s)  # as a Java int
    return np.where(s >= 0, s, np.where(s != -(1 << 31), -s, 0))


def assign_to_key_group(key: Any, max_parallelism: int) -> int:
    return murmur_hash(java_hash_code(key)) % max_parallelism


def operator_index_for_key_group(max_parallelism: int, parallelism: int, key_group: int) -> int:
    return key_group * parallelism // max_parallelism


def assign_key_to_parallel_operator(key: Any, max_parallelism: int, parallelism: int) -> int:
    return operator_index_for_key_group(
        max_parallelism, parallelism, assign_to_key_group(key, max_parallelism))


def key_group_range(max_parallelism: int, parallelism: int, index: int) -> tuple[int, int]:
    """Inclusive key-group range owned by subtask ``index``."""
    start = (index * max_parallelism + parallelism - 1) // parallelism
    end = ((index + 1) * max_parallelism - 1) // parallelism
    return start, end


def _round_up_to_power_of_two(x: int) -> int:
    return 1 if x <= 1 else 1 << (x - 1).bit_length()


def default_max_parallelism(parallelism: int) -> int:
    if not 0 < parallelism <= UPPER_BOUND_MAX_PARALLELISM:
        raise PlanError(f"Operator parallelism not within bounds: {parallelism}",
                        java_class="IllegalArgumentException")
    return min(max(_round_up_to_power_of_two(parallelism + parallelism // 2),
                   DEFAULT_LOWER_BOUND_MAX_PARALLELISM), UPPER_BOUND_MAX_PARALLELISM)
