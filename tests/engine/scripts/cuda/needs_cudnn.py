"""A launch, then a cuDNN-only op (there is no CPU kernel for it): the run keeps the launch and says,
at that line, what needed a real GPU."""
import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)


if __name__ == "__main__":
    x = torch.randn(1, 1, 8, 8, device="cuda")
    out = torch.empty_like(x)
    copy_kernel[(1,)](x, out, x.numel(), B=64)
    w = torch.randn(1, 1, 3, 3, device="cuda")
    ref = torch.cudnn_convolution(x, w, [0, 0], [1, 1], [1, 1], 1, False, False, False)
    print(ref.shape)
