"""Liger-Kernel's fused MoE up-projection before the fix of issue #1246 (int32 `row_offs * stride_pre_TK`,
an illegal memory access or NaNs from TK * 2I > 2**31: Qwen3.5-MoE at ~135k tokens, top-8).

Report: https://github.com/linkedin/Liger-Kernel/issues/1246; fix: PR #1248, commit
96ce8e85b73f640ddaf404e1f7c5aa0d0d379ab8 (src/liger_kernel/ops/fused_moe_kernels.py), which widens
`row_offs = (row_start + m_offs).to(tl.int64)`, the loaded token and expert indices (issue #1296 reports
the same `expert_idx * stride_w_E` on the expert weights). Written again from the fix's parent
(_fused_up_proj_swiglu_kernel): the routing loads, masks, the x gather and the pre_act / post_act offsets
are the kernel's; the grouped GEMM against gate_up_proj is left out (the tile stored is the gathered x
tile itself, H == I here), so the reduction keeps the kernel's addressing, not its arithmetic. Grid as
LigerFusedMoEFunction launches it: `(num_m_tiles, cdiv(intermediate_dim, BLOCK_N))`.

Out of the size check's reach, and asserted as such: every row offset starts from a loaded value
(`row_start = tl.load(tile_row_start_ptr + pid_m)`, the token and expert indices), and the check reads
loads as zeros, so `row_offs` stays `tl.arange(0, BLOCK_M)` at every size it tries; the number of tiles is
computed on the host from the routing. The bug version gets no `wrap` finding (a miss), the fixed one none.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _fused_up_proj_swiglu_kernel(
    x_ptr,
    x_gather_idx_ptr,
    expert_start_ptr,
    tile_row_start_ptr,
    tile_expert_ptr,
    pre_act_ptr,
    post_act_ptr,
    H_dim: tl.constexpr,
    I_dim: tl.constexpr,
    stride_x_T,
    stride_x_H: tl.constexpr,
    stride_pre_TK,
    stride_pre_N: tl.constexpr,
    stride_post_TK,
    stride_post_N: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    row_start = tl.load(tile_row_start_ptr + pid_m)
    expert_idx = tl.load(tile_expert_ptr + pid_m)
    n_start = pid_n * BLOCK_N
    expert_end = tl.load(expert_start_ptr + expert_idx + 1)

    m_offs = tl.arange(0, BLOCK_M)
    n_offs = tl.arange(0, BLOCK_N)
    row_offs = row_start + m_offs
    row_mask = row_offs < expert_end
    n_idx = n_start + n_offs
    n_mask = n_idx < I_dim
    token_idx = tl.load(x_gather_idx_ptr + row_offs, mask=row_mask, other=0)
    x_ptrs = x_ptr + token_idx[:, None] * stride_x_T + n_idx[None, :] * stride_x_H
    acc_gate = tl.load(x_ptrs, mask=row_mask[:, None] & n_mask[None, :], other=0.0).to(tl.float32)
    acc_up = acc_gate * 0.5

    out_mask = row_mask[:, None] & n_mask[None, :]
    pre_gate_ptrs = pre_act_ptr + row_offs[:, None] * stride_pre_TK + n_idx[None, :] * stride_pre_N
    pre_up_ptrs = pre_gate_ptrs + I_dim * stride_pre_N
    tl.store(pre_gate_ptrs, acc_gate.to(pre_act_ptr.dtype.element_ty), mask=out_mask)
    tl.store(pre_up_ptrs, acc_up.to(pre_act_ptr.dtype.element_ty), mask=out_mask)
    a_out = acc_gate * tl.sigmoid(acc_gate) * acc_up
    post_ptrs = post_act_ptr + row_offs[:, None] * stride_post_TK + n_idx[None, :] * stride_post_N
    tl.store(post_ptrs, a_out.to(post_act_ptr.dtype.element_ty), mask=out_mask)


if __name__ == "__main__":
    T, K, E, H, BLOCK_M, BLOCK_N = 12, 2, 3, 64, 16, 32
    x = torch.randn(T, H)
    expert = torch.arange(T * K) % E  # the (token, k) pairs, routed round-robin
    order = torch.sort(expert, stable=True).indices
    x_gather_idx = (order // K).int()
    counts = torch.bincount(expert, minlength=E)
    expert_start = torch.cat([torch.zeros(1, dtype=torch.long), torch.cumsum(counts, 0)]).int()
    tiles = [(int(expert_start[e]) + m, e) for e in range(E) for m in range(0, int(counts[e]), BLOCK_M)]
    tile_row_start = torch.tensor([t[0] for t in tiles], dtype=torch.int32)
    tile_expert = torch.tensor([t[1] for t in tiles], dtype=torch.int32)
    num_m_tiles = len(tiles)
    TK, intermediate_dim = T * K, H
    pre_act = torch.empty(TK, 2 * intermediate_dim)
    post_act = torch.empty(TK, intermediate_dim)
    _fused_up_proj_swiglu_kernel[lambda meta: (num_m_tiles, triton.cdiv(intermediate_dim, meta["BLOCK_N"]))](
        x, x_gather_idx, expert_start, tile_row_start, tile_expert, pre_act, post_act,
        H, intermediate_dim, x.stride(0), x.stride(1), pre_act.stride(0), pre_act.stride(1),
        post_act.stride(0), post_act.stride(1), BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
    )  # fmt: skip
    gate = x[x_gather_idx.long()]
    assert torch.allclose(pre_act, torch.cat([gate, gate * 0.5], dim=1))
    assert torch.allclose(post_act, gate * torch.sigmoid(gate) * gate * 0.5, atol=1e-6)
