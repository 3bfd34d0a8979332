"""Integer division and remainder of negatives truncate toward zero (C, as the GPU's div.s32/rem.s32),
shifts, umulhi, and fp32 -> fp16 / bf16 rounding (nearest even) and overflow (inf), against torch."""
import torch
import triton
import triton.language as tl


@triton.jit
def kernel(a_ptr, b_ptr, div_ptr, rem_ptr, shl_ptr, shr_ptr, hi_ptr, f_ptr, h_ptr, bf_ptr, B: tl.constexpr):
    offs = tl.arange(0, B)
    a = tl.load(a_ptr + offs)
    b = tl.load(b_ptr + offs)
    tl.store(div_ptr + offs, a // b)
    tl.store(rem_ptr + offs, a % b)
    s = (b & 7).to(tl.int32)
    tl.store(shl_ptr + offs, a << s)
    tl.store(shr_ptr + offs, a >> s)  # arithmetic shift for signed
    tl.store(hi_ptr + offs, tl.umulhi(a.to(tl.uint32), b.to(tl.uint32)).to(tl.int32, bitcast=True))
    f = tl.load(f_ptr + offs)
    tl.store(h_ptr + offs, f.to(tl.float16))
    tl.store(bf_ptr + offs, f.to(tl.bfloat16))


if __name__ == "__main__":
    B = 64
    g = torch.Generator().manual_seed(0)
    a = torch.randint(-1000, 1000, (B,), generator=g, dtype=torch.int32)
    b = torch.randint(1, 50, (B,), generator=g, dtype=torch.int32) * torch.where(torch.arange(B) % 2 == 0, 1, -1).int()
    f = torch.cat([torch.randn(B - 8, generator=g) * 1000, torch.tensor([65520.0, 65519.0, 1e6, -1e6, 2049.0, 2051.0,
                                                                         3.0e38, 1.00390625])])
    outs = [torch.empty(B, dtype=torch.int32) for _ in range(5)]
    h, bf = torch.empty(B, dtype=torch.float16), torch.empty(B, dtype=torch.bfloat16)
    kernel[(1,)](a, b, *outs, f, h, bf, B=B)
    div, rem, shl, shr, hi = outs
    assert torch.equal(div, torch.div(a, b, rounding_mode="trunc")), (a, b, div)
    assert torch.equal(rem, torch.fmod(a, b)), (a, b, rem)
    s = (b & 7)
    assert torch.equal(shl, a << s) and torch.equal(shr, a >> s)
    au, bu = a.long() & 0xFFFFFFFF, b.long() & 0xFFFFFFFF
    ref_hi = ((au * bu) >> 32).to(torch.int64)
    ref_hi = torch.where(ref_hi >= 2**31, ref_hi - 2**32, ref_hi).int()
    assert torch.equal(hi, ref_hi)
    assert torch.equal(h, f.half()), (f[h != f.half()], h[h != f.half()])
    assert torch.equal(bf, f.bfloat16()), (f[bf != f.bfloat16()], bf[bf != f.bfloat16()])
    print("numerics ok")
