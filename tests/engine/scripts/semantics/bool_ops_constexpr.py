"""`and` / `or` / `not` as the code generator runs them: constexprs and Python values short-circuit
(the right side of `HAS_W and ...` is never evaluated when HAS_W is False), tensors combine
elementwise, chains of three, `not` of a constexpr and of a tensor, scalars in `if` conditions."""
import torch
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, w_ptr, out_ptr, n, lo, hi, HAS_W: tl.constexpr, SKIP: tl.constexpr, B: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * B + tl.arange(0, B)
    in_range = offs < n
    # three tensors, one `or`
    band = (offs < lo) or (offs >= hi) or (offs == 40)
    keep = in_range and band and not SKIP
    x = tl.load(x_ptr + offs, mask=keep, other=0.0)
    if HAS_W and tl.load(w_ptr) > 0:  # w_ptr is None when HAS_W is False: never evaluated
        x = x * tl.load(w_ptr)
    if pid >= 0 and n > 0:  # scalar tensors in an `if`
        x = x + 1.0
    tl.store(out_ptr + offs, x, mask=in_range and not (not keep))


if __name__ == "__main__":
    n = 100
    x = torch.randn(n)
    idx = torch.arange(n)
    band = (idx < 30) | (idx >= 70) | (idx == 40)
    for has_w, w in ((False, None), (True, torch.tensor([2.0]))):
        out = torch.full((n,), -7.0)
        kernel[(2,)](x, w, out, n, 30, 70, HAS_W=has_w, SKIP=False, B=64)
        ref = torch.where(band, x * (2.0 if has_w else 1.0) + 1.0, torch.tensor(-7.0))
        assert torch.equal(out, ref), (out - ref).abs().max()
    out = torch.full((n,), -7.0)
    kernel[(2,)](x, None, out, n, 30, 70, HAS_W=False, SKIP=True, B=64)
    assert torch.equal(out, torch.full((n,), -7.0))
