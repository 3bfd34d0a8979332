"""A run that ends badly is blamed on what ended it, at the line that did: a script that replaced the
signal handlers the time limit's asks use."""

from __future__ import annotations

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


def test_a_timeout_says_where_when_the_script_replaced_the_signal_handlers(tmp_path):
    # Every signal ignored (a daemon's idiom), then a launch that runs past the limit: the line and the
    # launch in flight come without the script's signal dispositions.
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
    # Inside the kernel's programs (its body's lines), or at the launch: not nowhere (line 1).
    body = {_line(text, "offs = tl.program_id"), _line(text, "tl.store(")}
    assert r.error.line in body | {_line(text, "# the long launch")}, r.error
    assert [L.complete for L in r.launches] == [True, False]  # the launch in flight, cut short, is kept
    assert "inside launch 2 of inc_kernel" in r.error.message
