"""The values of tl.dot tiles a run keeps for the viewer (trace_engine/recording/dot_tiles.py, DotTrace.tile_*):
A and B as the kernel's operands, C as its result, for the launch's first programs within the limit;
the same whether the launch ran in one process or split over several."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest
from test_engine_parallel import split_env, splits

from triton_lens.analysis.viewer_extras import dot_tiles, dots
from triton_lens.trace_engine.process.runner import RunRequest, run
from triton_lens.trace_engine.recording.dot_tiles import TileKeeper, tile_values

pytestmark = pytest.mark.engine

SCRIPT = """
import torch, triton, triton.language as tl
torch.manual_seed(0)

@triton.jit
def mm(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        rk = k * BK + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a.to(tl.float16), b.to(tl.float16), acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))

M, N, K = 40, 48, 40
a = torch.randn(M, K); b = torch.randn(K, N); c = torch.empty(M, N)
mm[(triton.cdiv(M, 16), triton.cdiv(N, 16))](a, b, c, M, N, K, BM=16, BN=16, BK=16)
"""


def _run(tmp_path, **kw):
    path = tmp_path / "mm.py"
    path.write_text(textwrap.dedent(SCRIPT))
    r = run(RunRequest(path=str(path), timeout_s=120.0, **kw))
    assert r.status == "ok", r.error
    return r


def test_tiles_are_the_operands_and_the_result_of_each_execution(tmp_path):
    r = _run(tmp_path)
    (L,) = r.launches
    d = L.dots
    a_in, b_in = (L.values[i].reshape(L.tensors[i].shape).astype(np.float32) for i in (0, 1))
    M, N, K = 40, 48, 40
    assert len(d) == 3 * 3 * 3 and d.tile_row.tolist() == list(range(len(d)))  # small: every execution kept
    acc = {}
    for row in range(len(d)):
        a, b, c = d.tiles(row)
        p = int(d.program[row])
        pm, pn = p % 3, p // 3
        it = sum(1 for q in range(row) if int(d.program[q]) == p)
        want_a = np.zeros((16, 16), np.float32)
        rows, cols = slice(pm * 16, min(M, pm * 16 + 16)), slice(it * 16, min(K, it * 16 + 16))
        want_a[: rows.stop - rows.start, : cols.stop - cols.start] = a_in[rows, cols]
        want_b = np.zeros((16, 16), np.float32)
        brows, bcols = slice(it * 16, min(K, it * 16 + 16)), slice(pn * 16, min(N, pn * 16 + 16))
        want_b[: brows.stop - brows.start, : bcols.stop - bcols.start] = b_in[brows, bcols]
        # the operands as the dot took them: cast to float16 in the kernel
        np.testing.assert_array_equal(a, want_a.astype(np.float16).astype(np.float32))
        np.testing.assert_array_equal(b, want_b.astype(np.float16).astype(np.float32))
        # C is the result: the accumulator so far plus this step's product
        acc[p] = acc.get(p, np.zeros((16, 16), np.float32)) + a @ b
        np.testing.assert_allclose(c, acc[p], rtol=1e-5, atol=1e-5)
    # the viewer's answer: each execution says it has values; the colour levels span the tile's range
    listed = dots(r, L.index)["executions"]
    assert all(e["values"] for e in listed)
    got = dot_tiles(r, L.index, 4)
    assert got["kept"] and got["a"]["shape"] == [16, 16] and got["a"]["cells"] == [16, 16]
    a4 = d.tiles(4)[0]
    assert (got["a"]["lo"], got["a"]["hi"]) == (float(a4.min()), float(a4.max()))


def test_a_split_launch_keeps_the_same_tiles_as_one_process(tmp_path):
    one = _run(tmp_path).launches[0].dots
    report = tmp_path / "report.jsonl"
    two = _run(tmp_path, workers=2, env=split_env(report)).launches[0].dots
    assert any(s.get("children") for s in splits(report)), splits(report)  # it did split
    assert two.tile_row.tolist() == one.tile_row.tolist()
    np.testing.assert_array_equal(two.tile_start, one.tile_start)
    np.testing.assert_array_equal(two.tile_data, one.tile_data)


def _tile(v: float, n: int = 4) -> np.ndarray:
    return np.full((n, n), v, dtype=np.float32)


def test_the_first_programs_keep_their_tiles_within_the_limit():
    # 2 dots a program, 3 tiles of 16 values each: 96 values a program; a limit of 5 programs' worth
    keep = TileKeeper(limit=5 * 96)
    row = 0
    for p in range(10):
        for _ in range(2):
            keep.offer(row, p, _tile(p), _tile(p), _tile(p))
            row += 1
    rows, start, data = keep.arrays()
    assert rows.tolist() == list(range(10)) and start[-1] == data.size == 5 * 96  # programs 0..4
    # a process that starts at program 7 (a split launch's child) keeps none of its programs
    child = TileKeeper(limit=5 * 96)
    for row in range(14, 20):
        p = row // 2
        child.offer(row, p, _tile(p), _tile(p), _tile(p))
    assert child.arrays()[0].size == 0
    # one program over the limit keeps what fits; batched or integer dots keep nothing
    big = TileKeeper(limit=100)
    for r in range(3):
        big.offer(r, 0, _tile(1), _tile(1), _tile(1))
    assert big.arrays()[0].tolist() == [0, 1]
    none = TileKeeper()
    none.offer(0, 0, np.zeros((2, 4, 4), np.float32), np.zeros((2, 4, 4), np.float32), np.zeros((2, 4, 4)))
    none.offer(1, 0, np.zeros((4, 4), np.int8), np.zeros((4, 4), np.int8), np.zeros((4, 4), np.int32))
    assert none.arrays()[0].size == 0


def test_tiles_from_a_child_are_kept_as_copies_not_views_of_its_frame():
    # A split parent reads each frame into large blocks shared with the chunk's stored bytes (parallel._Arena):
    # a view kept for the launch's lifetime would keep the whole block in memory.
    frame = np.arange(4096, dtype=np.float32)
    keep = TileKeeper()
    keep.extend(np.array([0, 1]), np.array([0, 48, 96]), frame[:96])
    assert all(not np.shares_memory(c, frame) for c in keep.chunks)
    assert np.array_equal(keep.arrays()[2], frame[:96])


def test_bfloat16_operands_are_their_values_not_their_bits():
    bits = np.array([[0x3F80, 0xC000]], dtype=np.uint16)  # 1.0, -2.0 in bfloat16
    assert tile_values(bits, "bf16").tolist() == [[1.0, -2.0]]
    assert tile_values(np.ones((1, 2), np.float16), "fp16").dtype == np.float16


MANY = """
import torch, triton, triton.language as tl

@triton.jit
def mm(a_ptr, b_ptr, c_ptr, K, B: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    r = tl.arange(0, B)
    acc = tl.zeros((B, B), dtype=tl.float32)
    for k in range(0, K // B):
        a = tl.load(a_ptr + (pm * B + r)[:, None] * K + (k * B + r)[None, :])
        b = tl.load(b_ptr + (k * B + r)[:, None] * (2 * B) + (pn * B + r)[None, :])
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + (pm * B + r)[:, None] * (2 * B) + (pn * B + r)[None, :], acc)

B, K = 64, 1024
a = torch.randn(2 * B, K); b = torch.randn(K, 2 * B); c = torch.empty(2 * B, 2 * B)
for _ in range(24):
    mm[(2, 2)](a, b, c, K, B=B)
"""


def test_a_runs_launches_together_keep_at_most_the_run_limit(tmp_path):
    from triton_lens.model import TILE_VALUES_LIMIT
    from triton_lens.trace_engine.recording.recorder import RUN_TILE_VALUES

    path = tmp_path / "many.py"
    path.write_text(textwrap.dedent(MANY))
    r = run(RunRequest(path=str(path), timeout_s=300.0))
    assert r.status == "ok", r.error
    # each launch: 4 programs x 16 dots x 3 tiles of 64 x 64 = 786,432 values, under the launch limit
    kept = [int(L.dots.tile_data.size) for L in r.launches]
    assert kept[0] == 4 * 16 * 3 * 64 * 64 <= TILE_VALUES_LIMIT
    assert len(kept) == 24 and sum(kept) <= RUN_TILE_VALUES < 24 * kept[0]
    assert kept[-1] < kept[0] and kept == sorted(kept, reverse=True), kept  # the later launches keep less
    assert dot_tiles(r, r.launches[-1].index, 0)["kept"] is False
