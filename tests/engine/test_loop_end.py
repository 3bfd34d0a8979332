"""A hook that ends a launch's grid loop (compat.END_LOOP, what parallel.py's parent returns once a split is
merged) ends it at that visit, and the launch ends as after its whole loop: the interpreter's copy back to
the device arguments runs, with the launch's own arguments, and the launch is recorded."""

from __future__ import annotations

import torch
import triton.language as tl
import triton.runtime.interpreter as interp

from triton_lens.trace_engine.interpreter import compat
from triton_lens.trace_engine.recording.recorder import Recorder


def body(x, o, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(o + offs, tl.load(x + offs) + 1)


class EndAt(Recorder):
    """Ends the loop at program `stop`'s visit."""

    def __init__(self, stop: int):
        super().__init__()
        self.stop, self.visits = stop, []

    def program(self, x: int, y: int, z: int):
        self.visits.append(x)
        return compat.END_LOOP if x == self.stop else super().program(x, y, z)


def test_a_hook_ends_the_grid_loop_and_the_launch_ends_as_after_the_whole_loop(monkeypatch):
    restored = []
    copy_back = interp.GridExecutor._restore_args_dev

    def spy(self, args_dev, args_hst, kwargs, kwargs_hst):
        restored.append(args_dev)
        return copy_back(self, args_dev, args_hst, kwargs, kwargs_hst)

    monkeypatch.setattr(interp.GridExecutor, "_restore_args_dev", spy)
    x, o = torch.arange(40, dtype=torch.float32), torch.zeros(40)
    rec = EndAt(stop=3)
    with rec:
        interp.InterpretedFunction(body)[(10,)](x, o, B=4)
    assert rec.visits == [0, 1, 2, 3]  # no visit after the one that ended the loop
    assert torch.equal(o[:12], x[:12] + 1) and not o[12:].any()  # programs 0-2 ran, and no other
    assert len(restored) == 1 and restored[0][0] is x and restored[0][1] is o  # the copy back, once
    assert [L.kernel for L in rec.launches] == ["body"] and not compat._host_args
