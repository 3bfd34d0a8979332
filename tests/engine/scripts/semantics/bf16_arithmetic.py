"""bfloat16 arithmetic as a GPU computes it: each operation on the values, rounded to bfloat16 (the bare
interpreter computed on the uint16 bit patterns). Elementwise results equal torch's bfloat16 ops exactly;
reductions (combined in bfloat16, each partial rounded; the GPU's order of combines depends on the
layout, so they agree with it within a few bfloat16 ulps, not bit for bit) and a bf16 tl.dot (exact
products, float32 sums) are checked against float32 within bfloat16's precision."""
import torch
import triton
import triton.language as tl


@triton.jit
def elementwise(X, Y, O, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(X + i)
    y = tl.load(Y + i)
    tl.store(O + 0 * N + i, x + y)
    tl.store(O + 1 * N + i, x - y)
    tl.store(O + 2 * N + i, x * y)
    tl.store(O + 3 * N + i, -x)
    tl.store(O + 4 * N + i, tl.maximum(x, y))
    tl.store(O + 5 * N + i, tl.where(x < y, x, y))
    tl.store(O + 6 * N + i, tl.abs(x))
    tl.store(O + 7 * N + i, tl.fma(x, y, x))


@triton.jit
def reductions(X, O, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(X + i)
    tl.store(O + 0, tl.sum(x, 0))
    tl.store(O + 1, tl.max(x, 0))
    tl.store(O + 2, tl.min(x, 0))
    tl.store(O + 3, tl.sum(tl.cumsum(x, 0), 0))


@triton.jit
def dot(A, B, C, M: tl.constexpr):
    i = tl.arange(0, M)
    a = tl.load(A + i[:, None] * M + i[None, :])
    b = tl.load(B + i[:, None] * M + i[None, :])
    tl.store(C + i[:, None] * M + i[None, :], tl.dot(a, b))


if __name__ == "__main__":
    torch.manual_seed(0)
    n = 256
    x, y = torch.randn(n, dtype=torch.bfloat16), torch.randn(n, dtype=torch.bfloat16)
    out = torch.empty(8 * n, dtype=torch.bfloat16)
    elementwise[(1,)](x, y, out, N=n)
    fma = (x.double() * y.double() + x.double()).to(torch.bfloat16)  # one rounding
    want = [x + y, x - y, x * y, -x, torch.maximum(x, y), torch.where(x < y, x, y), x.abs(), fma]
    for k, w in enumerate(want):
        assert torch.equal(out[k * n : (k + 1) * n], w), (k, out[k * n : (k + 1) * n] - w)

    red = torch.empty(4, dtype=torch.bfloat16)
    reductions[(1,)](x, red, N=n)
    red = red.float()
    xf = x.float()
    assert red[1] == xf.max() and red[2] == xf.min(), red
    assert abs(red[0] - xf.sum()) <= 0.05 * xf.abs().sum() ** 0.5, (red[0], xf.sum())
    assert abs(red[3] - xf.cumsum(0).sum()) <= 0.02 * xf.cumsum(0).abs().sum(), (red[3], xf.cumsum(0).sum())

    a, b = torch.randn(32, 32, dtype=torch.bfloat16), torch.randn(32, 32, dtype=torch.bfloat16)
    c = torch.empty(32, 32)
    dot[(1,)](a, b, c, M=32)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-5, atol=1e-4)
    print("bf16 arithmetic as on a GPU")
