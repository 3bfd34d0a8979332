"""A Triton kernel as a torch.library.triton_op (the op torch.compile can see into), launched through
torch.library.wrap_triton, as the torch docs write one; its test on "cuda"."""
import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton_op("tl_lib::add", mutates_args={})
def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    assert x.is_cuda and x.device.index is not None, x.device
    out = torch.empty_like(x)
    n = out.numel()
    wrap_triton(add_kernel)[(triton.cdiv(n, 256),)](x, y, out, n, B=256)
    return out


def test_triton_op(n=1000):
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    torch.testing.assert_close(add(x, y), x + y)


if __name__ == "__main__":
    test_triton_op()
    print("triton_op equals torch's")
