"""Counts the interpreter's _patch_lang calls bare and under the recorder (tests/engine/test_device_calls.py)."""

import json
import os

os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402
import triton.runtime.interpreter as interp  # noqa: E402

from triton_lens.trace_engine.recording.recorder import Recorder  # noqa: E402


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


calls = []
orig = interp._patch_lang


def counting(fn):
    calls.append(getattr(fn, "__name__", "?"))
    return orig(fn)


interp._patch_lang = counting
x, bare = _launch()
bare_calls = len(calls)
calls.clear()
with Recorder() as rec:
    _, traced = _launch()
    wrapped = interp._patch_lang is not counting
traced_calls = len(calls)
restored = interp._patch_lang is counting
with Recorder() as rec2:
    _launch(rows=4)
    _, second = _launch(rows=4)
print(json.dumps({
    "bare_calls": bare_calls,
    "traced_calls": traced_calls,
    "wrapped": wrapped,
    "restored": restored,
    "same": bool(torch.equal(traced, bare)),
    "softmax": bool(torch.allclose(traced, torch.softmax(x, dim=1), atol=1e-6)),
    "second_launches": len(rec2.launches),
    "second_ok": bool(torch.allclose(second.sum(dim=1), torch.ones(4))),
}))
