"""The first block taken as full (mask = (offs < n) | (offs < BLOCK)): in bounds at n = 4096 and n + 1,
out of bounds at every n below the block; what the z3 extra of the size check finds (bench/size_symbolic.py)."""

import torch
import triton
import triton.language as tl


@triton.jit
def copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    first = (offs < n) | (offs < BLOCK)  # the first block taken as full
    x = tl.load(x_ptr + offs, mask=first)
    tl.store(out_ptr + offs, x, mask=offs < n)


n = 4096
x = torch.randn(n)
out = torch.empty(n)
copy[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
assert torch.equal(out, x)
