"""A run that ends badly is blamed on what ended it, at the line that did: a script that kills its own
supervisor, or that replaced the signal handlers the time limit's messages use."""

from __future__ import annotations

import pytest

from triton_lens.analysis import analyze
from triton_lens.trace_engine.process.runner import RunRequest, run

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


SLEEPER = """\
import time
print("STARTED", time.time(), flush=True)
import signal

import torch
import triton
import triton.language as tl


def mine(signum, frame):
    print("the script's own handler ran", signum, flush=True)


{handlers}


@triton.jit
def slow_kernel(x_ptr, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs) + 1)
    if pid == 3:
        time.sleep(1000)  # the sleep


x = torch.zeros(8 * 16)
slow_kernel[(8,)](x, BLOCK=16)  # the launch
"""

HANDLERS = {
    "own handlers": "signal.signal(signal.SIGUSR1, mine)\nsignal.signal(signal.SIGUSR2, mine)",
    "ignored": "signal.signal(signal.SIGUSR1, signal.SIG_IGN)\nsignal.signal(signal.SIGUSR2, signal.SIG_IGN)",
    "default again": "signal.signal(signal.SIGUSR1, signal.SIG_DFL)\nsignal.signal(signal.SIGUSR2, signal.SIG_DFL)",
    "the tool's": "",
}


@pytest.mark.parametrize("handlers", list(HANDLERS))
def test_a_timeout_says_where_whatever_the_scripts_signal_handlers(tmp_path, handlers):
    # Issue 19: a script that replaced SIGUSR1/SIGUSR2 (the runner's asks at the time limit) was reported
    # at line 1, after two full waits. The line and the launch in flight come without its dispositions,
    # within the limit and a few seconds, and the script's own handlers do not run because the tool asked.
    import time

    text = SLEEPER.format(handlers=HANDLERS[handlers])
    script = tmp_path / "sleeper.py"
    script.write_text(text)
    r = run(RunRequest(path=str(script), timeout_s=4.0))
    ended = time.time()
    assert r.status == "timeout", r.error
    assert r.error.line == _line(text, "# the sleep"), r.error
    assert "inside launch 1 of slow_kernel" in r.error.message, r.error.message
    assert "own handler ran" not in r.stdout
    # From the script's start: the limit and one short ask (at most the answer, the flush grace, the stack
    # dump and the end's grace: 1 + 2 + 3 + 3 s), not two full waits. The worker's start is not counted:
    # it takes seconds on a loaded machine, and the time limit starts after it.
    started = float(next(l for l in r.stdout.splitlines() if l.startswith("STARTED")).split()[1])
    assert ended - started < 4.0 + 9.0, ended - started


def test_a_timeout_keeps_the_launch_in_flight_when_the_script_ignores_the_signals(tmp_path):
    # A long launch (every program accesses memory): the worker's own ask sends the programs that finished.
    text = KERNEL + (
        "for s in (signal.SIGUSR1, signal.SIGUSR2):\n"
        "    signal.signal(s, signal.SIG_IGN)\n"
        "big = torch.zeros(1 << 22)\n"
        "inc_kernel[(1 << 15,)](big, 1 << 22, BLOCK=128)  # the long launch\n"
    )
    script = tmp_path / "ignores.py"
    script.write_text(text)
    r = run(RunRequest(path=str(script), timeout_s=4.0))
    assert r.status == "timeout", r.error
    body = {_line(text, "offs = tl.program_id"), _line(text, "tl.store(")}
    assert r.error.line in body | {_line(text, "# the long launch")}, r.error
    assert [L.complete for L in r.launches] == [True, False]  # the launch in flight, cut short, is kept
    assert "inside launch 2 of inc_kernel" in r.error.message
