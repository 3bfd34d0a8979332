"""The value map's colour scale is the tensor's own and spans the colours drawn: a 1024 x 1024 tensor
(cells: means of 32 elements) whose elements swing by +-1 around a slow ramp of 0.01 is coloured
across the whole scale by its cells, not squeezed into the middle colours by the swing; a tensor of a
tiny range of its own (0.5 .. 0.500001) gets every colour."""

from __future__ import annotations

import base64
import textwrap
import warnings

import numpy as np
import pytest
from recorded import recorded

from triton_lens.analysis.viewer_service import ViewerService

SCRIPT = textwrap.dedent(
    """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))


    n = 1024 * 1024
    swing = 1.0 - 2.0 * (torch.arange(n) % 2)  # +1, -1, ...: cancels in every cell of 32
    x = (torch.linspace(0.0, 0.01, n) + swing).reshape(1024, 1024)
    w = torch.full((1024,), 0.5) + torch.linspace(0, 1e-6, 1024)  # a tiny range of its own
    y = torch.empty_like(x)
    copy[(1024,)](x, y, BLOCK=1024)
    v = torch.empty_like(w)
    copy[(1,)](w, v, BLOCK=1024)
    """
)


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    path = tmp_path_factory.mktemp("scale") / "scale.py"
    path.write_text(SCRIPT)
    r = recorded(path)
    assert len(r.launches) == 2
    return ViewerService.from_result(r)


def colours(vm) -> np.ndarray:
    return np.frombuffer(base64.b64decode(vm["q"]), dtype=np.uint8)


def test_the_scale_spans_the_cells_drawn_not_one_far_element(service):
    vm = service.request("valueMap", {"launch": 0, "tensor": 0})
    assert vm["block"] == 32
    q = colours(vm)
    # the cells (means of 32: the ramp) run over the whole scale, in order
    assert q.min() == 0 and q.max() == 254 and len(np.unique(q)) == 255
    assert np.all(np.diff(q.astype(int)) >= 0)
    assert 0 <= vm["lo"] < 1e-5 and vm["hi"] == pytest.approx(0.01, abs=1e-5)
    # the histogram still says where the elements lie: the swing included
    (h,) = vm["histograms"]  # the one line that reads x
    assert h["lo"] == pytest.approx(-1.0, abs=1e-3) and h["hi"] == pytest.approx(1.01, abs=1e-3)


def test_a_tensor_of_a_tiny_range_gets_its_own_scale(service):
    vm = service.request("valueMap", {"launch": 1, "tensor": 0})
    assert vm["block"] == 1
    q = colours(vm)
    # float32 has 18 values in 0.5 .. 0.500001: each its own colour, from the first to the last
    assert q.min() == 0 and q.max() == 254 and len(np.unique(q)) == 18
    assert vm["lo"] == pytest.approx(0.5) and vm["hi"] - vm["lo"] == pytest.approx(1e-6, rel=0.1)


NAN_SCRIPT = textwrap.dedent(
    """
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
        offs = tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))


    bits = torch.full((64,), 1.0).view(torch.int32)
    bits[7] = 0x7FA00000  # a signalling NaN: what a torch.empty buffer can hold
    x = bits.view(torch.float32)
    y = torch.empty_like(x)
    copy[(1,)](x, y, BLOCK=64)
    """
)


def test_a_signalling_nan_is_drawn_as_nan_without_a_warning(tmp_path):
    # Widening a float32 signalling NaN to float64 raises the FPU's invalid flag, which numpy reports as a
    # RuntimeWarning ("invalid value encountered in cast") in the server's log; the cell is NaN all the same.
    path = tmp_path / "snan.py"
    path.write_text(NAN_SCRIPT)
    service = ViewerService.from_result(recorded(path))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        vm = service.request("valueMap", {"launch": 0, "tensor": 0, "when": "before"})
    q = colours(vm)
    assert q.size == 64 and q[7] == 255  # the NaN's own colour
    assert np.all(np.delete(q, 7) != 255)  # the other elements are values


def test_a_dot_tile_holding_a_signalling_nan_is_drawn_without_a_warning():
    # A tl.dot tile's drawing widens its values the same way (viewer_extras._tile): a 4 x 4 float32 tile with a
    # signalling NaN at (1, 2), small enough to be drawn a cell per value.
    from triton_lens.analysis.viewer_extras import _tile

    tile = np.ones((4, 4), dtype=np.float32)
    tile.view(np.uint32)[1, 2] = 0x7FA00000
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        drawn = _tile(tile)
    q = colours(drawn).reshape(4, 4)
    assert q[1, 2] == 255 and np.all(np.delete(q.reshape(-1), 6) != 255)
