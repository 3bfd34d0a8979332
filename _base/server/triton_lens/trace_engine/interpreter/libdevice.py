"""numpy implementations of the device library's functions (CUDA libdevice `__nv_*`, ROCm `__ocml_*`).

The compiler turns `libdevice.tanh(x)` into a call of the symbol its dispatch table picks for the
argument types (`__nv_tanhf` for fp32, `__nv_tanh` for fp64; other types are a compile error). The
interpreter runs that same dispatch (the release's own `extern_elementwise`) and ends in the builder's
`create_extern_elementwise(lib, path, symbol, args, ret_type, pure)`, which the bare interpreter does not
implement. `evaluate(symbol, arrays, np_dtype)` computes it: float math in float64 then rounded to the
return type (within the device library's own error bounds), integer functions bit-exact.
No triton import: the semantics module binds it to the builder.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

# An implementation takes the call's arrays (np.ndarray) and returns what np.asarray makes the result of.
# Its arity is the function's, so the tables name it Callable[..., ...].
_Impl = Callable[..., npt.ArrayLike]
# numpy's stubs type arithmetic on arrays of an unknown dtype (and frompyfunc's results) as Any: the
# `out: np.ndarray = ...` locals below say what such a result is.


class UnsupportedLibdeviceFunction(NotImplementedError):
    pass


def _f(a: npt.ArrayLike) -> np.ndarray:
    return np.asarray(a, dtype=np.float64)


def _vec(fn: Callable[[float], float]) -> Callable[[npt.ArrayLike], np.ndarray]:
    """A scalar math-module function over arrays (numpy has no erf, lgamma, ...)."""
    u = np.frompyfunc(fn, 1, 1)

    def run(a: npt.ArrayLike) -> np.ndarray:
        out: np.ndarray = u(_f(a)).astype(np.float64)  # a frompyfunc ufunc returns Any in numpy's stubs
        return out

    return run


def _safe(fn: Callable[[float], float]) -> Callable[[float], float]:
    def wrapped(x: float) -> float:
        try:
            return fn(x)
        except (ValueError, OverflowError):
            return math.nan if math.isnan(x) or fn is not math.exp else math.inf

    return wrapped


def _lgamma(x: float) -> float:
    try:
        return math.lgamma(x)
    except (ValueError, OverflowError):
        return math.inf


def _tgamma(x: float) -> float:
    try:
        return math.gamma(x)
    except OverflowError:
        return math.inf if x > 0 else math.nan
    except ValueError:
        return math.nan if (x < 0 or math.isnan(x)) else math.copysign(math.inf, x)


def _erfcx(x: float) -> float:
    if x < 25:
        return math.exp(x * x) * math.erfc(x)
    # asymptotic expansion: exp(x^2) erfc(x) ~ 1/(x sqrt(pi)) (1 - 1/(2x^2) + 3/(4x^4))
    t = 1.0 / (x * x)
    return (1.0 - 0.5 * t + 0.75 * t * t) / (x * math.sqrt(math.pi))


def _erfinv(y: float) -> float:
    if math.isnan(y) or y < -1 or y > 1:
        return math.nan
    if y == 1:
        return math.inf
    if y == -1:
        return -math.inf
    # Giles' single-precision approximation as a start, then Newton steps on erf.
    w = -math.log((1.0 - y) * (1.0 + y))
    if w < 5.0:
        w -= 2.5
        p = 2.81022636e-08
        for c in (
            3.43273939e-07,
            -3.5233877e-06,
            -4.39150654e-06,
            0.00021858087,
            -0.00125372503,
            -0.00417768164,
            0.246640727,
            1.50140941,
        ):
            p = c + p * w
    else:
        w = math.sqrt(w) - 3.0
        p = -0.000200214257
        for c in (
            0.000100950558,
            0.00134934322,
            -0.00367342844,
            0.00573950773,
            -0.0076224613,
            0.00943887047,
            1.00167406,
            2.83297682,
        ):
            p = c + p * w
    x = p * y
    for _ in range(3):
        err = math.erf(x) - y
        x -= err / (2.0 / math.sqrt(math.pi) * math.exp(-x * x))
    return x


def _rint_away(a: npt.ArrayLike) -> np.ndarray:  # round(): half away from zero
    a = _f(a)
    out: np.ndarray = np.sign(a) * np.floor(np.abs(a) + 0.5)
    return out


_ROUNDERS = {"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil, "": np.trunc}


def _bits(a: npt.ArrayLike) -> tuple[np.ndarray, int]:
    a = np.asarray(a)
    width = a.dtype.itemsize * 8
    return a.view(np.uint32 if width == 32 else np.uint64).astype(np.uint64), width


def _bit_length(v: np.ndarray) -> np.ndarray:
    n = np.zeros(v.shape, dtype=np.int64)
    v = v.copy()
    for s in (32, 16, 8, 4, 2, 1):
        big = v >= (np.uint64(1) << np.uint64(s))
        n += np.where(big, s, 0)
        v = np.where(big, v >> np.uint64(s), v)
    return n + (v > 0)


def _clz(a: np.ndarray) -> np.ndarray:
    v, width = _bits(a)
    return width - _bit_length(v)


def _popc(a: np.ndarray) -> np.ndarray:
    v, _ = _bits(a)
    count = np.zeros(v.shape, dtype=np.int64)
    for _ in range(64):
        count += (v & np.uint64(1)).astype(np.int64)
        v = v >> np.uint64(1)
    return count


def _ffs(a: np.ndarray) -> np.ndarray:
    v, _ = _bits(a)
    low = v & (~v + np.uint64(1))  # lowest set bit
    return _bit_length(low)


def _brev(a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    v, width = _bits(a)
    out = np.zeros(v.shape, dtype=np.uint64)
    for i in range(width):
        out |= ((v >> np.uint64(i)) & np.uint64(1)) << np.uint64(width - 1 - i)
    return out.astype(np.uint32 if width == 32 else np.uint64).view(a.dtype)


def _mulhi(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.itemsize == 4:  # 32 x 32 -> the high 32 bits, exactly, in 64-bit arithmetic
        wide = np.int64 if a.dtype.kind == "i" else np.uint64
        high: np.ndarray = (a.astype(wide) * b.astype(wide)) >> wide(32)
        return high
    hi = np.frompyfunc(lambda x, y: (int(x) * int(y)) >> 64, 2, 1)(a, b)
    if a.dtype.kind == "u":
        high_u: np.ndarray = hi.astype(object).astype(np.uint64)
        return high_u
    return np.array([int(h) for h in hi.ravel()], dtype=np.int64).reshape(a.shape)


def _mul24(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = np.asarray(a), np.asarray(b)
    m = 0xFFFFFF
    if a.dtype.kind == "i":
        sa = ((a.astype(np.int64) & m) ^ 0x800000) - 0x800000
        sb = ((b.astype(np.int64) & m) ^ 0x800000) - 0x800000
        return (sa * sb).astype(np.int64) & 0xFFFFFFFF
    out: np.ndarray = ((a.astype(np.uint64) & np.uint64(m)) * (b.astype(np.uint64) & np.uint64(m))) & np.uint64(
        0xFFFFFFFF
    )
    return out


def _byte_perm(x: np.ndarray, y: np.ndarray, s: np.ndarray) -> np.ndarray:
    x, y, s = (np.asarray(v).astype(np.uint64) & np.uint64(0xFFFFFFFF) for v in (x, y, s))
    src = x | (y << np.uint64(32))  # bytes 0-3 from x, 4-7 from y
    out = np.zeros(x.shape, dtype=np.uint64)
    for i in range(4):
        sel = (s >> np.uint64(4 * i)) & np.uint64(7)
        out |= ((src >> (sel * np.uint64(8))) & np.uint64(0xFF)) << np.uint64(8 * i)
    return out


def _hadd(a: np.ndarray, b: np.ndarray, round_up: bool = False) -> np.ndarray:
    a, b = np.asarray(a), np.asarray(b)
    wide = np.int64 if a.dtype.kind == "i" else np.uint64
    out: np.ndarray = (a.astype(wide) + b.astype(wide) + wide(1 if round_up else 0)) >> wide(1)
    return out


def _sad(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    a, b, c = np.asarray(a), np.asarray(b), np.asarray(c)
    d = np.abs(a.astype(np.int64) - b.astype(np.int64))
    return d + c.astype(np.int64)


def _ilogb(a: np.ndarray) -> np.ndarray:
    a = _f(a)
    with np.errstate(all="ignore"):
        _, e = np.frexp(a)
    out = (e - 1).astype(np.int64)
    out = np.where(a == 0, -2147483648, out)
    out = np.where(np.isnan(a), -2147483648, out)
    return np.where(np.isinf(a), 2147483647, out)


def _logb(a: np.ndarray) -> np.ndarray:
    a = _f(a)
    with np.errstate(all="ignore"):
        _, e = np.frexp(a)
    out = (e - 1).astype(np.float64)
    out = np.where(a == 0, -np.inf, out)
    return np.where(np.isfinite(a), out, np.abs(a))


def _to_int(kind: str, rnd: str) -> Callable[[npt.ArrayLike], np.ndarray]:
    """float -> int conversions saturate like cvt.rni.s32.f32 and friends; NaN becomes 0."""
    ints: dict[str, type[np.integer]] = {"int": np.int32, "uint": np.uint32, "ll": np.int64, "ull": np.uint64}
    info = np.iinfo(ints[kind])

    def run(a: npt.ArrayLike) -> np.ndarray:
        r = _ROUNDERS[rnd](_f(a))
        r = np.where(np.isnan(r), 0, r)
        return np.clip(r, float(info.min), float(info.max))

    return run


def _view(dtype: type[np.generic]) -> Callable[[np.ndarray], np.ndarray]:
    return lambda a: np.asarray(a).view(dtype)


def _hi_lo(a: np.ndarray) -> np.ndarray:
    return np.asarray(a, dtype=np.float64).view(np.uint64)


def _hiloint2double(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    h = np.asarray(hi).astype(np.int64).astype(np.uint64) & np.uint64(0xFFFFFFFF)
    low = np.asarray(lo).astype(np.int64).astype(np.uint64) & np.uint64(0xFFFFFFFF)
    out: np.ndarray = ((h << np.uint64(32)) | low).view(np.float64)
    return out


def _saturate(a: np.ndarray) -> np.ndarray:
    a = _f(a)
    return np.where(np.isnan(a), 0.0, np.clip(a, 0.0, 1.0))


def _fdim(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a, b = _f(a), _f(b)
    return np.where(np.isnan(a) | np.isnan(b), np.nan, np.maximum(a - b, 0.0))


def _nextafter_native(a: np.ndarray, b: np.ndarray) -> np.ndarray:  # in the argument's own precision
    a, b = np.asarray(a), np.asarray(b)
    out: np.ndarray = np.nextafter(a, b.astype(a.dtype))
    return out


def _rcbrt(a: np.ndarray) -> np.ndarray:
    out: np.ndarray = 1.0 / np.cbrt(_f(a))
    return out


def _remainder(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.frompyfunc(
        lambda x, y: math.remainder(x, y) if y != 0 and math.isfinite(x) else math.nan, 2, 1
    )(_f(a), _f(b)).astype(np.float64)
    return out


# base name -> implementation over float64 (or integer) arrays; the caller casts to the return type.
_FLOAT1: dict[str, _Impl] = {
    "acos": np.arccos,
    "acosh": np.arccosh,
    "asin": np.arcsin,
    "asinh": np.arcsinh,
    "atan": np.arctan,
    "atanh": np.arctanh,
    "cbrt": np.cbrt,
    "ceil": np.ceil,
    "cos": np.cos,
    "cosh": np.cosh,
    "cospi": lambda a: np.cos(np.pi * a),
    "exp": np.exp,
    "exp10": lambda a: np.power(10.0, a),
    "exp2": np.exp2,
    "expm1": np.expm1,
    "fabs": np.abs,
    "floor": np.floor,
    "log": np.log,
    "log10": np.log10,
    "log1p": np.log1p,
    "log2": np.log2,
    "nearbyint": np.rint,
    "rint": np.rint,
    "round": _rint_away,
    "rsqrt": lambda a: 1.0 / np.sqrt(a),
    "sin": np.sin,
    "sinh": np.sinh,
    "sinpi": lambda a: np.sin(np.pi * a),
    "sqrt": np.sqrt,
    "tan": np.tan,
    "tanh": np.tanh,
    "trunc": np.trunc,
    "erf": _vec(math.erf),
    "erfc": _vec(math.erfc),
    "erfcx": _vec(_erfcx),
    "erfinv": _vec(_erfinv),
    "erfcinv": _vec(lambda y: _erfinv(1.0 - y)),
    "lgamma": _vec(_lgamma),
    "tgamma": _vec(_tgamma),
    "normcdf": _vec(lambda x: 0.5 * math.erfc(-x / math.sqrt(2.0))),
    "normcdfinv": _vec(
        lambda p: (
            -math.sqrt(2.0) * _erfinv(1.0 - 2.0 * p)
            if 0 < p < 1
            else (-math.inf if p == 0 else (math.inf if p == 1 else math.nan))
        )
    ),
    "cyl_bessel_i0": np.i0,
    "rcbrt": _rcbrt,
    "saturate": _saturate,
    "logb": _logb,
    "rcp": lambda a: 1.0 / a,
    "frcp": lambda a: 1.0 / a,
    "drcp": lambda a: 1.0 / a,
    "fsqrt": np.sqrt,
    "dsqrt": np.sqrt,
    "frsqrt": lambda a: 1.0 / np.sqrt(a),
    "fast_cos": np.cos,
    "fast_sin": np.sin,
    "fast_tan": np.tan,
    "fast_exp": np.exp,
    "fast_exp10": lambda a: np.power(10.0, a),
    "fast_log": np.log,
    "fast_log2": np.log2,
    "fast_log10": np.log10,
}
_FLOAT2: dict[str, _Impl] = {
    "atan2": np.arctan2,
    "copysign": np.copysign,
    "fdim": _fdim,
    "fmod": np.fmod,
    "hypot": np.hypot,
    "pow": np.power,
    "fast_pow": np.power,
    "powi": np.power,
    "remainder": _remainder,
    "rhypot": lambda a, b: 1.0 / np.hypot(a, b),
    "fmax": np.fmax,
    "fmin": np.fmin,
    "fadd": np.add,
    "dadd": np.add,
    "fsub": np.subtract,
    "dsub": np.subtract,
    "fmul": np.multiply,
    "dmul": np.multiply,
    "fdiv": np.divide,
    "ddiv": np.divide,
    "fast_fdivide": np.divide,
    "div": np.divide,
}
_NATIVE: dict[str, _Impl] = {  # computed in the arguments' own dtype (no widening)
    "nextafter": _nextafter_native,
    "ldexp": lambda a, n: np.ldexp(_f(a), np.asarray(n).astype(np.int64)),
    "scalbn": lambda a, n: np.ldexp(_f(a), np.asarray(n).astype(np.int64)),
    "ilogb": _ilogb,
    "isnan": lambda a: np.isnan(a),
    "isinf": lambda a: np.isinf(a),
    "finite": lambda a: np.isfinite(a),
    "isfinite": lambda a: np.isfinite(a),
    "signbit": lambda a: np.signbit(a),
    "fma": lambda a, b, c: _f(a) * _f(b) + _f(c),
    "norm3d": lambda a, b, c: np.sqrt(_f(a) ** 2 + _f(b) ** 2 + _f(c) ** 2),
    "norm4d": lambda a, b, c, d: np.sqrt(_f(a) ** 2 + _f(b) ** 2 + _f(c) ** 2 + _f(d) ** 2),
    "rnorm3d": lambda a, b, c: 1.0 / np.sqrt(_f(a) ** 2 + _f(b) ** 2 + _f(c) ** 2),
    "rnorm4d": lambda a, b, c, d: 1.0 / np.sqrt(_f(a) ** 2 + _f(b) ** 2 + _f(c) ** 2 + _f(d) ** 2),
    "abs": lambda a: np.abs(np.asarray(a)),
    "llabs": lambda a: np.abs(np.asarray(a)),
    "clz": _clz,
    "clzll": _clz,
    "popc": _popc,
    "popcll": _popc,
    "ffs": _ffs,
    "ffsll": _ffs,
    "brev": _brev,
    "brevll": _brev,
    "mulhi": _mulhi,
    "umulhi": _mulhi,
    "mul64hi": _mulhi,
    "umul64hi": _mulhi,
    "mul24": _mul24,
    "umul24": _mul24,
    "byte_perm": _byte_perm,
    "hadd": _hadd,
    "uhadd": _hadd,
    "rhadd": lambda a, b: _hadd(a, b, True),
    "urhadd": lambda a, b: _hadd(a, b, True),
    "sad": _sad,
    "usad": _sad,
    "llrint": lambda a: _to_int("ll", "rn")(a),
    "llround": lambda a: _to_int("ll", "")(_rint_away(a)),
    "float_as_int": _view(np.int32),
    "float_as_uint": _view(np.uint32),
    "int_as_float": _view(np.float32),
    "uint_as_float": _view(np.float32),
    "double_as_longlong": _view(np.int64),
    "longlong_as_double": _view(np.float64),
    "double2hiint": lambda a: (_hi_lo(a) >> np.uint64(32)).astype(np.uint32).view(np.int32),
    "double2loint": lambda a: (_hi_lo(a) & np.uint64(0xFFFFFFFF)).astype(np.uint32).view(np.int32),
    "hiloint2double": _hiloint2double,
}

# Conversions: name_rn/_rz/_rd/_ru.
_CONVERSION = re.compile(r"^(float|double)2(int|uint|ll|ull)$")
_TO_FLOAT = re.compile(r"^(int|uint|ll|ull|double)2(float|double)$")
_ROUNDING = re.compile(r"^(.*)_(rn|rz|rd|ru)$")
_PREFIX = re.compile(r"^(__nv_|__ocml_|__triton_hip_)")
_TYPE_SUFFIX = re.compile(r"_(f16|f32|f64|i32|i64)$")


def _lookup(name: str, rnd: str) -> tuple[_Impl | None, bool]:
    m = _CONVERSION.match(name)
    if m:
        return _to_int(m.group(2), rnd), False
    if _TO_FLOAT.match(name):
        if rnd not in ("", "rn"):
            return None, False
        return (
            lambda a: _f(a) if np.asarray(a).dtype.itemsize < 8 or np.asarray(a).dtype.kind == "f" else np.asarray(a)
        ), True
    if rnd not in ("", "rn") and name not in ("fma", "fmaf"):
        return None, False
    for table, widen in ((_FLOAT1, True), (_FLOAT2, True), (_NATIVE, False)):
        if name in table:
            return table[name], widen
    return None, False


def resolve(symbol: str) -> tuple[_Impl | None, bool]:
    """(implementation, widen-to-float64) for a device-library symbol, or (None, False)."""
    name = _TYPE_SUFFIX.sub("", _PREFIX.sub("", symbol))
    rnd = ""
    m = _ROUNDING.match(name)
    if m:
        name, rnd = m.group(1), m.group(2)
    impl, widen = _lookup(name, rnd)
    if impl is None and len(name) > 1 and name[-1] in "fd":  # __nv_tanhf (fp32), __nv_isnand (fp64)
        impl, widen = _lookup(name[:-1], rnd)
    return impl, widen


def evaluate(symbol: str, arrays: list[np.ndarray], out_dtype: np.dtype, function: str = "") -> np.ndarray:
    impl, widen = resolve(symbol)
    if impl is None:
        label = function or symbol
        types = ", ".join(str(np.asarray(a).dtype) for a in arrays)
        raise UnsupportedLibdeviceFunction(
            f"libdevice.{label} ({symbol}, on {types}) is not implemented under Triton Lens: the CPU interpreter cannot call "
            f"the GPU's device library and this function has no numpy equivalent here yet. Use a tl.* or "
            f"tl.math function instead, or report it so it can be added."
        )
    args = [np.asarray(a) for a in arrays]
    with np.errstate(all="ignore"):
        if widen:
            args = [_f(a) if a.dtype.kind == "f" else a for a in args]
        out = np.asarray(impl(*args))
        if out.dtype == object:
            out = out.astype(np.float64)
        if np.dtype(out_dtype).kind in "iu" and out.dtype.kind == "f":
            info = np.iinfo(out_dtype)
            out = np.clip(np.where(np.isnan(out), 0, out), info.min, info.max)
        if np.dtype(out_dtype).kind in "iu" and out.dtype.kind in "iu" and out.dtype != out_dtype:
            return out.astype(np.int64 if out.dtype.kind == "i" else np.uint64).astype(out_dtype)
        return out.astype(out_dtype)
