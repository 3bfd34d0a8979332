"""Attention over [B, H, S, D] tensors (flash-attention style: a K/V loop with an online softmax),
one program per (query block, batch x head). The viewer shows these 4-D tensors as slices.

Right at the script's sizes, and wrong at others, as its markers say: the K/V loop's loads are unmasked, so
a sequence length that is not a multiple of BLOCK_N (S = 33) reads past K and V. `base` is int32 arithmetic
too, but on a GPU it wraps only along the sequence, once `(bh // H) * stride_b + (bh % H) * stride_h` =
112 * S passes 2**31 (S about 19.2 million, 39 GB of tensors): along B or H the grid's second axis B * H
stops at CUDA's limit of 65,535 programs first (the size check once reported it at H = 2,097,153, a grid
CUDA refuses), and along S the K/V loop (S / 16 steps a program) spends the size check's budget before it
gets there. So no wrap is marked: the check does not find the one there is."""
import torch
import triton
import triton.language as tl


@triton.jit
def attention_kernel(q_ptr, k_ptr, v_ptr, o_ptr, H, S, sm_scale,
                     stride_b, stride_h, stride_s,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, D: tl.constexpr):
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    base = (bh // H) * stride_b + (bh % H) * stride_h
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, D)
    # expect: stats q_ptr programs=16 lanes=4096 active=4096 unique=4096
    q = tl.load(q_ptr + base + rm[:, None] * stride_s + rd[None, :])
    m_i = tl.full((BLOCK_M,), float("-inf"), tl.float32)
    l_i = tl.zeros((BLOCK_M,), tl.float32)
    acc = tl.zeros((BLOCK_M, D), tl.float32)
    for start in range(0, S, BLOCK_N):
        rn = start + tl.arange(0, BLOCK_N)
        # expect: stats k_ptr programs=16 lanes=8192 active=8192 unique=4096; oob-sizes load k_ptr
        k = tl.load(k_ptr + base + rn[None, :] * stride_s + rd[:, None])
        qk = tl.dot(q, k) * sm_scale
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        # expect: stats v_ptr programs=16 lanes=8192 active=8192 unique=4096; oob-sizes load v_ptr
        v = tl.load(v_ptr + base + rn[:, None] * stride_s + rd[None, :])
        acc = acc * alpha[:, None] + tl.dot(p, v)
        m_i = m_new
    # expect: stats o_ptr programs=16 lanes=4096 active=4096 unique=4096
    tl.store(o_ptr + base + rm[:, None] * stride_s + rd[None, :], acc / l_i[:, None])


if __name__ == "__main__":
    B, H, S, D = 2, 4, 32, 16
    q, k, v = (torch.randn(B, H, S, D) for _ in range(3))
    o = torch.empty_like(q)
    scale = D ** -0.5
    attention_kernel[(S // 16, B * H)](q, k, v, o, H, S, scale, q.stride(0), q.stride(1), q.stride(2),
                                       BLOCK_M=16, BLOCK_N=16, D=D)
    ref = torch.softmax(q @ k.transpose(-1, -2) * scale, dim=-1) @ v
    # On an NVIDIA GPU tl.dot of fp32 tiles runs in TF32 (10-bit mantissa) by default: about 1e-3 from torch's fp32.
    assert torch.allclose(o, ref, atol=1e-2), (o - ref).abs().max()
