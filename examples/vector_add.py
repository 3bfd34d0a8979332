"""Clean: add two vectors of 1000 floats with blocks of 256. The last block is partly masked off,
and the masks keep every lane inside the tensors."""
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    inside = offs < n
    x = tl.load(x_ptr + offs, mask=inside)
    y = tl.load(y_ptr + offs, mask=inside)
    tl.store(out_ptr + offs, x + y, mask=inside)


if __name__ == "__main__":
    n = 1000
    x = torch.randn(n)
    y = torch.randn(n)
    out = torch.empty(n)
    add_kernel[(triton.cdiv(n, 256),)](x, y, out, n, BLOCK=256)
    assert torch.allclose(out, x + y)
