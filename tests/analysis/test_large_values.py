"""Values of a tensor over the recorder's value limit (1M elements): a real run of a 1151 x 8192 kernel
keeps a sample of 1 in 4 rows x 1 in 4 columns, and the viewer's value map, histograms and tooltip
values are of that sample, said so, with exact values where the sample has them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from protocol_schema import check
from recorded import recorded

from triton_lens.analysis.viewer_service import ViewerService
from triton_lens.model import value_sample_steps

ROWS, COLS = 1151, 8192

SCRIPT = Path(__file__).parents[1] / "webview" / "fixtures" / "large_values.py"  # 1151 x 8192, x = flat index


@pytest.fixture(scope="module")
def result():
    r = recorded(SCRIPT)
    assert r.launches
    return r


def test_the_sample_steps_are_the_smallest_that_fit():
    assert value_sample_steps(ROWS, COLS, 1 << 20) == (4, 4)  # 3: 384 x 2731 = 1,048,704 > 1,048,576
    assert value_sample_steps(1024, 1024, 1 << 20) == (1, 1)
    assert value_sample_steps(1, 3_000_000, 1 << 20) == (1, 3)
    assert value_sample_steps(2, 10, 5) == (2, 2)
    assert value_sample_steps(2, 10, 4) == (3, 3)


def test_a_large_tensor_keeps_a_bounded_sample_and_the_map_says_so(result):
    L = result.launches[0]
    assert L.value_steps == {0: (4, 4), 1: (4, 4)}
    assert L.values[0].size == 288 * 2048 <= 1 << 20
    service = ViewerService.from_result(result)
    for t, scale in ((0, 1.0), (1, 2.0)):
        params = {"launch": 0, "tensor": t, "when": "after"}
        vm = service.request("valueMap", params)
        check("valueMap", "result", vm)
        assert (vm["rows_step"], vm["cols_step"], vm["sample_cols"]) == (4, 4, 2048)
        assert vm["numel"] == ROWS * COLS and vm["sampled"] == 288 * 2048
        # the colour scale: the first and last cells, means of 18 kept elements (the last: columns 8120..8188 of row 1148)
        assert vm["lo"] == scale * 34 and vm["hi"] == scale * (1148 * COLS + 8154)
        assert vm["cells"] <= 1 << 15
        (h,) = vm["histograms"]
        assert (h["lo"], h["hi"]) == (0.0, scale * (1148 * COLS + 8188))  # the histogram: of the kept elements
        assert h["touched"] == ROWS * COLS and h["elements"] == 288 * 2048
        assert sum(h["counts"]) == h["elements"]
        # bounded on the wire, as for a tensor under the limit
        assert len(service.request_json("valueMap", params, compressed=True)) < 64 * 1024
    before = service.request("valueMap", {"launch": 0, "tensor": 0, "when": "before"})
    assert before["rows_step"] == 4 and before["hi"] == 1148 * COLS + 8154


def test_tooltip_values_are_exact_where_the_sample_has_them(result):
    service = ViewerService.from_result(result)
    got = service.request("values", {"launch": 0, "tensor": 0, "start": 4 * COLS, "count": 8})
    check("values", "result", got)
    assert got["sampled"] == [4, 4]
    assert got["values"] == [4 * COLS, None, None, None, 4 * COLS + 4, None, None, None]
    row1 = service.request("values", {"launch": 0, "tensor": 0, "start": COLS, "count": 4})
    assert row1["values"] == [None] * 4
    assert json.loads(service.request_json("values", {"launch": 0, "tensor": 0, "start": 0, "count": 2})) == {
        "start": 0,
        "values": [0, None],
        "sampled": [4, 4],
    }


@pytest.mark.parametrize("layout", ["contiguous", "transposed", "permuted", "1-D"])
def test_the_sample_of_any_layout_is_the_rows_and_columns_of_its_logical_order(layout):
    import numpy as np
    import torch

    from triton_lens.trace_engine.recording.recorder import _host_values

    x = torch.arange(6 * 5 * 1000 * 300, dtype=torch.float32).reshape(6, 5, 1000, 300)
    t = {
        "contiguous": x,
        "transposed": x.transpose(1, 2),  # its rows cannot be folded without a copy
        "permuted": x.permute(3, 2, 1, 0),
        "1-D": x.reshape(-1)[::3],
    }[layout]
    steps: dict[int, tuple[int, int]] = {}
    got = _host_values(t, 1 << 20, steps, 0)
    rs, cs = steps[0]
    assert got.size <= 1 << 20
    assert np.array_equal(got, t.reshape(-1, t.shape[-1])[::rs, ::cs].reshape(-1).numpy())


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "int64", "float16", "float8_e4m3fn", "float8_e5m2"])
def test_the_sample_is_copied_by_numpy_not_by_a_parallel_torch_op(dtype):
    """A torch copy of a large strided sample runs an OpenMP region whose threads spin on every core for tens
    of ms after it: beside a split launch's children on a 16-core machine. The values are the same."""
    import numpy as np
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    from triton_lens.trace_engine.recording.recorder import _host_values

    seen: list[str] = []

    class Ops(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    x = (torch.arange(3000 * 700, dtype=torch.float64) % 1000 - 500).reshape(3000, 700).to(getattr(torch, dtype))
    for t, limit in ((x, 1 << 20), (x.t(), 1 << 20), (x, 1 << 30)):  # sampled, sampled and strided, whole
        seen.clear()
        steps: dict[int, tuple[int, int]] = {}
        with Ops():
            got = _host_values(t, limit, steps, 0)
        assert not [op for op in seen if "copy" in op or "clone" in op or "_to_copy" in op], seen
        rs, cs = steps.get(0, (1, 1))
        want = t.reshape(-1, t.shape[-1])[::rs, ::cs].reshape(-1)
        want = want.float() if dtype.startswith(("bfloat16", "float8")) else want
        assert got.dtype == want.numpy().dtype and np.array_equal(got, want.numpy())
