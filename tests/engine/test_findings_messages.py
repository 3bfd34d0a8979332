"""Out-of-bounds messages that are exactly true: launches named, broadcast views, padding, masks, plurals."""

from __future__ import annotations

import pytest
from findings_script import Script
from markers import CORPUS

from triton_lens.analysis import analyze
from triton_lens.trace_engine.process.runner import RunRequest, run

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module")
def s() -> Script:
    return Script("messages_cases.py")


def _oob(s: Script, name: str):
    (f,) = s.at(name, "oob")
    return f


def test_one_program_in_several_launches_is_named_so(s):
    f = _oob(s, "unmasked")
    assert f.programs == 3 and f.lanes == 8 + 12 + 4
    assert "program (1,) in each of 3 launches" in f.message
    # The offsets shown are those of the launch whose tensor is described.
    line = s.analysis.result.launches[0].line
    assert "x_ptr's tensor (24 elements) at element offsets 24, 25, 26…" in f.message
    assert f"of the tensor of launch 1 (line {line})" in f.message


def test_add_a_mask_only_when_the_access_has_none(s):
    assert "add a mask" in _oob(s, "unmasked").message
    m = _oob(s, "masked")
    assert "add a mask" not in m.message and "mask lets it through" in m.message


def test_plurals_for_one_lane_and_one_offset(s):
    m = _oob(s, "masked")
    assert m.message.startswith("x_ptr: 1 lane of program (0,) would write")
    assert "at element offset 10 " in m.message


def test_a_broadcast_view_is_described_as_one(s):
    f = _oob(s, "broadcast")
    assert "a broadcast view 4×8 (stride 0 in dim 0: 8 distinct elements in memory)" in f.message


def test_padding_between_rows_is_called_padding():
    a = analyze(run(RunRequest(path=str(CORPUS / "oob_strided_view.py"))))
    (f,) = [f for f in a.findings if f.kind == "oob"]
    assert "in the padding between the rows of x_ptr's tensor" in f.message
    assert "elements of padding between its rows" in f.message
    assert "real strides" in f.message  # the fix for a row length passed as the stride


@pytest.mark.parametrize(
    ("name", "coords"),
    [
        # rows stepped by the block width (128) instead of the row stride: programs 50..63 read rows 64..81
        ("oob_row_stride.py", "at element offsets 6400, 6401, 6402… (x_ptr[64:82, 0:100]: dimension 0 has only 64)"),
        # the row length passed for the stride of a padded view: columns 100..127 of rows 0..24, in the padding
        ("oob_strided_view.py", "(x_ptr[0:25, 100:128]: dimension 1 has only 100)"),
    ],
)
def test_an_nd_tensors_out_of_bounds_lanes_are_named_in_its_coordinates(name, coords):
    r = run(RunRequest(path=str(CORPUS / name)))
    (f,) = [f for f in analyze(r).findings if f.kind == "oob"]
    assert coords in f.message, f.message


def test_a_1d_tensor_is_named_by_its_offsets_alone():
    import numpy as np

    from triton_lens.analysis.findings import in_coordinates
    from triton_lens.model import TensorInfo

    t = TensorInfo(0, "x_ptr", (1000,), (1,), "float32", 4)
    assert in_coordinates("x_ptr", t, np.array([1000]), np.array([1024])) == ""
    t2 = TensorInfo(0, "a_ptr", (4, 8), (8, 1), "float32", 4)  # before the start: row -1
    assert in_coordinates("a_ptr", t2, np.array([-8]), np.array([-4])) == "a_ptr[-1, 0:4]: dimension 0 has only 4"
