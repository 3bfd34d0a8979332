"""mamba-ssm's chunk cumsum forward with the fix proposed for issue #1015, and the wrap it leaves behind.

The fix of PRs #987 / #1016 / #1038 (https://github.com/state-spaces/mamba/pull/1016; not merged in the
snapshot, e9594ce): "cast the relevant program-id-derived index to tl.int64 immediately after
tl.program_id()", for the batch and chunk axes: `pid_b` and `pid_c` are int64 here, so the dt offset of
mamba_1015_bug.py no longer wraps. The head axis is not cast: `offs_h = pid_h * BLOCK_SIZE_H +
tl.arange(0, BLOCK_SIZE_H)` is int32, and `offs_h[:, None] * stride_dt_out_head` (the head stride is
nchunks * chunk_size) still wraps once nheads * seqlen passes 2**31, at the dt_out and dA_cumsum stores:
the leftover. (The dt load's own head term, `offs_h * stride_dt_head`, is offs_h times 1 for a contiguous
dt.) Everything else as in mamba_1015_bug.py, whose notes follow.

The leftover is real on a GPU only where the heads and the sequence grow together: the heads are grid
axis 2 (cdiv(nheads, 4) blocks) and the chunks axis 1, each at most 65,535 programs in CUDA, so the heads
alone stop at 262,140 (offset 262,139 * 160 at this launch's 5 chunks) and the chunks alone at 65,535 (8
heads), neither near 2**31; at 262,140 heads it wraps from a sequence of 8,193 (257 chunks of 32: 262,139
* 8,224 > 2**31). The size check moves one size at a time, so it does not report it: the 13,421,774 heads
it once reported need a grid of 3,355,444 on axis 2, which CUDA refuses. test_upstream_sizes.py lists it
as missed.

Report: https://github.com/state-spaces/mamba/issues/1015 ("Sequences longer than ~61K tokens silently give
a wrong answer or crash"), and PR #987, which names this kernel: `dt_ptr += pid_b * stride_dt_batch +
pid_c * chunk_size * stride_dt_seqlen` is computed in int32 (program ids and int arguments are int32).
The kernel is mamba_ssm/ops/triton/ssd_chunk_state.py's _chunk_cumsum_fwd_kernel at the snapshot's HEAD,
e9594ce (no fix is merged there), written again with its offset arithmetic, masks and grid
(`(batch, nchunks, cdiv(nheads, BLOCK_SIZE_H))`, a function of the launch as in _chunk_cumsum_fwd, which
passes dt_out's and dA_cumsum's strides in the order (batch, chunk, head, csize)). The library autotunes
BLOCK_SIZE_H; one config is pinned here (the offsets do not depend on it). dt_bias and softplus are off.

With a contiguous dt (batch, seqlen, nheads), `pid_c * chunk_size * stride_dt_seqlen` reaches seqlen *
nheads; dt_out and dA_cumsum, (batch, nheads, nchunks, chunk_size), are offset by `offs_h * stride_head`
where the head stride is nchunks * chunk_size: both wrap once nheads * seqlen passes 2**31.
"""

import math

import torch
import triton
import triton.language as tl


@triton.jit
def _chunk_cumsum_fwd_kernel(
    dt_ptr, A_ptr, dt_out_ptr, dA_cumsum_ptr,
    batch, seqlen, nheads, chunk_size,
    dt_min, dt_max,
    stride_dt_batch, stride_dt_seqlen, stride_dt_head,
    stride_A_head,
    stride_dt_out_batch, stride_dt_out_chunk, stride_dt_out_head, stride_dt_out_csize,
    stride_dA_cs_batch, stride_dA_cs_chunk, stride_dA_cs_head, stride_dA_cs_csize,
    BLOCK_SIZE_H: tl.constexpr, BLOCK_SIZE_CHUNK: tl.constexpr,
):  # fmt: skip
    pid_b = tl.program_id(axis=0).to(tl.int64)
    pid_c = tl.program_id(axis=1).to(tl.int64)
    pid_h = tl.program_id(axis=2)
    dt_ptr += pid_b * stride_dt_batch + pid_c * chunk_size * stride_dt_seqlen
    dt_out_ptr += pid_b * stride_dt_out_batch + pid_c * stride_dt_out_chunk
    dA_cumsum_ptr += pid_b * stride_dA_cs_batch + pid_c * stride_dA_cs_chunk

    offs_h = pid_h * BLOCK_SIZE_H + tl.arange(0, BLOCK_SIZE_H)
    offs_c = tl.arange(0, BLOCK_SIZE_CHUNK)
    dt_ptrs = dt_ptr + (offs_h[:, None] * stride_dt_head + offs_c[None, :] * stride_dt_seqlen)
    A_ptrs = A_ptr + offs_h * stride_A_head
    dt_out_ptrs = dt_out_ptr + (offs_h[:, None] * stride_dt_out_head + offs_c[None, :] * stride_dt_out_csize)
    dA_cs_ptrs = dA_cumsum_ptr + (offs_h[:, None] * stride_dA_cs_head + offs_c[None, :] * stride_dA_cs_csize)
    chunk_size_limit = min(chunk_size, seqlen - pid_c * chunk_size)

    dt = tl.load(dt_ptrs, mask=(offs_h[:, None] < nheads) & (offs_c[None, :] < chunk_size_limit), other=0.0).to(tl.float32)
    dt = tl.minimum(tl.maximum(dt, dt_min), dt_max)
    dt = tl.where((offs_h[:, None] < nheads) & (offs_c[None, :] < chunk_size_limit), dt, 0.0)
    tl.store(dt_out_ptrs, dt, mask=(offs_h[:, None] < nheads) & (offs_c[None, :] < chunk_size))  # the leftover
    A = tl.load(A_ptrs, mask=offs_h < nheads, other=0.0).to(tl.float32)
    dA = dt * A[:, None]
    dA_cs = tl.cumsum(dA, axis=1)
    tl.store(dA_cs_ptrs, dA_cs, mask=(offs_h[:, None] < nheads) & (offs_c[None, :] < chunk_size))  # the leftover


def chunk_cumsum_fwd(dt, A, chunk_size, block_h=4):
    batch, seqlen, nheads = dt.shape
    nchunks = math.ceil(seqlen / chunk_size)
    dt_out = torch.empty(batch, nheads, nchunks, chunk_size, dtype=torch.float32)
    dA_cumsum = torch.empty(batch, nheads, nchunks, chunk_size, dtype=torch.float32)
    grid_chunk_cs = lambda META: (batch, nchunks, triton.cdiv(nheads, META["BLOCK_SIZE_H"]))  # noqa: E731
    _chunk_cumsum_fwd_kernel[grid_chunk_cs](
        dt, A, dt_out, dA_cumsum,
        batch, seqlen, nheads, chunk_size,
        0.0, float("inf"),
        dt.stride(0), dt.stride(1), dt.stride(2),
        A.stride(0),
        dt_out.stride(0), dt_out.stride(2), dt_out.stride(1), dt_out.stride(3),
        dA_cumsum.stride(0), dA_cumsum.stride(2), dA_cumsum.stride(1), dA_cumsum.stride(3),
        BLOCK_SIZE_H=block_h, BLOCK_SIZE_CHUNK=triton.next_power_of_2(chunk_size),
    )  # fmt: skip
    return dA_cumsum, dt_out


if __name__ == "__main__":
    batch, seqlen, nheads, chunk_size = 3, 160, 8, 32
    dt = torch.rand(batch, seqlen, nheads)
    A = -torch.rand(nheads)
    dA_cumsum, dt_out = chunk_cumsum_fwd(dt, A, chunk_size)
    ref_dt = dt.view(batch, seqlen // chunk_size, chunk_size, nheads).permute(0, 3, 1, 2)
    assert torch.allclose(dt_out, ref_dt)
    assert torch.allclose(dA_cumsum, torch.cumsum(ref_dt * A[None, :, None, None], dim=-1), atol=1e-5)
