"""@jit helper calls inside a launch skip the interpreter's re-patching of triton.language
(trace/device_calls.py): same results, the scan runs once per module per launch, hooks removed after."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
import triton.runtime.interpreter as interp  # noqa: E402

from triton_lens.trace.recorder import Recorder  # noqa: E402


@triton.jit
def _scaled(x, s):
    return x * s


@triton.jit
def _softmax_rows(X, Y, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(X + row * n_cols + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)  # tl.max and tl.sum are @jit helpers of triton.language.standard
    e = tl.exp(x)
    tl.store(Y + row * n_cols + cols, _scaled(e, 1.0 / tl.sum(e, axis=0)), mask=mask)


def _launch(rows=48, cols=37):
    torch.manual_seed(0)
    x = torch.randn(rows, cols)
    y = torch.empty_like(x)
    _softmax_rows[(rows,)](x, y, cols, BLOCK=64)
    return x, y


def test_helper_calls_scan_the_language_once_per_launch(monkeypatch):
    calls = []
    orig = interp._patch_lang

    def counting(fn):
        calls.append(fn.__name__ if hasattr(fn, "__name__") else fn)
        return orig(fn)

    monkeypatch.setattr(interp, "_patch_lang", counting)
    x, bare = _launch()
    bare_calls = len(calls)
    assert bare_calls >= 48 * 3  # the bare interpreter: the launch, then every helper call of every row

    calls.clear()
    with Recorder():
        x, traced = _launch()
        assert interp._patch_lang is not counting  # wrapped for the run
    assert interp._patch_lang is counting  # and put back after it
    # The launch's own call, then at most the first call that saw each language module.
    assert 1 <= len(calls) <= 3, calls
    assert torch.equal(traced, bare)
    assert torch.allclose(traced, torch.softmax(x, dim=1), atol=1e-6)


def test_a_second_launch_patches_again():
    with Recorder() as rec:
        _launch(rows=4)
        _, y = _launch(rows=4)
    assert len(rec.launches) == 2
    assert torch.allclose(y.sum(dim=1), torch.ones(4))
