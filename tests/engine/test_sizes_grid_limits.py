"""The size check admits only sizes whose grid CUDA can launch (size_model.GRID_LIMITS: x up to 2**31 - 1,
y and z up to 65535). A wrap that needs more than 65535 programs on grid axis 1 or 2 is no wrap on a GPU:
the launch fails before the kernel runs. The same wrap driven by grid axis 0 is one."""

from __future__ import annotations

import importlib.util
import os
import textwrap

import pytest

from triton_lens.analysis import analyze
from triton_lens.lsp.hover import sizes_checked_lines
from triton_lens.trace_engine.process.runner import RunRequest, run
from triton_lens.trace_engine.recording.size_model import GRID_LIMITS, grid_excess, grid_fits

pytestmark = pytest.mark.engine

# z3 importable and not switched off (as tests/engine/test_size_symbolic.py reads it)
HAS_Z3 = importlib.util.find_spec("z3") is not None and os.environ.get("TRITON_LENS_SYMBOLIC", "1") != "0"

# `pid * stride` in int32 with rows of 32768: it overflows from pid = 65536, one past what grid axes 1 and 2
# can launch (x: the rows' tensor is 2**16 * 2**15 * 4 bytes = 8 GiB at that size, which an H100 holds).
KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def rows(x_ptr, stride, AXIS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(AXIS)
    cols = tl.arange(0, BLOCK)
    tl.store(x_ptr + pid * stride + cols, tl.zeros([BLOCK], dtype=tl.float32) + 1)


x = torch.empty(4, 32768)
rows[{grid}](x, x.stride(0), AXIS={axis}, BLOCK=32768)
assert torch.equal(x, torch.ones(4, 32768))
"""


def _findings(tmp_path, grid: str, axis: int):
    p = tmp_path / "k.py"
    p.write_text(textwrap.dedent(KERNEL.format(grid=grid, axis=axis)))
    r = run(RunRequest(path=str(p), timeout_s=120))
    assert r.status == "ok", r.error
    return r, analyze(r)


def test_the_limits_are_cudas():
    assert GRID_LIMITS == (2**31 - 1, 65535, 65535)
    assert grid_fits((2**31 - 1, 65535, 65535)) and grid_excess((1, 1, 1)) is None
    assert grid_excess((2**31, 1, 1)) == 0 and grid_excess((1, 65536, 1)) == 1 and grid_excess((1, 1, 65536)) == 2


@pytest.mark.parametrize("grid,axis", [("(1, x.shape[0])", 1), ("(1, 1, x.shape[0])", 2)], ids=["y", "z"])
def test_a_wrap_only_past_the_y_or_z_grid_limit_is_not_reported(tmp_path, grid, axis):
    r, a = _findings(tmp_path, grid, axis)
    assert not [f for f in a.findings if f.kind in ("wrap", "oob-sizes")], [f.message for f in a.findings]
    # The hover says how far it ran, and why no further: the grid, not memory, bounded it.
    lines = [line for L in r.launches for line in sizes_checked_lines(L.size_checked)]
    want = (
        "`x_ptr.shape = (65535, 32768)` (the last program, at the largest size whose grid CUDA can launch, "
        f"65,535 programs on grid axis {axis} at most; H100 would hold more)"
    )
    assert any(want in line for line in lines), lines


def test_the_same_wrap_on_grid_axis_0_is_reported(tmp_path):
    _, a = _findings(tmp_path, "(x.shape[0],)", 0)
    wraps = [f for f in a.findings if f.kind == "wrap"]
    assert [f.arg for f in wraps] == ["x_ptr"], [(f.kind, f.arg, f.message) for f in a.findings]
    assert wraps[0].witness["size_value"] == 65537 and wraps[0].witness["grid"] == [65537]


# z3's query (size_symbolic.py): a mask that lets one lane past n only in programs 65,536 and above of the
# axis the blocks are on (`n + pid // 65536`), so nothing at n + 1. On axis 0 z3 finds the smallest n whose
# last block is program 65,536 (n = 16 * 65536 + 1); on axis 1 no such grid launches.
FAR_BLOCKS = """
import torch
import triton
import triton.language as tl


@triton.jit
def fill(x_ptr, n, AXIS: tl.constexpr, BLOCK: tl.constexpr):
    pid = tl.program_id(AXIS)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32) + 1, mask=offs < n + pid // 65536)


n = 4096
x = torch.empty(n)
fill[{grid}](x, n, AXIS={axis}, BLOCK=16)
assert torch.equal(x, torch.ones(n))
"""


@pytest.mark.skipif(not HAS_Z3, reason="the z3 extra is not importable or TRITON_LENS_SYMBOLIC=0")
@pytest.mark.parametrize(
    "grid,axis,found",
    [("(triton.cdiv(n, 16),)", 0, True), ("(1, triton.cdiv(n, 16))", 1, False)],
    ids=["x-found", "y-past-the-limit"],
)
def test_a_z3_witness_is_a_size_whose_grid_launches(tmp_path, grid, axis, found):
    p = tmp_path / "k.py"
    p.write_text(textwrap.dedent(FAR_BLOCKS.format(grid=grid, axis=axis)))
    r = run(RunRequest(path=str(p), timeout_s=120))
    assert r.status == "ok", r.error
    got = [f for f in analyze(r).findings if f.kind in ("oob-sizes", "wrap")]
    if not found:
        assert not got, [f.message for f in got]
        return
    assert [(f.kind, f.witness.get("found_by")) for f in got] == [("oob-sizes", "z3")], [f.message for f in got]
    assert got[0].witness["size_value"] == 16 * 65536 + 1 and got[0].witness["grid"] == [65537]
