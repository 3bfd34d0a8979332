"""tl.arange over 100 elements: the compiler's check ("arange's range must be a power of 2") stops the
compile, so the kernel would not compile; the interpreter raises the same check."""
import torch
import triton
import triton.language as tl


@triton.jit
def copy(x_ptr, out_ptr):
    offs = tl.arange(0, 100)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))


if __name__ == "__main__":
    x = torch.randn(100)
    copy[(1,)](x, torch.empty(100))
