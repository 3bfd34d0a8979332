"""The pytest plugin: a real pytest session (a subprocess, in a fresh folder) with one test that
launches an out-of-bounds kernel and one clean test; also under pytest-xdist (-n 2)."""

from __future__ import annotations

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
