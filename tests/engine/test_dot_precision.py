"""tl.dot of float32 tiles: TF32 on an NVIDIA GPU (operands truncated to 10 mantissa bits, as measured on
an H200 by tests/gpu/tf32_probe.py). The run computes IEEE float32 and says at the tl.dot how far the GPU's
TF32 products are from it; an "ieee" dot, or TRITON_F32_DEFAULT=ieee, or half-precision operands get no
such finding, and the roofline uses the rate each dot really runs at."""

from __future__ import annotations

import os
import re
import textwrap

import numpy as np
import pytest

from triton_lens.analysis import analyze
from triton_lens.trace_engine.recorder import tf32_deviation
from triton_lens.trace_engine.runner import RunRequest, run

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


@pytest.mark.parametrize("precision", ["ieee", "tf32x3"])
def test_an_explicit_precision_other_than_tf32_gets_no_finding(tmp_path, precision):
    an = _run(tmp_path, precision=precision)
    assert not [f for f in an.findings if f.kind == "tf32"]
    # An IEEE dot runs at the plain fp32 rate, not the tensor cores' TF32 rate.
    assert an.performance.dots[0].precision == ("fp32" if precision == "ieee" else "tf32")


def test_triton_f32_default_ieee_is_followed_as_the_compiler_does(tmp_path):
    an = _run(tmp_path, env=dict(os.environ, TRITON_F32_DEFAULT="ieee"))
    assert not [f for f in an.findings if f.kind == "tf32"]


def test_half_precision_operands_get_no_finding(tmp_path):
    an = _run(tmp_path, dtype="torch.float16")
    assert not [f for f in an.findings if f.kind == "tf32"]
    assert an.performance.dots[0].precision == "fp16"


def test_an_explicit_tf32_dot_gets_the_finding_too(tmp_path):
    an = _run(tmp_path, precision="tf32")
    assert [f.kind for f in an.findings if f.kind == "tf32"] == ["tf32"]
