"""A bug to find: every program writes its partial sum to out[0] with a plain store, so the
programs race and the result depends on which one wrote last. The fix is tl.atomic_add."""
import torch
import triton
import triton.language as tl


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(x, axis=0))  # should be: tl.atomic_add(out_ptr, tl.sum(x, axis=0))


if __name__ == "__main__":
    x = torch.rand(4096)
    out = torch.zeros(1)
    sum_kernel[(16,)](x, out, x.numel(), BLOCK=256)
