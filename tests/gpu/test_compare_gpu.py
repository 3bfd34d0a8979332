"""The CPU-only parts of compare_gpu.py: the launch capture (under the bare interpreter standing in for
the compiled run, and under the engine), the comparison with dtype tolerances, the table."""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

import compare_gpu  # noqa: E402
from markers import CORPUS  # noqa: E402


def test_capture_and_compare_a_clean_file(tmp_path):
    row = compare_gpu.run_one(CORPUS / "vector_add.py", tmp_path, timeout=120, device="cpu", interpret=True)
    c = row.comparison
    assert row.gpu_status == "ok" and row.tool_status == "ok", row
    assert c.launches_gpu == c.launches_tool >= 1 and c.same_launches
    assert c.tensors >= 3 and not c.differing
    assert row.verdict == "equal"
    text = compare_gpu.table([row])
    assert "vector_add.py" in text and "equal" in text and "summary: 1 equal of 1 scripts" in text


def _launch(t, grid=(4,)):
    return {"kernel": "k", "grid": list(grid), "tensors": {"arg0": t}}


def test_differences_beyond_the_dtype_tolerance_are_reported():
    a = torch.ones(8)
    assert compare_gpu.compare([_launch(a)], [_launch(a + 1e-4)]).equal  # within fp32's tolerance
    c = compare_gpu.compare([_launch(a)], [_launch(a + 0.1)])
    assert not c.equal and "arg0" in c.differing[0] and c.worst > 1
    h = torch.ones(8, dtype=torch.bfloat16)
    assert compare_gpu.compare([_launch(h)], [_launch(h * 1.0078125)]).equal  # one bf16 ulp
    i = torch.arange(8)
    assert not compare_gpu.compare([_launch(i)], [_launch(i + (i == 3))]).equal  # integers: exact
    f8 = torch.tensor([1.0, 2.0]).to(torch.float8_e4m3fn)
    assert not compare_gpu.compare([_launch(f8)], [_launch(torch.tensor([1.0, 2.25]).to(torch.float8_e4m3fn))]).equal
    assert not compare_gpu.compare([_launch(a)], [_launch(a, grid=(8,))]).same_launches


def test_a_difference_next_to_a_finding_is_not_a_failure():
    c = compare_gpu.compare([_launch(torch.ones(4))], [_launch(torch.zeros(4))])
    assert compare_gpu.Row("x.py", "ok", "ok", ["oob@12"], c).verdict == "differs (finding)"
    assert compare_gpu.Row("x.py", "ok", "ok", [], c).verdict == "DIFFERENT"


def test_a_file_that_launches_nothing_is_equal_to_its_plain_run():
    nothing = compare_gpu.compare([], [])
    assert compare_gpu.Row("no_launch.py", "ok", "no-launch", [], nothing).verdict == "equal"
    assert compare_gpu.Row("x.py", "exception", "ok", [], nothing).verdict == "DIFFERENT"
