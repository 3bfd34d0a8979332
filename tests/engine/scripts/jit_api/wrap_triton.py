"""A launch through torch's own Triton wrapper (torch.library.wrap_triton, what triton_op bodies use):
torch runs it as its triton_kernel_wrapper_mutation operator, which asks every dispatch mode for a rule."""

import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


n = 1000
x, y = torch.randn(n), torch.randn(n)
out = torch.empty(n)
torch.library.wrap_triton(add_kernel)[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
torch.testing.assert_close(out, x + y)
print("wrap_triton ok")
