"""The viewer's values after a launch (recording/recorder.py `_Launch.finish`): a tensor no store of the
launch reached keeps its values before as its values after (the same array, copied once and sent once:
recording/tensors.py `written_args`, `views_not_written`; stream.py); a tensor any store may have changed
is read again."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
import torch

from triton_lens.model import Site, TensorInfo
from triton_lens.trace_engine.process.runner import RunRequest, run
from triton_lens.trace_engine.recording import stream
from triton_lens.trace_engine.recording.tensors import TensorView, views_not_written, written_args

pytestmark = pytest.mark.engine


def _run(tmp_path, body: str):
    p = tmp_path / "k.py"
    p.write_text("import torch, triton, triton.language as tl\n" + textwrap.dedent(body))
    r = run(RunRequest(path=str(p), timeout_s=120))
    assert r.status == "ok", (r.error.message if r.error else r.status, r.stderr[-2000:])
    return r


def _by_name(launch, name: str) -> int:
    return next(t.index for t in launch.tensors if t.name == name)


def test_inputs_keep_their_values_before_and_outputs_are_read_again(tmp_path):
    r = _run(
        tmp_path,
        """
        @triton.jit
        def add(x, y, o, dead, n, B: tl.constexpr):
            offs = tl.program_id(0) * B + tl.arange(0, B)
            m = offs < n
            tl.store(o + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)
            tl.store(dead + offs, 1.0, mask=offs < 0)  # every lane masked off: never written

        n = 1000
        x, y, o, dead = torch.randn(n), torch.randn(n), torch.zeros(n), torch.zeros(n)
        add[(8,)](x, y, o, dead, n, B=128)
        """,
    )
    (L,) = r.launches
    x, y, o, dead = (_by_name(L, a) for a in ("x", "y", "o", "dead"))
    for i in (x, y, dead):
        assert L.values[i] is L.values_before[i], L.tensors[i].name
    assert L.values[o] is not L.values_before[o]
    assert not L.values_before[o].any() and np.allclose(L.values[o], L.values[x] + L.values[y])
    # (the runner read L from the worker's frame) a kept array is in the frame once, and reads back as both
    meta, arrays = stream.launch_to_frame(L)
    assert f"values.{x}" not in arrays and f"values_before.{x}" in arrays and f"values.{o}" in arrays
    back = stream.launch_from_frame(meta, arrays)
    assert back.values[x] is back.values_before[x] and np.array_equal(back.values[o], L.values[o])


def test_a_view_of_a_written_storage_is_read_again(tmp_path):
    # `shifted` is only read, but it shares `o`'s storage: the store to `o` changes it.
    r = _run(
        tmp_path,
        """
        @triton.jit
        def fill(o, shifted, B: tl.constexpr):
            offs = tl.arange(0, B)
            tl.store(o + offs, tl.load(shifted + offs) + 2.0)

        base = torch.zeros(65)
        fill[(1,)](base[:64], base[1:], B=64)
        """,
    )
    (L,) = r.launches
    shifted = _by_name(L, "shifted")
    assert L.values[shifted] is not L.values_before[shifted]
    assert not L.values_before[shifted].any() and L.values[shifted][:63].tolist() == [2.0] * 63


def _views(*spans: tuple[int, int]) -> list[TensorView]:
    out = []
    for i, (lo, hi) in enumerate(spans):
        info = TensorInfo(index=i, name=f"t{i}", shape=((hi - lo) // 4,), strides=(1,), dtype="float32", itemsize=4)
        out.append(TensorView(info, lo, torch.empty(0), (lo, hi)))
    return out


def _site(kind: str, arg: int) -> Site:
    return Site(file="k.py", line=1, col=0, end_line=1, end_col=1, arg=arg, kind=kind, op=f"tl.{kind}")


def test_which_tensors_a_launch_wrote():
    sites = [_site("load", 0), _site("store", 1), _site("atomic", 2), _site("store", -1)]
    rows = np.array([0, 1, 2], dtype=np.int32)
    assert written_args(sites, rows, np.array([4, 4, 0], dtype=np.int32)) == {1}  # the atomic: no active lane
    assert written_args(sites, rows, np.array([4, 4, 1], dtype=np.int32)) == {1, 2}
    # a store through a pointer no argument holds may have written any tensor
    assert written_args(sites, np.array([0, 3], dtype=np.int32), np.array([4, 1], dtype=np.int32)) is None
    views = _views((0, 400), (400, 800), (600, 1000), (1000, 1400))  # t2 overlaps t1's storage
    assert views_not_written(views, {1}) == {0, 3}
    assert views_not_written(views, set()) == {0, 1, 2, 3}
    assert views_not_written(views, None) == set()
