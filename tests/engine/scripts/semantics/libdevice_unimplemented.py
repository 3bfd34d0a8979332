"""A libdevice function with no implementation under the tool: the run stops at the call with an
error naming it."""
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice


@triton.jit
def kernel(x_ptr, out_ptr, B: tl.constexpr):
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, libdevice.j0(x))


if __name__ == "__main__":
    x = torch.randn(16)
    out = torch.empty(16)
    kernel[(1,)](x, out, B=16)
