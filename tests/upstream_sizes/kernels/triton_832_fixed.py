"""The kernel of triton issue #832 with its index widened: `tl.program_id(0).to(tl.int64) * XBLOCK`.

Every offset is then int64 at any size. The bug version's notes follow.
and overflow causing IMA"): a flat pointwise kernel over a (4096, 64, 112, 112) tensor, 3,288,334,336
elements, whose `xoffset = tl.program_id(0) * XBLOCK` is int32 and wraps past 2**31.

Report: https://github.com/triton-lang/triton/issues/832 (closed; the fix is a widened index, as inductor
now emits for tensors past 2**31 elements: triton_832_fixed.py). Written again with the repro's offsets,
masks and launch (`grid(xnumel)`: cdiv(xnumel, XBLOCK) programs); the repro overwrote the `xnumel`
argument with its value as a literal inside the kernel, which is left out here (the argument is used).

Out of the size check's reach, and asserted as such: the check holds integer arguments below 2**31, where
the JIT passes them as int32. This kernel is right for every such n (`pid * XBLOCK + arange` stays below n
< 2**31); it wraps only once n itself passes 2**31, where the JIT passes n as int64 but the program id
stays int32. The bug version gets no finding (a miss), the fixed one none.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def kernel1(in_ptr0, in_ptr1, out_ptr0, xnumel, XBLOCK: tl.constexpr):
    xoffset = tl.program_id(0).to(tl.int64) * XBLOCK
    xindex = xoffset + tl.reshape(tl.arange(0, XBLOCK), [XBLOCK])
    xmask = xindex < xnumel
    x3 = xindex
    x1 = (xindex // 12544) % 64
    tmp0 = tl.load(in_ptr0 + (x3), xmask)
    tmp1 = tl.load(in_ptr1 + (x1), xmask)
    tmp2 = tmp0 - tmp1
    tl.store(out_ptr0 + (x3 + tl.zeros([XBLOCK], tl.int32)), tmp2, xmask)


if __name__ == "__main__":
    buf0 = torch.randn(2, 64, 112, 112)  # the repro's batch is 4096
    bias = torch.randn(64)
    out = torch.empty_like(buf0)
    xnumel = buf0.numel()
    kernel1[(triton.cdiv(xnumel, 1024),)](buf0, bias, out, xnumel, XBLOCK=1024)
    assert torch.equal(out, buf0 - bias[None, :, None, None])
