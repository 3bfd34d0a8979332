"""One access past the end of its tensor (an oob finding at it) and one in bounds, launched twice."""

import torch
import triton
import triton.language as tl


@triton.jit
def copy_past(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(x_ptr + offs)  # past the end
    tl.store(y_ptr + offs, v, mask=offs < n)  # in bounds


if __name__ == "__main__":
    x = torch.arange(100, dtype=torch.float32)
    y = torch.empty_like(x)
    copy_past[(1,)](x, y, 100, BLOCK=128)
    copy_past[(1,)](x, y, 100, BLOCK=128)
