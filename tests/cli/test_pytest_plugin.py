"""The pytest plugin: a real pytest session (a subprocess, in a fresh folder) with one test that
launches an out-of-bounds kernel and one clean test; also under pytest-xdist (-n 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

KERNELS = """import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, y_ptr, n, B: tl.constexpr, MASKED: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    if MASKED:
        x = tl.load(x_ptr + offs, mask=offs < n)
    else:
        x = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, x * 2, mask=offs < n)


def scale(x, masked=True):
    y = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), 64),)](x, y, x.numel(), 64, masked)
    return y
"""

TESTS = """import torch
from kernels import scale


def test_scale_tail_reads_past_the_end():
    x = torch.ones(100)
    scale(x, masked=False)  # the result is right: the bug only shows as out-of-bounds lanes


def test_scale_clean():
    assert torch.equal(scale(torch.ones(100)), torch.full((100,), 2.0))
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("kernel_lib")
    (root / "kernels.py").write_text(KERNELS)
    (root / "test_scale.py").write_text(TESTS)
    return root


def pytest_run(root: Path, *args: str, env: dict | None = None):
    e = dict(os.environ if env is None else env)
    e.pop("PYTEST_XDIST_WORKER", None)
    if env is None:
        e.pop("TRITON_INTERPRET", None)  # the plugin must switch the interpreter on itself
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=root,
        env=e,
    )


def _check(p):
    out = p.stdout
    assert p.returncode == 1, out + p.stderr
    assert "FAILED test_scale.py::test_scale_tail_reads_past_the_end" in out
    assert "PASSED test_scale.py::test_scale_clean" in out
    assert "1 failed, 1 passed" in out
    # the finding's own message, as the failure of the test that launched the kernel
    assert "Triton Lens: 1 finding at error severity in the kernels this test launched" in out
    assert "kernels.py:12:13: error: x_ptr: 28 lanes of program (1,) would read past the end of x_ptr's tensor" in out
    # the summary table at the end
    summary = out[out.index("Triton Lens =") :]
    assert "2 tests recorded, 2 kernel launches, 1 with findings" in summary
    assert "test_scale.py::test_scale_tail_reads_past_the_end" in summary and "kernels.py:12 oob x_ptr" in summary


def test_oob_test_fails_with_the_finding_and_clean_test_passes(project):
    _check(pytest_run(project, "--triton-lens"))


def test_under_xdist(project):
    p = pytest_run(project, "--triton-lens", "-n", "2")
    assert "created: 2/2 workers" in p.stdout
    _check(p)


def test_fail_level_warning_and_plugin_off(project):
    (project / "test_race.py").write_text("""import torch, triton, triton.language as tl


@triton.jit
def last_wins(x_ptr, out_ptr):
    tl.store(out_ptr, tl.load(x_ptr + tl.program_id(0)))


def test_race():
    last_wins[(4,)](torch.arange(4.0), torch.zeros(1))
""")
    try:
        p = pytest_run(project, "--triton-lens", "test_race.py")
        assert p.returncode == 0 and "1 with findings" in p.stdout  # a race is a warning: reported, not failed
        p = pytest_run(project, "--triton-lens", "--triton-lens-fail=warning", "test_race.py")
        assert p.returncode == 1 and "warning: out_ptr: 4 programs at this store race with other programs" in p.stdout
    finally:
        (project / "test_race.py").unlink()
    p = pytest_run(project, "-p", "no:triton_lens", "--triton-lens")
    assert p.returncode == 4 and "unrecognized arguments: --triton-lens" in p.stderr
    env = dict(os.environ, TRITON_INTERPRET="1")
    p = pytest_run(project, "test_scale.py::test_scale_clean", env=env)  # installed but not asked for: inert
    assert p.returncode == 0 and "Triton Lens" not in p.stdout


def test_an_autotuned_kernel_fails_on_the_finding_of_one_config(project):
    # The corpus's group-scale kernel, imported by a test: its scale load reads out of bounds with
    # BLOCK=256 only, which the autotuner tries but does not keep; the test fails on it every run.
    from markers import CORPUS

    (project / "scales.py").write_text((CORPUS / "autotune_group_scales.py").read_text())
    (project / "test_scales.py").write_text("""import torch, triton
from scales import GROUP, dequant_kernel


def test_dequant():
    n = 5 * GROUP
    w, s, out = torch.rand(n), torch.rand(n // GROUP), torch.empty(n)
    dequant_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](w, s, out, n, GROUP=GROUP)
    assert torch.equal(out, w * s.repeat_interleave(GROUP))
""")
    try:
        p = pytest_run(project, "--triton-lens", "test_scales.py")
    finally:
        (project / "test_scales.py").unlink()
        (project / "scales.py").unlink()
    assert p.returncode == 1 and "FAILED test_scales.py::test_dequant" in p.stdout, p.stdout + p.stderr
    assert "scales.py:23:9: error: s_ptr: 128 lanes of program (2,)" in p.stdout
    assert "Autotune: only with BLOCK=256 (1 of 3 configs tried; the hints show BLOCK=64" in p.stdout
    assert "1 test recorded, 1 kernel launch, 1 with findings" in p.stdout  # the trials are not launches


# A kernel library's suite as written for a GPU: capability asked at collection (conftest and a skipif),
# the whole module skipped without CUDA, device="cuda" tensors, forward and backward through an
# autograd.Function whose backward asks the gradient's device.
CUDA_CONFTEST = """import torch

CAPABILITY = torch.cuda.get_device_capability()  # at import, before any test: raises without a GPU
"""

CUDA_TESTS = """import pytest
import torch
import triton
import triton.language as tl
from conftest import CAPABILITY

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")


@triton.jit
def mul_kernel(x_ptr, y_ptr, out_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * tl.load(y_ptr + offs, mask=m), mask=m)


def mul(x, y):
    out = torch.empty_like(x)
    mul_kernel[(triton.cdiv(x.numel(), 128),)](x, y, out, x.numel(), B=128)
    return out


class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return mul(x, y)

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        assert torch.cuda.get_device_properties(g.device).multi_processor_count > 0
        g = g.contiguous()  # the gradient of sum() is one value expanded (stride 0)
        return mul(g, y), mul(g, x)


@pytest.mark.parametrize("n", [100, 1000])
def test_mul_forward_backward(n):
    x = torch.randn(n, device="cuda", requires_grad=True)
    y = torch.randn(n, device="cuda", requires_grad=True)
    out = Mul.apply(x, y)
    out.sum().backward()
    torch.testing.assert_close(out, x.detach() * y.detach())
    torch.testing.assert_close(x.grad, y.detach())
    torch.testing.assert_close(y.grad, x.detach())


@pytest.mark.skipif(CAPABILITY < (9, 0), reason="Hopper only")
def test_on_hopper():
    x = torch.ones(10, device="cuda")
    assert torch.equal(mul(x, x), x)
"""

# Runs the suite in this process, then prints what the session left behind.
IN_PROCESS = """import json, os, sys, threading
import pytest, torch, triton
import triton.runtime.interpreter as interp
from torch.overrides import _get_current_function_mode_stack

def state():
    knobs = getattr(triton, "knobs", None)
    return {
        "TRITON_INTERPRET": os.environ.get("TRITON_INTERPRET"),
        "TRITON_LENS_WORKER": os.environ.get("TRITON_LENS_WORKER"),
        "knob": knobs.runtime.__dict__.get("interpret", "unset") if knobs else "none",
        "cuda": torch.cuda.is_available(),
        "modes": len(_get_current_function_mode_stack()),
        "hooks": [repr(x) for x in (torch.cuda._lazy_init, torch.autograd.Function.__dict__["apply"],
                  torch.library.Library.impl, threading.Thread.start, interp.GridExecutor.__call__,
                  triton.testing.do_bench, torch._C.__dict__.get("_cuda_getCurrentRawStream"))],
    }

before = state()
rc = pytest.main(["-p", "no:cacheprovider", "-rA", "--triton-lens", *sys.argv[1:]])
print("STATE " + json.dumps({"rc": int(rc), "before": before, "after": state()}))
"""


@pytest.fixture(scope="module")
def cuda_suite(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cuda_lib")
    (root / "conftest.py").write_text(CUDA_CONFTEST)
    (root / "test_cuda_mul.py").write_text(CUDA_TESTS)
    (root / "run_in_process.py").write_text(IN_PROCESS)
    return root


def test_a_suite_written_for_cuda_runs_on_the_stand_in_and_the_session_leaves_nothing_set(cuda_suite):
    import torch

    assert not torch.cuda.is_available(), "this test is of a machine without a GPU"
    e = dict(os.environ)
    e.pop("TRITON_INTERPRET", None)
    e.pop("TRITON_LENS_WORKER", None)
    p = subprocess.run(
        [sys.executable, "run_in_process.py", "test_cuda_mul.py"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cuda_suite,
        env=e,
    )
    out = p.stdout
    assert "= 3 passed in" in out, out + p.stderr  # none skipped, none failed
    for test in ("test_mul_forward_backward[100]", "test_mul_forward_backward[1000]", "test_on_hopper"):
        assert f"PASSED test_cuda_mul.py::{test}" in out
    summary = out[out.index("Triton Lens =") :]
    # forward + two backward launches per parametrized case, one on Hopper
    assert "3 tests recorded, 7 kernel launches, 0 with findings" in summary
    assert "note: CPU stand-in for CUDA (no CUDA device on this machine)" in summary
    assert "NVIDIA H100 80GB HBM3" in summary and "3 tests ran on it" in summary
    state = json.loads(out[out.index("STATE ") + 6 :].splitlines()[0])
    assert state["rc"] == 0
    assert state["after"] == state["before"]
    assert state["before"]["TRITON_INTERPRET"] is None and state["before"]["cuda"] is False


def test_the_stand_in_reports_gpu_named_and_the_cpu_flag(cuda_suite):
    e = dict(os.environ)
    e.pop("TRITON_INTERPRET", None)
    p = pytest_run(cuda_suite, "--triton-lens", "--triton-lens-gpu", "A100", "test_cuda_mul.py", env=e)
    # An A100 is capability 8.0: the Hopper test is skipped as on an A100, by the suite's own skipif.
    assert p.returncode == 0 and "2 passed, 1 skipped" in p.stdout, p.stdout + p.stderr
    assert "NVIDIA A100-SXM4-80GB" in p.stdout and "2 tests ran on it" in p.stdout


def test_the_stand_in_under_xdist_counts_the_workers_tests(cuda_suite):
    e = dict(os.environ)
    e.pop("TRITON_INTERPRET", None)
    p = pytest_run(cuda_suite, "--triton-lens", "-n", "2", "test_cuda_mul.py", env=e)
    assert p.returncode == 0 and "created: 2/2 workers" in p.stdout and "3 passed" in p.stdout, p.stdout + p.stderr
    summary = p.stdout[p.stdout.index("Triton Lens =") :]
    assert "3 tests recorded, 7 kernel launches" in summary and "3 tests ran on it" in summary
