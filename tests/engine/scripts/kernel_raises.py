import torch
import triton
import triton.language as tl


@triton.jit
def bad_kernel(x_ptr, B: tl.constexpr):
    o = tl.arange(0, B)
    x = tl.load(x_ptr + o)
    tl.static_assert(B == 64, "this kernel wants B=64")
    tl.store(x_ptr + o, x)


if __name__ == "__main__":
    x = torch.zeros(128)
    bad_kernel[(1,)](x, B=128)
