"""A run that ends badly is blamed on what ended it, at the line that did: a script that kills its own
supervisor, or that replaced the signal handlers the time limit's messages use."""

from __future__ import annotations

import pytest

from triton_lens.analysis import analyze
from triton_lens.trace_engine.runner import RunRequest, run

KERNEL = """\
import os
import signal
import time

import torch
import triton
import triton.language as tl


@triton.jit
def inc_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


x = torch.zeros(100)
inc_kernel[(1,)](x, 100, BLOCK=128)
"""


def _line(text: str, needle: str) -> int:
    return next(i for i, l in enumerate(text.splitlines(), 1) if needle in l)


@pytest.mark.parametrize("last", [True, False])
def test_a_script_that_kills_its_supervisor_is_told_so_at_its_line(tmp_path, last):
    text = KERNEL + "os.kill(os.getppid(), signal.SIGKILL)  # the kill\n" + ("" if last else "time.sleep(5)\n")
    script = tmp_path / "kills.py"
    script.write_text(text)
    r = run(RunRequest(path=str(script), timeout_s=60.0))
    assert r.status == "crashed" and len(r.launches) == 1, r.error  # not "ok", even as its last statement
    assert r.error.line == _line(text, "# the kill") and r.error.file == str(script)
    assert "memory limit" not in r.error.message
    assert "killed" in r.error.message and "supervisor" in r.error.message, r.error.message
    (f,) = [f for f in analyze(r).findings if f.kind == "crashed"]
    assert f.line == r.error.line


def test_a_script_that_kills_its_own_process_group_is_told_so_at_its_line(tmp_path):
    text = KERNEL + "os.killpg(0, signal.SIGKILL)  # the kill\ntime.sleep(5)\n"
    script = tmp_path / "kills_group.py"
    script.write_text(text)
    r = run(RunRequest(path=str(script), timeout_s=60.0))
    assert r.status == "crashed" and len(r.launches) == 1, r.error
    assert r.error.line == _line(text, "# the kill"), r.error
    assert "memory limit" not in r.error.message and "killed" in r.error.message
