"""fp8 encoding as an NVIDIA GPU does it (cvt.rn.satfinite.{e4m3,e5m2}x2): round to nearest, ties to
even, finite values past the largest one saturate to it, NaN stays NaN.

The bare interpreter's converter truncates the mantissa and rounds ties up without carrying into the
exponent (124.3 becomes 64 in e4m3, not 128). Pure numpy, no triton import: the semantics module
decides when to use it.
"""

from __future__ import annotations

import functools

import numpy as np

# name -> (mantissa bits, exponent bias, largest finite value, NaN bit pattern)
FORMATS = {
    "e4m3": (3, 7, 448.0, 0x7F),
    "e5m2": (2, 15, 57344.0, 0x7F),
}


def encode(values: np.ndarray, fmt: str) -> np.ndarray:
    """fp8 bit patterns (uint8) of float values (any float dtype; fp16/bf16 should be widened first)."""
    man, bias, max_finite, nan_bits = FORMATS[fmt]
    x = np.asarray(values, dtype=np.float64)  # exact for fp16/fp32 inputs: every scaling below is exact
    sign = np.signbit(x).astype(np.uint8) << 7
    a = np.abs(x)
    nan = np.isnan(a)
    a = np.where(nan, 0.0, a)
    emin = 1 - bias  # exponent of the smallest normal number
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        _, e = np.frexp(a)  # a = m * 2**e, 0.5 <= m < 1, so the leading bit is 2**(e-1)
        e = np.maximum(e - 1, emin)
        quantum = np.ldexp(1.0, e - man)  # spacing of representable values around a
        r = np.rint(np.where(np.isinf(a), max_finite, a) / quantum) * quantum  # rint: ties to even
    r = np.minimum(r, max_finite)  # satfinite
    # Encode r (exactly representable now, possibly one binade up after rounding).
    _, e2 = np.frexp(r)
    e2 = e2 - 1
    normal = r >= np.ldexp(1.0, emin)
    exp_field = np.where(normal, e2 + bias, 0)
    mant = np.where(
        normal, r / np.ldexp(1.0, np.where(normal, e2, 0) - man) - (1 << man), r / np.ldexp(1.0, emin - man)
    )
    bits = (exp_field.astype(np.int64) << man) | mant.astype(np.int64)
    bits = np.where(nan, nan_bits, bits).astype(np.uint8)
    out: np.ndarray = (bits | sign).astype(np.uint8)  # numpy's stubs type the `|` of two arrays as Any
    return out


@functools.cache
def decode_table(fmt: str) -> np.ndarray:
    """The float32 value of each of the 256 fp8 bit patterns (read-only, made once): e4m3 is torch's
    float8_e4m3fn (no infinity, NaN at 0x7F and 0xFF), e5m2 is IEEE-like (infinities at 0x7C and 0xFC,
    NaN above them)."""
    man, bias, _max_finite, _nan_bits = FORMATS[fmt]
    b = np.arange(256, dtype=np.int64)
    sign = np.where(b >> 7 == 1, -1.0, 1.0)
    e = (b >> man) & ((1 << (7 - man)) - 1)
    m = b & ((1 << man) - 1)
    frac = np.where(e == 0, m / (1 << man), 1.0 + m / (1 << man))
    value = sign * np.ldexp(frac, np.where(e == 0, 1 - bias, e - bias))
    if fmt == "e5m2":
        top = e == (1 << (7 - man)) - 1
        value = np.where(top & (m == 0), sign * np.inf, value)
        value = np.where(top & (m != 0), np.nan, value)
    else:
        value = np.where((b & 0x7F) == 0x7F, np.nan, value)
    out: np.ndarray = value.astype(np.float32)
    out.flags.writeable = False
    return out
