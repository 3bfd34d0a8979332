"""The host-write tracker on its own: which torch operations count as writes, element by element."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from triton_lens.trace_engine.recording.host_writes import HostWrites, bool_to_runs


@pytest.fixture
def mode():
    m = HostWrites.start()
    yield m
    m.stop()


def _unwritten(mode, t) -> list[int]:
    runs = mode.unwritten_runs(t)
    if runs is None:
        return []
    return [int(i) for lo, n in zip(runs[0::2], runs[1::2]) for i in range(lo, lo + n)]


def test_empty_is_unwritten_and_other_factories_are_written(mode):
    assert _unwritten(mode, torch.empty(5)) == [0, 1, 2, 3, 4]
    assert _unwritten(mode, torch.empty_like(torch.ones(3))) == [0, 1, 2]
    assert _unwritten(mode, torch.ones(2).new_empty(2)) == [0, 1]
    for t in (torch.zeros(4), torch.ones(4), torch.randn(4), torch.full((4,), 2.0), torch.arange(4)):
        assert _unwritten(mode, t) == []


def test_fill_copy_inplace_and_out_write(mode):
    a = torch.empty(6)
    a[1:3] = 0.0  # slice assignment: fill_ on a view
    assert _unwritten(mode, a) == [0, 3, 4, 5]
    a[3:5].copy_(torch.ones(2))
    assert _unwritten(mode, a) == [0, 5]
    torch.mul(torch.ones(1), 2.0, out=a[5:])
    assert _unwritten(mode, a) == [0]
    a[:1].add_(1.0)  # in-place ops write (on a GPU too they read garbage first: that is not a host question)
    assert _unwritten(mode, a) == []


def test_views_map_to_their_own_elements(mode):
    g = torch.empty(3, 4)
    g[:, 1] = 1.0  # a column: stride 4
    assert _unwritten(mode, g) == [0, 2, 3, 4, 6, 7, 8, 10, 11]
    assert _unwritten(mode, g[:, 1]) == []
    assert _unwritten(mode, g.t()) == [0, 1, 2, 6, 7, 8, 9, 10, 11]  # the transpose's row-major order


def test_metadata_only_inplace_ops_write_nothing(mode):
    t = torch.empty(2, 3)
    t.transpose_(0, 1)
    t.unsqueeze_(0)
    assert len(_unwritten(mode, t)) == 6


def test_kernel_writes_are_marked_by_flat_index(mode):
    t = torch.empty(2, 3)
    mode.mark(t, np.array([True, False, True, False, False, True]))
    assert _unwritten(mode, t) == [1, 3, 4]


def test_a_paused_tracker_ignores_writes(mode):
    t = torch.empty(3)
    mode.paused += 1
    t.fill_(1.0)
    mode.paused -= 1
    assert _unwritten(mode, t) == [0, 1, 2]


def test_bool_to_runs():
    assert bool_to_runs(np.array([1, 1, 0, 1, 0, 0, 1], dtype=bool)).tolist() == [0, 2, 3, 1, 6, 1]
    assert bool_to_runs(np.zeros(3, dtype=bool)).tolist() == []
