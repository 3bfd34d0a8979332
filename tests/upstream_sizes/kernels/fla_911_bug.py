"""flash-linear-attention's chunk_scaled_dot_kkt forward before its int64 fixes (#911, #1080/#1082).

Reports: https://github.com/fla-org/flash-linear-attention/issues/1080 ("int32 block-pointer offsets: silent
output corruption for B*T*H*K > 2**31") names this kernel, fla/ops/common/chunk_scaled_dot_kkt.py's
chunk_scaled_dot_kkt_fwd_kernel; PR #911, commit abfa403de2146b9a2ab762a603f8fdb61cc3c166 ("Large-offset
Pointer Arithmetic"), casts `i_bh` to int64, and #1062 (02e27033) then #1082 (31d15f75) leave it with both
program ids int64 (fla_911_fixed.py). This file is the kernel of abfa403d's parent: `i_t, i_bh =
tl.program_id(0), tl.program_id(1)`, both int32, so `bos = i_b * T` and the base offset `(bos * H + i_h) *
K` are int32 and wrap once B * T * H * K passes 2**31. The parent addressed its tiles with
tl.make_block_ptr, which triton 3.9 no longer has; the tiles are written here as #1062 rewrote them, with
plain pointers (`o_t[:, None] * (H*K)`), and the same masks. Grid as chunk_scaled_dot_kkt_fwd launches it:
`(cdiv(T, BT), B * HV)`. g and cu_seqlens are None (USE_G and IS_VARLEN off), H == HV, and the autotuned
BK is pinned to one config.

On a GPU the wrap needs a long sequence, not a large batch: along B the grid's second axis B * H passes
CUDA's limit of 65,535 programs at B = 32,768, and at the largest batch that launches, 32,767,
`((B - 1) * T * H + 1) * K` is 402,628,672 (a batch that wraps would not launch); along T (B = 5),
`(bos * H + i_h) * K` wraps from T = 4,194,304 (k) and `(bos * HV + i_h) * BT` from T = 8,388,608 (A),
grids (131072, 10) and (262144, 10). The size check does not see those: the launch passes NT, computed
before it, so the grid stays at 3 programs along T while T moves, and the check asks for a wrap only
where the grid follows the size (written as `[(triton.cdiv(T, BT), B * H)]`, it finds both at those
sizes). test_upstream_sizes.py lists them as missed.
"""

import torch
import triton
import triton.language as tl


@triton.jit(do_not_specialize=["T"])
def chunk_scaled_dot_kkt_fwd_kernel(
    k,
    beta,
    A,
    T,
    H: tl.constexpr,
    HV: tl.constexpr,
    K: tl.constexpr,
    BT: tl.constexpr,
    BK: tl.constexpr,
):
    i_t, i_bh = tl.program_id(0), tl.program_id(1)
    i_b, i_h = i_bh // HV, i_bh % HV
    bos, eos = i_b * T, i_b * T + T
    o_t = i_t * BT + tl.arange(0, BT)
    m_t = o_t < T

    p_b = beta + bos * HV + i_h + o_t * HV
    b_b = tl.load(p_b, mask=m_t, other=0.0)
    b_A = tl.zeros([BT, BT], dtype=tl.float32)
    for i_k in range(tl.cdiv(K, BK)):
        o_k = i_k * BK + tl.arange(0, BK)
        p_k = k + (bos * H + i_h // (HV // H)) * K + o_t[:, None] * (H * K) + o_k[None, :]
        b_k = tl.load(p_k, mask=m_t[:, None] & (o_k < K)[None, :], other=0.0)  # a wrap the check misses: below
        b_A += tl.dot(b_k, tl.trans(b_k))
    b_A *= b_b[:, None]
    m_A = (o_t[:, None] > o_t[None, :]) & (m_t[:, None] & m_t)
    b_A = tl.where(m_A, b_A, 0)
    p_A = A + (bos * HV + i_h) * BT + o_t[:, None] * (BT * HV) + tl.arange(0, BT)[None, :]
    tl.store(p_A, b_A.to(p_A.dtype.element_ty), mask=m_t[:, None])  # a wrap the check misses: below


if __name__ == "__main__":
    B, T, H, K, BT = 5, 96, 2, 64, 32
    k = torch.randn(B, T, H, K)
    beta = torch.rand(B, T, H)
    A = torch.empty(B, T, H, BT)
    NT = triton.cdiv(T, BT)
    chunk_scaled_dot_kkt_fwd_kernel[(NT, B * H)](k, beta, A, T, H=H, HV=H, K=K, BT=BT, BK=32)
    kc = k.view(B, NT, BT, H, K)
    kk = torch.einsum("bnihk,bnjhk->bnhij", kc, kc) * beta.view(B, NT, BT, H).permute(0, 1, 3, 2)[..., None]
    ref = torch.tril(kk, diagonal=-1).permute(0, 1, 3, 2, 4).reshape(B, T, H, BT)
    assert torch.allclose(A, ref, atol=5e-2, rtol=1e-2)  # the tl.dot of float32 tiles runs in TF32
