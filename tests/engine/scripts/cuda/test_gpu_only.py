"""A GPU test suite's file: skipped where torch sees no GPU, parametrized over sizes on "cuda"."""
import pytest
import torch
import triton
import triton.language as tl

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")


@triton.jit
def neg_kernel(x_ptr, out_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    m = offs < n
    tl.store(out_ptr + offs, -tl.load(x_ptr + offs, mask=m), mask=m)


@pytest.mark.parametrize("n", [100, 300])
def test_neg(n):
    x = torch.randn(n, device="cuda")
    out = torch.empty_like(x)
    neg_kernel[(triton.cdiv(n, 128),)](x, out, n, B=128)
    torch.testing.assert_close(out, -x)
