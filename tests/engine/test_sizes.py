"""The size check (trace_engine/recording/size_model.py, size_probe.py) and row overruns (trace_engine/recording/rows.py):
the relations it reads from a launch, and whole runs whose findings depend on how the launch is written."""

from __future__ import annotations

import textwrap

import pytest

from triton_lens.analysis import analyze
from triton_lens.trace_engine.process.runner import RunRequest, run
from triton_lens.trace_engine.recording.size_model import (
    TensorSpec,
    candidate_sizes,
    largest_fitting,
    per_program_blocks,
    resize,
)

pytestmark = pytest.mark.engine


def _spec(shape, itemsize=4):
    strides, step = [], 1
    for d in reversed(shape):
        strides.insert(0, step)
        step *= d
    return TensorSpec(tuple(shape), tuple(strides), itemsize)


def test_equal_values_move_together_and_strides_follow():
    r = resize(100, 101, {"n_cols": 100, "stride": 100, "rows": 64}, {"x": _spec((64, 100))})
    assert r is not None
    assert r.ints == {"n_cols": 101, "stride": 101, "rows": 64}
    assert r.tensors["x"].shape == (64, 101) and r.tensors["x"].strides == (101, 1)
    assert r.assumed and "n_cols" in r.assumed[0] and "x" in r.assumed[0]


def test_a_flat_buffer_of_k_blocks_follows_and_a_stride_is_not_a_size():
    r = resize(200, 201, {"n": 200}, {"x": _spec((200,)), "out": _spec((1200,))})
    assert r is not None and r.tensors["out"].shape == (1206,)
    # 2048 is q's batch stride, not one of its dimensions: not a size to move
    assert 2048 not in candidate_sizes({"H": 4, "stride_b": 2048}, {"q": _spec((2, 4, 32, 16))})


def test_a_stride_argument_of_a_tensor_that_keeps_its_layout_stays():
    # mamba-ssm's selective_state_update: state (2, 1, 48, 16) has batch stride 768, which is also the
    # element count of A (1, 48, 16). Growing A does not change state's layout: its stride stays 768.
    ints = {"dim": 48, "stride_state_batch": 768, "stride_A_head": 768}
    r = resize(768, 769, ints, {"state": _spec((2, 1, 48, 16)), "A": _spec((1, 48, 16))})
    assert r is None or (r.ints["stride_state_batch"] == 768 and r.ints["stride_A_head"] == 768)


def test_a_size_argument_equal_to_a_moving_stride_stays_with_the_dimension_it_is():
    # mamba-ssm's chunk cumsum: seqlen 32 is dt's (1, 32, 2) sequence dimension, and by coincidence the
    # chunk stride of dA (1, 2, 2, 16) (nchunks * chunk_size). When nheads and nchunks move (both 2),
    # dt keeps its 32 rows, so seqlen keeps 32; the argument named as a stride follows dA's layout.
    ints = {"seqlen": 32, "nheads": 2, "stride_dA_head": 32}
    r = resize(2, 3, ints, {"dt": _spec((1, 32, 2)), "dA": _spec((1, 2, 2, 16))})
    assert r is not None and r.tensors["dt"].shape == (1, 32, 3)
    assert r.ints["seqlen"] == 32 and r.ints["nheads"] == 3 and r.ints["stride_dA_head"] == 48


def test_a_buffer_of_one_value_per_block_follows_the_size_in_blocks():
    # mamba-ssm's state-passing backward: the host sizes ddA `cdiv(dim, 64)` for a kernel whose BLOCK_SIZE
    # is 64; at dim = 257 it holds 5 blocks, not the 4 of dim = 256 (kept at 4, block 4 read outside it).
    ints = {"dim": 256, "stride_ddA_cs_batch": 8}
    tensors = {"dout": _spec((2, 256)), "ddA_cs": _spec((1, 2, 4))}
    # Its grid is (cdiv(dim, BLOCK_SIZE), batch, nheads) = (4, 1, 2): ddA_cs holds one value per program.
    r = resize(256, 257, ints, tensors, per_program_blocks(256, {64}, (4, 1, 2)))
    assert r is not None and r.tensors["ddA_cs"].shape == (1, 2, 5) and r.ints["stride_ddA_cs_batch"] == 10
    # A dimension that is `n // GROUP` (one scale per group, read by `offs // GROUP`) is the same number at a
    # multiple, but the grid is not sized by it: it stays (at n + 1 the host's n // GROUP stays too).
    for blocks in (per_program_blocks(256, {64}, (8,)), frozenset()):
        plain = resize(256, 257, ints, tensors, blocks)
        assert plain is not None and plain.tensors["ddA_cs"].shape == (1, 2, 4)
    assert r.moved[0] == "dout.shape" and r.assumed == ["dim is the size 256 of dout"]  # not the per-block buffer


def test_a_stride_equal_to_one_that_stays_and_to_one_that_moves_is_the_named_tensors():
    # The same kernel: dA_cs (1, 2, 2) is a view with strides (32, 16, 8); ddA_cs's batch stride is 8 too
    # and moves to 10 with the blocks. stride_dA_cs_chunk is dA_cs's (its name says so): it stays.
    ints = {"dim": 256, "stride_dA_cs_chunk": 8, "stride_ddA_cs_batch": 8}
    view = TensorSpec((1, 2, 2), (32, 16, 8), 4)
    blocks = per_program_blocks(256, {64}, (4, 1, 2))
    r = resize(256, 257, ints, {"dout": _spec((2, 256)), "dA_cs": view, "ddA_cs": _spec((1, 2, 4))}, blocks)
    assert r is not None and r.ints["stride_dA_cs_chunk"] == 8 and r.ints["stride_ddA_cs_batch"] == 10


def test_a_reshaped_view_of_the_same_size_moves_with_it():
    # xformers' RMSNorm: the kernel gets x.reshape(-1, 273) of a (3, 5, 273) input and out = empty_like(x),
    # still (3, 5, 273): at 16 rows out holds 16 rows too (it was held at 15: a false store past its end).
    tensors = {"x_ptr": _spec((15, 273)), "h1_ptr": _spec((3, 5, 273)), "w_ptr": _spec((273,))}
    r = resize(15, 16, {"stride": 273}, tensors)
    assert r is not None and r.tensors["x_ptr"].shape == (16, 273)
    assert r.tensors["h1_ptr"].numel == 16 * 273 and r.tensors["w_ptr"].shape == (273,)
    assert r.ints["stride"] == 273


def test_offsets_of_the_sizes_segments_hold_one_more():
    # xformers' padded RoPE: seqstartq and seqstartk hold batch + 1 offsets (cu_seqlens), seqlenk batch
    # lengths: at a batch of 4 they hold 5 (held at 4: a false read past the end of the last offset).
    tensors = {"seqlenk": _spec((3,)), "seqstartq": _spec((4,)), "seqstartk": _spec((4,)), "xq": _spec((1, 4, 8))}
    r = resize(3, 4, {}, tensors)
    assert r is not None and r.tensors["seqlenk"].shape == (4,)
    assert r.tensors["seqstartq"].shape == (5,) and r.tensors["seqstartk"].shape == (5,)


def test_a_dimension_a_moving_tensor_keeps_is_not_k_blocks_of_the_size():
    # xformers' scaled_index_add: source (6, 3, 48) moves with num_src_indices = 6 and keeps its 48 columns;
    # input (10, 3, 48) and scaling (48,) are not 8 blocks of 6 (were widened to 56: a stride of 168
    # against a source laid out with 144, a false read past its end).
    ints = {"num_src_indices": 6, "num_rows": 3, "num_cols": 48, "stride0": 144, "stride1": 48, "stride2": 1}
    tensors = {
        "input_ptr": _spec((10, 3, 48), 2),
        "index_ptr": _spec((6,), 8),
        "source_ptr": _spec((6, 3, 48), 2),
        "scaling_ptr": _spec((48,), 2),
    }
    r = resize(6, 7, ints, tensors)
    assert r is not None and r.tensors["source_ptr"].shape == (7, 3, 48) and r.tensors["index_ptr"].shape == (7,)
    assert r.tensors["input_ptr"].shape == (10, 3, 48) and r.tensors["scaling_ptr"].shape == (48,)
    assert r.ints["stride0"] == 144 and r.ints["num_cols"] == 48


def test_the_largest_size_is_bounded_by_memory_and_int32():
    top = largest_fitting(8, {"stride": 4096}, {"x": _spec((8, 4096), 2), "y": _spec((8, 4096), 2)}, 80 * 10**9)
    assert top is not None and top.bytes <= 80 * 10**9
    assert (
        resize(8, top.new + 1, {"stride": 4096}, {"x": _spec((8, 4096), 2), "y": _spec((8, 4096), 2)}).bytes
        > 80 * 10**9
    )
    small = largest_fitting(4096, {"n": 4096}, {"x": _spec((4096,), 1)}, 10**12)
    assert small is not None and small.new == 2**31 - 1  # an int32 argument stays int32


ROW_KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def rms(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=m, other=0.0)
    tl.store(y_ptr + row * stride + cols, x * 2, mask=m)


x = torch.randn(8, 4096, dtype=torch.float16)
y = torch.empty_like(x)
{launch}
assert torch.equal(y, x * 2)
"""


def _run(tmp_path, text: str, name: str = "k.py"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    r = run(RunRequest(path=str(p), timeout_s=120))
    assert r.status == "ok", r.error
    return analyze(r)


def test_a_grid_written_in_the_launch_grows_with_the_tensor_and_the_int32_product_wraps(tmp_path):
    a = _run(tmp_path, ROW_KERNEL.format(launch="rms[(x.shape[0],)](x, y, x.stride(0), x.shape[1], BLOCK=4096)"))
    wraps = [f for f in a.findings if f.kind == "wrap"]
    assert {f.arg for f in wraps} == {"x_ptr", "y_ptr"}, [(f.kind, f.arg, f.message) for f in a.findings]
    f = next(f for f in wraps if f.arg == "x_ptr")
    assert "`row * stride` overflows int32 from row = 524288 with stride = 4096" in f.message, f.message
    assert f.severity == "warning" and f.witness["grid"] == [524289]


def test_a_grid_passed_as_numbers_is_held(tmp_path):
    launch = "grid = (x.shape[0],)\nrms[grid](x, y, x.stride(0), x.shape[1], BLOCK=4096)"
    a = _run(tmp_path, ROW_KERNEL.format(launch=launch))
    assert not [f for f in a.findings if f.kind in ("wrap", "oob-sizes")], [f.message for f in a.findings]


def test_a_widened_row_index_does_not_wrap(tmp_path):
    text = ROW_KERNEL.replace("row = tl.program_id(0)", "row = tl.program_id(0).to(tl.int64)")
    a = _run(tmp_path, text.format(launch="rms[(x.shape[0],)](x, y, x.stride(0), x.shape[1], BLOCK=4096)"))
    assert not [f for f in a.findings if f.severity in ("warning", "error")], [f.message for f in a.findings]


def test_a_grid_function_follows_the_size_and_the_tail_is_found_once(tmp_path):
    a = _run(
        tmp_path,
        """
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            x = tl.load(x_ptr + offs)
            tl.store(out_ptr + offs, x * 2, mask=offs < n)


        n = 2048
        x = torch.randn(n)
        out = torch.empty(n)
        grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
        for _ in range(2):  # the same launch twice: checked once, reported once
            scale[grid](x, out, n, BLOCK=512)
        assert torch.equal(out, 2 * x)
        """,
    )
    found = [f for f in a.findings if f.kind == "oob-sizes"]
    assert len(found) == 1 and found[0].arg == "x_ptr" and found[0].witness["size"] == "n = 2049", found
    assert found[0].witness["grid"] == [5] and "program (4,)" in found[0].message


def test_whole_rows_per_block_are_flat_memory_not_an_overrun(tmp_path):
    a = _run(
        tmp_path,
        """
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def two_rows(x_ptr, y_ptr, C: tl.constexpr):
            offs = tl.program_id(0) * 2 * C + tl.arange(0, 2 * C)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs) + 1)


        x = torch.randn(8, 64)
        y = torch.empty_like(x)
        two_rows[(4,)](x, y, C=64)
        assert torch.equal(y, x + 1)
        """,
    )
    assert not [f for f in a.findings if f.kind == "overrun"], [f.message for f in a.findings]


def test_one_program_reading_a_matrix_as_flat_memory_is_not_an_overrun(tmp_path):
    # Triton-Puzzles' first demo: one program, 8 lanes (5 active) over a 4x3 tensor read as flat memory.
    # Its only line starts on row 0's block grid and runs into row 1, yet no program walks rows.
    a = _run(
        tmp_path,
        """
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def demo(x_ptr, z_ptr):
            r = tl.arange(0, 8)
            tl.store(z_ptr + r, tl.load(x_ptr + r, r < 5), r < 5)


        x = torch.arange(12, dtype=torch.float32).reshape(4, 3)
        z = torch.zeros(4, 3)
        demo[(1,)](x, z)
        assert torch.equal(z.flatten()[:5], x.flatten()[:5])
        """,
    )
    assert not [f for f in a.findings if f.kind in ("overrun", "oob")], [f.message for f in a.findings]


def test_the_hover_says_which_other_sizes_an_access_stayed_in_bounds_at(tmp_path):
    from triton_lens.lsp.hover import access_markdown

    a = _run(
        tmp_path,
        """
        import torch
        import triton
        import triton.language as tl


        @triton.jit
        def scale(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n_elements) * 2, mask=offs < n_elements)


        @triton.jit
        def scale_unmasked(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2)  # out of bounds at a tail


        x = torch.randn(4096)
        y = torch.empty_like(x)
        scale[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
        scale_unmasked[(triton.cdiv(x.numel(), 256),)](x, y, x.numel(), BLOCK=256)
        """,
    )
    masked, unmasked = (
        [r for r in a.records if r.key[2] == "x_ptr" and r.facts is not None and r.facts.kernel == name]
        for name in ("scale", "scale_unmasked")
    )
    assert [(c["script"], c["tail"], c["largest"]) for c in masked[0].facts.sizes_checked] == [
        ("n_elements = 4096", "n_elements = 4097", "n_elements = 2147483647")
    ]
    assert (
        "- other sizes than `n_elements = 4096`: in bounds at `n_elements = 4097` (the grid's corner programs) and "
        "`n_elements = 2147483647` (the last program, at the largest size that fits H100 with int32 sizes)"
    ) in access_markdown(masked[0])
    # Where the check found the tail's out-of-bounds lanes, the hover claims nothing: the diagnostic says it.
    assert [f.kind for f in a.findings if f.arg == "x_ptr" and f.line == unmasked[0].totals.line] == ["oob-sizes"]
    assert unmasked[0].facts.sizes_checked == []


WRAPS = """
import torch
import triton
import triton.language as tl


@triton.jit
def block_rows(x_ptr, y_ptr, n_rows, stride_x, stride_y, BLOCK_ROW: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_ROW + tl.arange(0, BLOCK_ROW)
    cols = tl.arange(0, BLOCK)
    m = (rows[:, None] < n_rows) & (cols[None, :] < 48)
    v = tl.load(x_ptr + rows[:, None] * stride_x + cols[None, :], mask=m)
    tl.store(y_ptr + rows[:, None] * stride_y + cols[None, :], v, mask=m)


@triton.jit
def heads(out_ptr, stride_b, stride_h, C: tl.constexpr):
    h = tl.program_id(0)
    pid_b = tl.program_id(1).to(tl.int64)
    tl.store(out_ptr + pid_b * stride_b + h * stride_h + tl.arange(0, C), tl.zeros([C], dtype=tl.float32) + 1)


x = torch.randn(40, 96)
y = torch.empty(40, 48)
block_rows[(triton.cdiv(x.shape[0], 16),)](x, y, x.shape[0], x.stride(0), y.stride(0), BLOCK_ROW=16, BLOCK=64)
assert torch.equal(y, x[:, :48])
out = torch.empty(3, 10, 32)
heads[(out.shape[1], out.shape[0])](out, out.stride(0), out.stride(1), C=32)
assert torch.equal(out, torch.ones(3, 10, 32))
"""


def _smallest(threshold) -> int:
    n = 1
    while not threshold(n):
        n *= 2
    lo = n // 2
    while n - lo > 1:
        mid = (lo + n) // 2
        lo, n = (lo, mid) if threshold(mid) else (mid, n)
    return n


def test_each_access_gets_the_smallest_size_where_its_own_wrap_fails(tmp_path):
    # block_rows: 40 rows in blocks of 16 is 3 programs, and so is 41: the grid follows the size although
    # n + 1 leaves it as it was. The first product to overflow does so in the last block's masked-off rows
    # (past n); the access fails from the size where an active row's offset passes 2**31, and x (rows of
    # 96) fails at half the rows y (rows of 48) needs: each gets its own size.
    a = _run(tmp_path, WRAPS)
    wraps = {f.arg: f for f in a.findings if f.kind == "wrap"}
    assert set(wraps) >= {"x_ptr", "y_ptr"}, [(f.kind, f.arg, f.message) for f in a.findings]
    assert wraps["x_ptr"].witness["size_value"] == _smallest(lambda n: (n - 1) * 96 >= 2**31)
    assert wraps["y_ptr"].witness["size_value"] == _smallest(lambda n: (n - 1) * 48 >= 2**31)
    assert "at n_rows = 22369623, `rows[:, None] * stride_x` overflows int32" in wraps["x_ptr"].message


def test_a_wrap_the_last_batch_would_absorb_is_seen_in_the_first(tmp_path):
    # heads: `h * stride_h` is int32 and wraps as the heads grow, but the batch axis (3, held) is int64: in
    # the last batch the negative offset lands inside an earlier batch (wrong data, no fault), in the first
    # it leaves the tensor. The check runs both, and reports the first batch's program. The heads are grid
    # axis 0: on axis 1 they could not pass CUDA's 65,535 programs, and `h * 32` would never wrap there.
    a = _run(tmp_path, WRAPS)
    f = next((f for f in a.findings if f.kind == "wrap" and f.arg == "out_ptr"), None)
    assert f is not None, [(f.kind, f.arg, f.message) for f in a.findings]
    assert f.witness["size_value"] == _smallest(lambda n: (n - 1) * 32 >= 2**31)
    n = f.witness["size_value"]
    assert f"program ({n - 1}, 0)" in f.message, f.message  # the last head of the first batch


HEURISTIC_MASK = """
import torch
import triton
import triton.language as tl


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def copy(x_ptr, y_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if EVEN:  # the host picks the unmasked path only where every block is full
        tl.store(y_ptr + offs, tl.load(x_ptr + offs))
    else:
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


x = torch.randn(256)
y = torch.empty_like(x)
n = x.numel()
copy[(triton.cdiv(n, 64),)](x, y, n, BLOCK=64)
"""


def test_a_heuristic_is_worked_out_again_at_the_other_size(tmp_path):
    # At n = 257 the host's heuristic sets EVEN False and the kernel takes its masked path: no lane leaves
    # the tensor there. Re-launching with the script's EVEN = True reported a false oob-sizes on both
    # accesses (cut-cross-entropy's EVEN_D, at D + 1).
    a = _run(tmp_path, HEURISTIC_MASK)
    assert not [f for f in a.findings if f.kind in ("oob-sizes", "oob")], [(f.kind, f.message) for f in a.findings]


def test_an_offset_an_atomic_returned_in_a_re_launch_is_not_garbage():
    # lmdeploy's MoE route sort takes each route's slot from an atomic counter and stores there. The size
    # check's re-launches mask every lane off (address-only memory): the atomic's old values were whatever
    # the interpreter left in its masked lanes, so the store's offsets were garbage (a false oob-sizes at
    # element offset -2103617612). Masked-off lanes of an atomic read 0 there, as a masked load's do.
    from pathlib import Path

    r = run(RunRequest(path=str(Path(__file__).parent / "scripts" / "atomic_slots.py"), timeout_s=120))
    assert r.status == "ok", r.error
    assert "atomic slots ok" in r.stdout
    bad = [(f.kind, f.line, f.message) for f in analyze(r).findings if f.severity in ("warning", "error")]
    assert not bad, bad
