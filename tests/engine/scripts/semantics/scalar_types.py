"""Scalar arguments typed as the JIT types them: float -> fp32, bool -> i1, int -> i32, or i64 past
2**31. A fp32 scalar times an fp16 block promotes to fp32, as on the GPU."""
import torch
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, out_ptr, scale, flag, small, big, B: tl.constexpr):
    tl.static_assert(scale.dtype == tl.float32)
    tl.static_assert(flag.dtype == tl.int1)
    tl.static_assert(small.dtype == tl.int32)
    tl.static_assert(big.dtype == tl.int64)
    offs = tl.arange(0, B)
    x = tl.load(x_ptr + offs)  # fp16
    y = x * scale
    tl.static_assert(y.dtype == tl.float32)
    if flag:
        y = y + (big - 2**40).to(tl.float32) + small.to(tl.float32)
    tl.store(out_ptr + offs, y)


if __name__ == "__main__":
    x = torch.randn(32).half()
    out = torch.empty(32)
    kernel[(1,)](x, out, 0.1, True, 3, 2**40 + 5, B=32)
    ref = x.float() * torch.tensor(0.1, dtype=torch.float32) + 5.0 + 3.0
    assert torch.equal(out, ref), (out - ref).abs().max()
