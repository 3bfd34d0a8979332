import os
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def inc_kernel(x_ptr, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(x_ptr + o, tl.load(x_ptr + o, mask=o < n) + 1, mask=o < n)


if __name__ == "__main__":
    x = torch.zeros(100)
    inc_kernel[(1,)](x, 100, B=128)
    if sys.argv[1:] == ["hard"]:
        os._exit(4)
    sys.exit(3)
