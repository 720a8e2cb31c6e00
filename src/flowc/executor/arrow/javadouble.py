"""Java 17's ``Double.toString``, which Spark's csv and json writers use for doubles.

JDK 17 (Spark's JVM here) still formats with ``sun.misc.FloatingDecimal``'s Steele-White
digit loop, not the shortest-digits algorithm of JDK 19+ (``flowc.common.typeinfo
.java_double_str``): an integral value below 2^63 prints all its digits
(``1.17918703671061056E17``), and the general loop sometimes stops one digit late or rounds
differently (``1.0E23`` is ``9.999999999999999E22``, ``4.9E-324``). This is that algorithm
on Python integers, including its int / long branches' stopping tests (``>`` where the
big-integer branch has ``>=``) and overflow behaviour, so files written from Arrow batches
are byte-identical to the ones Spark's writers produce on the row executor.
"""

from __future__ import annotations

import struct
from typing import Any

_EXP_SHIFT = 52
_FRACT_HOB = 1 << _EXP_SHIFT
_INSIGNIFICANT = (0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6,
                  7, 7, 7, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 11, 11, 11, 12, 12, 12, 12, 13,
                  13, 13, 14, 14, 14, 15, 15, 15, 15, 16, 16, 16, 17, 17, 17, 18, 18, 18, 19)
# approximately ceil(log2(5^i)), as FloatingDecimal's N_5_BITS
_N_5_BITS = (0, 3, 5, 7, 10, 12, 14, 17, 19, 21, 24, 26, 28, 31, 33, 35, 38, 40, 42, 45,
             47, 49, 52, 54, 56, 59, 61)
_LONG_5_POW_LEN = 27


def _wrap(v: int, bits: int) -> int:
    """Java's two's complement overflow of an int (32) / long (64)."""
    m = 1 << bits
    v &= m - 1
    return v - m if v >= m >> 1 else v


def _estimate_dec_exp(fract: int, bin_exp: int) -> int:
    d2 = struct.unpack("<d", struct.pack("<Q", (1023 << 52) | (fract & (_FRACT_HOB - 1))))[0]
    d = (d2 - 1.5) * 0.289529654 + 0.176091259 + bin_exp * 0.301029995663981
    bits = struct.unpack("<Q", struct.pack("<d", d))[0]
    exponent = ((bits >> 52) & 0x7FF) - 1023
    negative = bits >> 63 != 0
    if 0 <= exponent < 52:
        mask = (_FRACT_HOB - 1) >> exponent
        r = ((bits & (_FRACT_HOB - 1)) | _FRACT_HOB) >> (_EXP_SHIFT - exponent)
        return (-r if bits & mask == 0 else -r - 1) if negative else r
    if exponent < 0:
        return 0 if bits & ~(1 << 63) == 0 else (-1 if negative else 0)
    return int(d)


def _long_digits(lvalue: int, insignificant: int) -> tuple[str, int]:
    dec_exp = 0
    if insignificant:
        pow10 = 10 ** insignificant
        residue = lvalue % pow10
        lvalue //= pow10
        dec_exp += insignificant
        if residue >= pow10 >> 1:
            lvalue += 1
    text = str(lvalue)
    stripped = text.rstrip("0")
    dec_exp += len(text) - len(stripped)
    return stripped, dec_exp + len(stripped)


def _digits(bin_exp: int, fract: int, n_sig: int) -> tuple[str, int]:
    """(digits, decExponent): the value is 0.digits * 10^decExponent."""
    tail_zeros = (fract & -fract).bit_length() - 1
    n_fract_bits = _EXP_SHIFT + 1 - tail_zeros
    n_tiny = max(0, n_fract_bits - bin_exp - 1)
    if -21 <= bin_exp <= 62 and n_tiny < _LONG_5_POW_LEN \
            and n_fract_bits + _N_5_BITS[n_tiny] < 64 and n_tiny == 0:
        p2 = bin_exp - n_sig - 1
        insignificant = _INSIGNIFICANT[p2] if bin_exp > n_sig and 1 < p2 < 64 else 0
        lvalue = fract << (bin_exp - _EXP_SHIFT) if bin_exp >= _EXP_SHIFT \
            else fract >> (_EXP_SHIFT - bin_exp)
        return _long_digits(lvalue, insignificant)
    dec_exp = _estimate_dec_exp(fract, bin_exp)
    b5 = max(0, -dec_exp)
    b2 = b5 + n_tiny + bin_exp
    s5 = max(0, dec_exp)
    s2 = s5 + n_tiny
    m5 = b5
    m2 = b2 - n_sig
    fract >>= tail_zeros
    b2 -= n_fract_bits - 1
    common = min(b2, s2)
    b2 -= common
    s2 -= common
    m2 -= common
    if n_fract_bits == 1:
        m2 -= 1
    if m2 < 0:
        b2 -= m2
        s2 -= m2
        m2 = 0
    b_bits = n_fract_bits + b2 + (_N_5_BITS[b5] if b5 < len(_N_5_BITS) else b5 * 3)
    ten_s_bits = s2 + 1 + (_N_5_BITS[s5 + 1] if s5 + 1 < len(_N_5_BITS) else (s5 + 1) * 3)
    digits: list[int] = []
    b = fract * 5 ** b5 << b2
    s = 5 ** s5 << s2
    m = 5 ** m5 << m2
    tens = s * 10
    e_form = dec_exp < -3 or dec_exp >= 8
    if b_bits < 64 and ten_s_bits < 64:  # FloatingDecimal's int / long branches
        width = 32 if b_bits < 32 and ten_s_bits < 32 else 64
        q, b = divmod(b, s)
        b *= 10
        m = _wrap(m * 10, width)
        low, high = b < m, _wrap(b + m, width) > tens
        if q == 0 and not high:
            dec_exp -= 1
        else:
            digits.append(q)
        if e_form:
            low = high = False
        safe = 1 << (width - 5)  # below it m * 10 and b + m cannot overflow
        while not low and not high:
            q, b = divmod(b, s)
            b *= 10
            if m < safe and b < safe:
                m *= 10
                low, high = b < m, b + m > tens
            else:
                m = _wrap(m * 10, width)
                if m > 0:
                    low, high = b < m, _wrap(b + m, width) > tens
                else:  # Java's hack: m overflowed
                    low = high = True
            digits.append(q)
        low_diff = _wrap((b << 1) - tens, width)
    else:  # the FDBigInteger branch: its high test is >=
        q, b = divmod(b, s)
        b *= 10
        m *= 10
        low, high = b < m, b + m >= tens
        if q == 0 and not high:
            dec_exp -= 1
        else:
            digits.append(q)
        if e_form:
            low = high = False
        while not low and not high:
            q, b = divmod(b, s)
            b *= 10
            m *= 10
            low, high = b < m, b + m >= tens
            digits.append(q)
        low_diff = (b << 1) - tens if high and low else 0
    dec_exponent = dec_exp + 1
    if high and (not low or low_diff > 0 or (low_diff == 0 and digits[-1] & 1)):
        i = len(digits) - 1
        while digits[i] == 9 and i > 0:
            digits[i] = 0
            i -= 1
        if digits[i] == 9:  # carry out: a 1 and a larger exponent
            digits[0] = 1
            dec_exponent += 1
        else:
            digits[i] += 1
    return "".join(map(str, digits)), dec_exponent


def java17_double_str(d: float) -> str:
    """``Double.toString(d)`` as JDK 17 prints it."""
    bits = struct.unpack("<Q", struct.pack("<d", d))[0]
    negative = bits >> 63 != 0
    fract = bits & (_FRACT_HOB - 1)
    bin_exp = (bits >> 52) & 0x7FF
    if bin_exp == 0x7FF:
        return "NaN" if fract else ("-Infinity" if negative else "Infinity")
    if bin_exp == 0:
        if fract == 0:
            return "-0.0" if negative else "0.0"
        leading = 64 - fract.bit_length()
        shift = leading - (63 - _EXP_SHIFT)
        fract <<= shift
        bin_exp = 1 - shift
        n_sig = 64 - leading
    else:
        fract |= _FRACT_HOB
        n_sig = _EXP_SHIFT + 1
    digits, exp = _digits(bin_exp - 1023, fract, n_sig)
    return _format("-" if negative else "", digits, exp)


# -- many values at once ---------------------------------------------------------------------

_POW5 = [5 ** i for i in range(_LONG_5_POW_LEN)]


def java17_double_strs(values: Any) -> list[str]:
    """``java17_double_str`` of each value of a float64 numpy array. Normal non-integral
    values whose digit loop FloatingDecimal runs in long arithmetic without overflow (most
    values) run that loop vectorised with numpy, digit by digit; the rest one by one."""
    import numpy as np

    x = np.ascontiguousarray(values, dtype=np.float64)
    out: list[Any] = [None] * len(x)
    bits = x.view(np.uint64)
    raw_exp = ((bits >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    fract = (bits & np.uint64(_FRACT_HOB - 1)) | np.uint64(_FRACT_HOB)
    e = raw_exp - 1023
    low_bit = fract & (~fract + np.uint64(1))
    tz = np.log2(low_bit.astype(np.float64)).astype(np.int64)  # exact: powers of two
    n_fract = _EXP_SHIFT + 1 - tz
    n_tiny = np.maximum(0, n_fract - e - 1)
    integral = (e >= -21) & (e <= 62) & (n_tiny == 0)
    ok = (raw_exp != 0) & (raw_exp != 0x7FF) & ~integral
    d2 = ((np.uint64(1023 << 52)) | (fract & np.uint64(_FRACT_HOB - 1))).view(np.float64)
    dec = np.floor((d2 - 1.5) * 0.289529654 + 0.176091259 + e.astype(np.float64)
                   * 0.301029995663981).astype(np.int64)
    b5 = np.maximum(0, -dec)
    b2 = b5 + n_tiny + e
    s5 = np.maximum(0, dec)
    s2 = s5 + n_tiny
    m2 = b2 - (_EXP_SHIFT + 1)
    b2 = b2 - (n_fract - 1)
    common = np.minimum(b2, s2)
    b2, s2, m2 = b2 - common, s2 - common, m2 - common
    m2 = m2 - (n_fract == 1)
    neg_m = np.minimum(m2, 0)
    b2, s2, m2 = b2 - neg_m, s2 - neg_m, m2 - neg_m
    n5 = np.asarray(_N_5_BITS, np.int64)

    def bits_of(p5: Any) -> Any:
        return np.where(p5 < len(n5), n5[np.minimum(p5, len(n5) - 1)], p5 * 3)
    b_bits = n_fract + b2 + bits_of(b5)
    ten_s_bits = s2 + 1 + bits_of(s5 + 1)
    ok &= (b_bits < 63) & (ten_s_bits < 63) & (b5 < _LONG_5_POW_LEN) & \
        (s5 < _LONG_5_POW_LEN)
    idx = np.flatnonzero(ok)
    pow5 = np.asarray(_POW5, np.uint64)
    f = (fract[idx] >> tz[idx].astype(np.uint64))
    b = (f * pow5[b5[idx]]) << b2[idx].astype(np.uint64)
    s = pow5[s5[idx]] << s2[idx].astype(np.uint64)
    m = pow5[b5[idx]] << m2[idx].astype(np.uint64)
    tens = s * np.uint64(10)
    small = (b_bits[idx] < 32) & (ten_s_bits[idx] < 32)
    safe = np.where(small, np.uint64(1 << 27), np.uint64(1 << 59))
    dexp = dec[idx].copy()
    e_form = (dexp < -3) | (dexp >= 8)
    bad = (m >= safe) | (b >= safe) | (tens >= safe * np.uint64(10))
    q = b // s
    b = (b % s) * np.uint64(10)
    m = m * np.uint64(10)
    low, high = b < m, b + m > tens
    skip = (q == 0) & ~high
    dexp -= skip
    acc = np.where(skip, np.uint64(0), q)
    ndig = np.where(skip, 0, 1)
    low &= ~e_form
    high &= ~e_form
    active = ~low & ~high & ~bad
    while active.any():
        bad |= active & ((m >= safe) | (b >= safe) | (ndig >= 19))
        active &= ~bad
        if not active.any():
            break
        a = np.flatnonzero(active)
        qa = b[a] // s[a]
        b[a] = (b[a] % s[a]) * np.uint64(10)
        m[a] = m[a] * np.uint64(10)
        low[a], high[a] = b[a] < m[a], b[a] + m[a] > tens[a]
        acc[a] = acc[a] * np.uint64(10) + qa
        ndig[a] += 1
        active = ~low & ~high & ~bad
    two_b = b * np.uint64(2)
    up = high & (~low | (two_b > tens) | ((two_b == tens) & (acc % np.uint64(2) == 1)))
    acc = acc + up.astype(np.uint64)
    dexp = dexp + 1
    for i, failed, n, a, exp, negative in zip(idx.tolist(), bad.tolist(), ndig.tolist(),
                                              acc.tolist(), dexp.tolist(),
                                              (x[idx] < 0).tolist()):
        if failed:
            continue
        text = str(a).zfill(n)
        if len(text) > n:  # the round up carried out of the first digit
            text, exp = text[:n], exp + 1
        out[i] = _format("-" if negative else "", text, exp)
    return [java17_double_str(float(v)) if s_ is None else s_ for v, s_ in zip(x, out)]


def _format(sign: str, digits: str, exp: int) -> str:
    """FloatingDecimal's ``getChars``: plain for 0 < exp < 8 and -3 < exp <= 0, else
    ``d.dddE<n>``."""
    n = len(digits)
    if 0 < exp < 8:
        if n <= exp:
            return f"{sign}{digits}{'0' * (exp - n)}.0"
        return f"{sign}{digits[:exp]}.{digits[exp:]}"
    if -3 < exp <= 0:
        return f"{sign}0.{'0' * -exp}{digits}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exp - 1}"
