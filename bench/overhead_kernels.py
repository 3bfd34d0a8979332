"""The four workloads of the trace-overhead benchmark, as a kernel author writes them."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, x_stride, out_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * out_stride + cols, e / tl.sum(e, axis=0), mask=mask)


@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr
):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + rk
        a = tl.load(
            a_ptr + rm[:, None] * sam + kk[None, :] * sak, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0
        )
        b = tl.load(
            b_ptr + kk[:, None] * sbk + rn[None, :] * sbn, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0
        )
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def layernorm_kernel(x_ptr, y_ptr, w_ptr, b_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = 1 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(y_ptr + row * stride + cols, xc * rstd * w + b, mask=mask)


def workloads():
    """name -> (callable launching the kernel once, a check of its output)"""
    torch.manual_seed(0)
    n = 1 << 20
    x, y, z = torch.rand(n), torch.rand(n), torch.empty(n)
    xs, outs = torch.randn(512, 1000), torch.empty(512, 1000)
    a, b, c = torch.randn(256, 256), torch.randn(256, 256), torch.empty(256, 256)
    xl, yl, wl, bl = torch.randn(512, 1000), torch.empty(512, 1000), torch.rand(1000), torch.rand(1000)
    return {
        "vector add 1M (B=1024)": (
            lambda: add_kernel[(n // 1024,)](x, y, z, n, BLOCK=1024),
            lambda: torch.allclose(z, x + y),
        ),
        "softmax 512x1000": (
            lambda: softmax_kernel[(512,)](xs, outs, 1000, xs.stride(0), outs.stride(0), BLOCK=1024),
            lambda: torch.allclose(outs, torch.softmax(xs, dim=1), atol=1e-5),
        ),
        "matmul 256^3 (32^3 blocks)": (
            lambda: matmul_kernel[(8, 8)](
                a,
                b,
                c,
                256,
                256,
                256,
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
            lambda: torch.allclose(c, a @ b, atol=1e-3),
        ),
        "layer norm 512x1000": (
            lambda: layernorm_kernel[(512,)](xl, yl, wl, bl, xl.stride(0), 1000, 1e-5, BLOCK=1024),
            lambda: torch.allclose(yl, torch.nn.functional.layer_norm(xl, (1000,), wl, bl, 1e-5), atol=1e-4),
        ),
    }
