"""`and` of an int1 and an int32 tensor: the compiler's logical_and bitcasts the int32 one to int1 and
refuses ("Cannot bitcast data-type of size 32 to data-type of size 1"), so the kernel would not compile.
The kernel is defined inside a function (its source is indented) to check the columns."""
import torch
import triton
import triton.language as tl


def make_kernel():
    @triton.jit
    def positive_and_nonzero(x_ptr, out_ptr, n, B: tl.constexpr):
        offs = tl.program_id(0) * B + tl.arange(0, B)
        x = tl.load(x_ptr + offs, mask=offs < n, other=0)
        keep = (x > 0) and offs
        tl.store(out_ptr + offs, keep.to(tl.int32), mask=offs < n)

    return positive_and_nonzero


if __name__ == "__main__":
    x = torch.arange(100, dtype=torch.int32)
    out = torch.empty_like(x)
    make_kernel()[(2,)](x, out, 100, B=64)
