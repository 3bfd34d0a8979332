"""tl.dot of float32 tiles: TF32 on an NVIDIA GPU (operands truncated to 10 mantissa bits, as measured on
an H200 by tests/gpu/tf32_probe.py), and so in the run: its values are the TF32 products, bit for bit
those of a numpy emulation, and the tl.dot says how far they are from IEEE float32. The precision is the
one the compiler picks: input_precision, allow_tf32, TRITON_F32_DEFAULT, else "tf32"; an "ieee" dot is
IEEE, a "tf32x3" one within a few ulps of it; half-precision operands get no finding, and the roofline
uses the rate each dot really runs at."""

from __future__ import annotations

import os
import re
import textwrap

import numpy as np
import pytest

from triton_lens.analysis import analyze
from triton_lens.trace_engine.interpreter import tf32 as tf32_emulation
from triton_lens.trace_engine.process.runner import RunRequest, run
from triton_lens.trace_engine.recording.recorder import tf32_deviation

pytestmark = pytest.mark.engine

SCRIPT = """
import torch
import triton
import triton.language as tl


@triton.jit
def mm(a_ptr, b_ptr, c_ptr, N: tl.constexpr, PRECISION: tl.constexpr):
    r = tl.arange(0, N)
    a = tl.load(a_ptr + r[:, None] * N + r[None, :])
    b = tl.load(b_ptr + r[:, None] * N + r[None, :])
    if PRECISION == "default":
        c = tl.dot(a, b)
    elif PRECISION == "no_tf32":
        c = tl.dot(a, b, allow_tf32=False)
    elif PRECISION == "allow_tf32":
        c = tl.dot(a, b, allow_tf32=True)
    else:
        c = tl.dot(a, b, input_precision=PRECISION)
    tl.store(c_ptr + r[:, None] * N + r[None, :], c)


torch.manual_seed(0)
DTYPE = {dtype}
a, b = torch.randn(32, 32).to(DTYPE), torch.randn(32, 32).to(DTYPE)
c = torch.empty(32, 32)
mm[(1,)](a, b, c, N=32, PRECISION="{precision}")
torch.save((a, b, c), "out.pt")
"""


def _run(tmp_path, precision="default", dtype="torch.float32", env=None):
    path = tmp_path / "mm.py"
    path.write_text(textwrap.dedent(SCRIPT.format(precision=precision, dtype=dtype)))
    result = run(RunRequest(path=str(path), cwd=str(tmp_path), timeout_s=120.0, env=env))
    assert result.status == "ok", result.error
    return analyze(result)


def _tf32(x: np.ndarray) -> np.ndarray:
    return (x.astype(np.float32).view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)


def _outputs(tmp_path):
    import torch

    a, b, c = torch.load(tmp_path / "out.pt")
    return a.numpy(), b.numpy(), c.numpy()


def _is_tf32(tmp_path) -> None:
    """The run's product is the TF32 one bit for bit (truncated operands, float32 sums), not IEEE's."""
    a, b, c = _outputs(tmp_path)
    want = np.matmul(_tf32(a), _tf32(b), dtype=np.float32)
    assert np.array_equal(c, want)
    assert not np.array_equal(c, np.matmul(a, b, dtype=np.float32))


def _is_ieee(tmp_path) -> None:
    a, b, c = _outputs(tmp_path)
    assert np.array_equal(c, np.matmul(a, b, dtype=np.float32))


def test_the_deviation_is_that_of_truncated_operands():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((16, 24)).astype(np.float32), rng.standard_normal((24, 8)).astype(np.float32)
    dev, mag = tf32_deviation(a, b)
    exact = a @ b
    assert dev == pytest.approx(float(np.abs(_tf32(a) @ _tf32(b) - exact).max()), rel=1e-6)
    assert mag == pytest.approx(float(np.abs(exact).max()))
    assert 1e-4 < dev / mag < 2e-2  # 10 of 23 mantissa bits kept
    # Operands exact in TF32 (few mantissa bits) give the same products.
    assert tf32_deviation(np.round(a * 4) / 4, np.round(b * 4) / 4)[0] == 0.0
    # Non-finite entries are left out, not propagated.
    a[0, 0] = np.inf
    assert np.isfinite(tf32_deviation(a, b)[0])


def test_a_default_float32_dot_says_it_runs_in_tf32_with_the_measured_deviation(tmp_path):
    an = _run(tmp_path)
    found = [f for f in an.findings if f.kind == "tf32"]
    assert len(found) == 1 and found[0].severity == "information"
    f = found[0]
    dot_line = textwrap.dedent(SCRIPT).splitlines().index("        c = tl.dot(a, b)") + 1
    assert f.line == dot_line and f.col > 0  # the tl.dot call
    assert 'input_precision="ieee"' in f.message and "TRITON_F32_DEFAULT=ieee" in f.message
    # The number in the message is the deviation of this run's own tiles.
    import torch

    a, b, _ = torch.load(tmp_path / "out.pt")
    want = float(np.abs(_tf32(a.numpy()) @ _tf32(b.numpy()) - a.numpy() @ b.numpy()).max())
    said = float(re.search(r"by up to ([0-9.e+-]+)", f.message).group(1))
    assert said == pytest.approx(want, rel=0.05)
    assert not [f for f in an.findings if f.severity in ("error", "warning")]
    assert an.performance.dots[0].precision == "tf32"
    # The values are the GPU's: TF32 products, and the message says so.
    _is_tf32(tmp_path)
    assert "so do this run's values" in f.message


def test_tf32_truncates_and_keeps_non_finite_values():
    x = np.array([1.0 + 2.0**-11, -(1.0 + 2.0**-11), 1.0 + 2.0**-10, np.inf, -np.inf, np.nan], np.float32)
    x = np.append(x, np.array([0x7F800001], np.uint32).view(np.float32))  # a NaN with only low bits set
    t = tf32_emulation.truncate(x)
    assert list(t[:5]) == [1.0, -1.0, 1.0 + 2.0**-10, np.inf, -np.inf]
    assert np.isnan(t[5:]).all()
    # tf32x3's split rounds to nearest, ties away from zero (cvt.rna.tf32.f32).
    r = tf32_emulation.round_away(np.array([1.0 + 2.0**-11, -(1.0 + 2.0**-11), 1.0 + 2.0**-12], np.float32))
    assert list(r) == [1.0 + 2.0**-10, -(1.0 + 2.0**-10), 1.0]


def test_tf32x3_is_within_a_few_ulps_of_ieee_and_tf32_is_not():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((32, 64)).astype(np.float32), rng.standard_normal((64, 16)).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    zero = np.zeros((32, 16), np.float32)
    x3 = tf32_emulation.dot(a, b, zero, "tf32x3")
    assert x3.dtype == np.float32 and float(np.max(np.abs(x3 - exact) / scale)) < 1e-6
    tf = tf32_emulation.dot(a, b, zero, "tf32")
    assert float(np.max(np.abs(tf - exact) / scale)) > 1e-5
    assert np.array_equal(tf32_emulation.dot(a, b, zero, "ieee"), np.matmul(a, b, dtype=np.float32))
    # An infinite operand times TF32-exact ones gives infinities, not the NaN of inf * 0 in the small
    # products (the pass takes their NaNs as 0).
    a[0, 0] = np.inf
    b = np.round(np.abs(b) * 4) / 4 + np.float32(0.25)
    assert np.isposinf(tf32_emulation.dot(a, b, zero, "tf32x3")[0]).all()


@pytest.mark.parametrize("precision", ["ieee", "tf32x3"])
def test_an_explicit_precision_other_than_tf32_gets_no_finding(tmp_path, precision):
    an = _run(tmp_path, precision=precision)
    assert not [f for f in an.findings if f.kind == "tf32"]
    # An IEEE dot runs at the plain fp32 rate, not the tensor cores' TF32 rate.
    assert an.performance.dots[0].precision == ("fp32" if precision == "ieee" else "tf32")
    a, b, c = _outputs(tmp_path)
    if precision == "ieee":
        _is_ieee(tmp_path)
    else:  # three TF32 products: IEEE to a few ulps, not the TF32 product
        assert np.array_equal(c, tf32_emulation.dot(a, b, np.zeros_like(c), "tf32x3"))
        exact = a.astype(np.float64) @ b.astype(np.float64)
        scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
        assert float(np.max(np.abs(c - exact) / scale)) < 1e-6


def test_triton_f32_default_ieee_is_followed_as_the_compiler_does(tmp_path):
    an = _run(tmp_path, env=dict(os.environ, TRITON_F32_DEFAULT="ieee"))
    assert not [f for f in an.findings if f.kind == "tf32"]
    _is_ieee(tmp_path)


def test_triton_f32_default_does_not_override_an_explicit_precision(tmp_path):
    _run(tmp_path, precision="tf32", env=dict(os.environ, TRITON_F32_DEFAULT="ieee"))
    _is_tf32(tmp_path)


def test_allow_tf32_is_followed_as_the_compiler_does(tmp_path):
    an = _run(tmp_path, precision="no_tf32")
    assert not [f for f in an.findings if f.kind == "tf32"]
    _is_ieee(tmp_path)
    _run(tmp_path, precision="allow_tf32")
    _is_tf32(tmp_path)


def test_half_precision_operands_get_no_finding(tmp_path):
    an = _run(tmp_path, dtype="torch.float16")
    assert not [f for f in an.findings if f.kind == "tf32"]
    assert an.performance.dots[0].precision == "fp16"


def test_an_explicit_tf32_dot_gets_the_finding_too(tmp_path):
    an = _run(tmp_path, precision="tf32")
    assert [f.kind for f in an.findings if f.kind == "tf32"] == ["tf32"]
    _is_tf32(tmp_path)


def test_bf16_parts_round_to_nearest_even_and_keep_non_finite_values():
    # 1 + 2^-8 lies halfway between bfloat16 neighbours 1 and 1 + 2^-7: to the even one, 1
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, -2.5, np.inf, np.nan, 3.4e38], dtype=np.float32)
    got = tf32_emulation.to_bf16(x)
    assert got[0] == 1.0 and got[1] == 1 + 2**-6 and got[2] == -2.5
    assert got[3] == np.inf and np.isnan(got[4]) and got[5] == np.inf  # past bfloat16's largest


@pytest.mark.parametrize("precision, bits", [("bf16x3", 16), ("bf16x6", 23)])
def test_bf16_split_dots_keep_about_the_bits_their_parts_hold(precision, bits):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((32, 32)).astype(np.float32), rng.standard_normal((32, 32)).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    got = tf32_emulation.dot(a, b, np.zeros((32, 32), np.float32), precision)
    err = float(np.abs(got - exact).max()) / float(np.abs(exact).max())
    assert 2.0 ** -(bits + 3) < err < 2.0 ** -(bits - 4), err
    tf32_err = float(np.abs(tf32_emulation.dot(a, b, np.zeros((32, 32), np.float32), "tf32") - exact).max())
    assert float(np.abs(got - exact).max()) < tf32_err


def _release() -> tuple[int, int]:
    import triton

    major, minor = triton.__version__.split(".")[:2]
    return int(major), int(minor)


def test_a_kernel_at_bf16x3_and_bf16x6_runs_as_compiled_from_3_6_and_would_not_compile_before():
    # 3.6+: the script asserts bf16x6 near IEEE and bf16x3 between; before, the interpreter refused them
    # ("input_precision must be one of ('tf32', 'tf32x3', 'ieee')") where the GPU compiles them.
    # Before 3.6 the NVIDIA backend refuses them too: the run says it would not compile, at the tl.dot.
    from pathlib import Path

    script = Path(__file__).parent / "scripts" / "semantics" / "dot_bf16xn.py"
    r = run(RunRequest(path=str(script), timeout_s=120.0))
    if _release() >= (3, 6):
        assert r.status == "ok", r.error
        assert [L.kernel for L in r.launches] == ["dot_at"] * 4
    else:
        assert r.status == "exception" and r.error is not None and r.error.would_not_compile, r.error
        assert "input_precision must be one of" in r.error.message and r.error.line == 13
