"""The workloads of bench/parallel.py (issue 13), as a kernel author writes them. `scale` shrinks the
large dimension (1.0: the issue's sizes) so the benchmark can also run quickly on a small machine."""

import math

import torch
import triton
import triton.language as tl

# Vector add, softmax and matmul are the trace-overhead benchmark's own kernels.
from overhead_kernels import add_kernel, matmul_kernel, softmax_kernel  # noqa: E402


@triton.jit
def layernorm_kernel(X, Y, W, B, Mean, Rstd, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    # Triton's tutorial 05, forward.
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.0).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.0)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    tl.store(Mean + row, mean)
    tl.store(Rstd + row, rstd)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask)
        b = tl.load(B + cols, mask=mask)
        x = tl.load(X + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(Y + cols, y, mask=mask)


@triton.jit
def attention_fwd_kernel(
    Q, K, V, O, sm_scale, seq, stride_bh, stride_s, D: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr
):
    # Flash attention forward (non-causal), one program per (query block, batch*head).
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, D)
    base = bh * stride_bh
    q = tl.load(Q + base + offs_m[:, None] * stride_s + offs_d[None, :], mask=offs_m[:, None] < seq, other=0.0)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, D], dtype=tl.float32)
    for start_n in range(0, seq, BLOCK_N):
        cols = start_n + offs_n
        k = tl.load(K + base + cols[None, :] * stride_s + offs_d[:, None], mask=cols[None, :] < seq, other=0.0)
        qk = tl.dot(q, k) * sm_scale
        qk = tl.where(cols[None, :] < seq, qk, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.exp(qk - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(V + base + cols[:, None] * stride_s + offs_d[None, :], mask=cols[:, None] < seq, other=0.0)
        acc = acc * alpha[:, None] + tl.dot(p, v)
        m_i = m_new
    acc = acc / l_i[:, None]
    tl.store(O + base + offs_m[:, None] * stride_s + offs_d[None, :], acc, mask=offs_m[:, None] < seq)


def bare_interpreter_fixes() -> str:
    """numpy 2.4+ refuses int() of a 1-element array, which the interpreter of triton <= 3.6 calls for
    `range(tl.cdiv(K, BK))`: the bare runs get the tool's own fix for that (trace_engine/interpreter/semantics.py's
    `_index`) and nothing else, so they can run at all. Returns what was applied ("" if nothing)."""
    import numpy as np
    from triton.runtime import interpreter

    from triton_lens.trace_engine.interpreter import semantics

    try:
        int(np.zeros(1))
        return ""
    except TypeError:
        pass
    orig = interpreter._patch_lang_tensor

    def _patch_lang_tensor(tensor, *args, **kwargs):
        out = orig(tensor, *args, **kwargs)
        tensor.__index__ = semantics._index
        return out

    interpreter._patch_lang_tensor = _patch_lang_tensor
    return f"numpy {np.__version__}'s int() of 1-element arrays"


def _rows(n: int, scale: float, multiple: int = 1) -> int:
    return max(multiple, int(round(n * scale / multiple)) * multiple)


def workloads(scale: float = 1.0):
    """name -> (launch once, output tensors, reference check)"""
    torch.manual_seed(0)
    out = {}

    n = _rows(1 << 24, scale, 1024)
    x, y, z = torch.rand(n), torch.rand(n), torch.empty(n)
    out[f"vector add {n} (B=1024)"] = (
        lambda: add_kernel[(triton.cdiv(n, 1024),)](x, y, z, n, BLOCK=1024),
        [z],
        lambda: torch.allclose(z, x + y),
    )

    rows = _rows(4096, scale)
    xs, outs = torch.randn(rows, 4096), torch.empty(rows, 4096)
    out[f"softmax {rows}x4096"] = (
        lambda: softmax_kernel[(rows,)](xs, outs, 4096, xs.stride(0), outs.stride(0), BLOCK=4096),
        [outs],
        lambda: torch.allclose(outs, torch.softmax(xs, dim=1), atol=1e-5),
    )

    m = _rows(1024, scale, 32)
    a, b, c = torch.randn(m, 1024), torch.randn(1024, 1024), torch.empty(m, 1024)
    out[f"matmul {m}x1024x1024 (32^3 blocks)"] = (
        lambda: matmul_kernel[(m // 32, 1024 // 32)](
            a,
            b,
            c,
            m,
            1024,
            1024,
            a.stride(0),
            a.stride(1),
            b.stride(0),
            b.stride(1),
            c.stride(0),
            c.stride(1),
            BM=32,
            BN=32,
            BK=32,
        ),
        [c],
        lambda: torch.allclose(c, a @ b, atol=1e-2, rtol=1e-3),
    )

    rows = _rows(4096, scale)
    xl, yl = torch.randn(rows, 8192), torch.empty(rows, 8192)
    wl, bl = torch.rand(8192), torch.rand(8192)
    mean, rstd = torch.empty(rows), torch.empty(rows)
    out[f"layer norm {rows}x8192"] = (
        lambda: layernorm_kernel[(rows,)](xl, yl, wl, bl, mean, rstd, xl.stride(0), 8192, 1e-5, BLOCK_SIZE=1024),
        [yl, mean, rstd],
        lambda: torch.allclose(yl, torch.nn.functional.layer_norm(xl, (8192,), wl, bl, 1e-5), atol=1e-4),
    )

    seq = _rows(1024, scale, 64)
    bh, d = 16, 64
    q, k, v = (torch.randn(bh, seq, d) for _ in range(3))
    o = torch.empty(bh, seq, d)
    scale_qk = 1.0 / math.sqrt(d)
    out[f"attention fwd BH=16 seq={seq} d=64"] = (
        lambda: attention_fwd_kernel[(seq // 64, bh)](
            q, k, v, o, scale_qk, seq, q.stride(0), q.stride(1), D=d, BLOCK_M=64, BLOCK_N=64
        ),
        [o],
        lambda: torch.allclose(o, torch.softmax(q @ k.transpose(1, 2) * scale_qk, -1) @ v, atol=1e-4),
    )
    return out
