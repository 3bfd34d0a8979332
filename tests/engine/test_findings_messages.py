"""Out-of-bounds messages that are exactly true: launches named, broadcast views, padding, masks, plurals."""

from __future__ import annotations

import pytest
from findings_script import Script
from markers import CORPUS

from triton_lens.analysis import analyze
from triton_lens.trace_engine.runner import RunRequest, run

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
