"""tl.dot of float32 tiles as an NVIDIA GPU computes it, for each input precision the frontend hands the
builder (Triton's own core.dot / semantic.dot run under the interpreter too, so the precision that
reaches create_dot is the compiler's: the explicit input_precision, else allow_tf32, else
TRITON_F32_DEFAULT, else the backend's default "tf32", on every release 3.2 - 3.9).

- "tf32": the tensor cores take each float32 operand with its low 13 mantissa bits dropped
  (truncation: measured on an H200, tests/gpu/tf32_probe.py and its result in tests/gpu/results:
  0 mismatches with truncation over every single product, 2/3 of them differ from round-to-nearest);
  a product of two TF32 numbers is exact in float32, the sums are float32.
- "tf32x3": the compiler's F32DotTC pass splits each operand, big = cvt.rna.tf32.f32(x) (round to
  nearest, ties away), small = x - big, and sums three TF32 dots, small*big + big*small (a NaN of those
  taken as 0, as the pass does since it masks them) + big*big: within ~1e-7 of IEEE float32.
- "bf16x3" and "bf16x6" (3.6+ on NVIDIA): the compiler's BF16xN pattern splits each operand into two
  (three) bfloat16 parts, hi = bf16(x) rounded to nearest even, the next part bf16 of what is left,
  and sums the IEEE dots of the part pairs it keeps, the small ones first (bf16x3: mid*hi, hi*mid;
  bf16x6: mid*mid, lo*hi, hi*lo, mid*hi, hi*mid), a NaN of those taken as 0, then hi*hi, then the
  accumulator. A product of two bfloat16 numbers is exact in float32, the sums are float32.
- "ieee" (and anything else): the IEEE float32 product, what the bare interpreter computes.

Pure numpy, no triton import: semantics.py decides when to use it.
"""

from __future__ import annotations

import numpy as np

_LOW = np.uint32(0x1FFF)  # the 13 mantissa bits TF32 drops


def truncate(x: np.ndarray) -> np.ndarray:
    """float32 -> TF32 as the tensor cores take it: the low 13 mantissa bits dropped (NaN stays NaN)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    out = (x.view(np.uint32) & ~_LOW).view(np.float32)
    return np.where(np.isnan(x), x, out)


def round_away(x: np.ndarray) -> np.ndarray:
    """float32 -> TF32 by cvt.rna.tf32.f32: to nearest, ties away from zero (a carry into the exponent
    is the next binade; past the largest TF32 value, infinity). Non-finite values stay as they are."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64) + 0x1000  # half of the dropped part, on the magnitude
    out = ((bits & 0xFFFFE000) & 0xFFFFFFFF).astype(np.uint32).view(np.float32)
    return np.where(np.isfinite(x), out, x)


def bf16_bits(data: np.ndarray) -> np.ndarray:
    """fp32/fp64 -> bf16 bit patterns, rounding to nearest even (cvt.rn.bf16.f32; torch agrees); the bare
    interpreter truncates. Overflow becomes inf, NaN stays a quiet NaN."""
    bits = np.ascontiguousarray(data, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(np.asarray(data))
    return np.where(nan, ((bits >> 16) | 0x40).astype(np.uint16), rounded)


def to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 -> the nearest bfloat16 (ties to even), kept as float32 (arith.truncf, cvt.rn.bf16.f32)."""
    bits = bf16_bits(x).astype(np.uint32) << 16
    return bits.view(np.float32).reshape(np.shape(x))


def _bf16_parts(x: np.ndarray, n: int) -> list[np.ndarray]:
    """x as n bfloat16 parts, largest first: each part rounds what the parts before it left."""
    parts = []
    for i in range(n):
        part = to_bf16(x)
        if i != n - 1:
            x = (x - part).astype(np.float32)
        parts.append(part)
    return parts


# The part pairs (a's, b's; 0 = hi) summed before hi * hi, in the compiler's order.
_BF16_PAIRS = {"bf16x3": ((1, 0), (0, 1)), "bf16x6": ((1, 1), (2, 0), (0, 2), (1, 0), (0, 1))}


def dot(a: np.ndarray, b: np.ndarray, acc: np.ndarray, precision: str) -> np.ndarray:
    """acc + a @ b for float32 a, b (2-D or batched 3-D), as the GPU computes it at this precision."""
    # numpy's stubs type matmul with a dtype, and the sum of two arrays, as Any: `out` says what it is.
    out: np.ndarray
    with np.errstate(all="ignore"):
        if precision == "tf32":
            out = np.matmul(truncate(a), truncate(b), dtype=np.float32) + acc
            return out
        if precision == "tf32x3":
            a_big, b_big = round_away(a), round_away(b)
            a_small = np.where(np.isfinite(a), a - a_big, np.float32(0)).astype(np.float32)
            b_small = np.where(np.isfinite(b), b - b_big, np.float32(0)).astype(np.float32)
            low = np.matmul(truncate(a_small), truncate(b_big), dtype=np.float32)
            low = low + np.matmul(truncate(a_big), truncate(b_small), dtype=np.float32)
            low = np.where(np.isnan(low), np.float32(0), low)
            out = (np.matmul(truncate(a_big), truncate(b_big), dtype=np.float32) + low) + acc
            return out
        pairs = _BF16_PAIRS.get(precision)
        if pairs is not None:
            n = 2 if precision == "bf16x3" else 3
            ap, bp = _bf16_parts(a, n), _bf16_parts(b, n)
            low = np.zeros(np.broadcast_shapes(acc.shape), dtype=np.float32)
            for i, j in pairs:
                low = np.matmul(ap[i], bp[j], dtype=np.float32) + low
            low = np.where(np.isnan(low), np.float32(0), low)
            out = (np.matmul(ap[0], bp[0], dtype=np.float32) + low) + acc
            return out
        out = np.matmul(a, b, dtype=np.float32) + acc
        return out
