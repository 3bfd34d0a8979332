"""A pointer block picked lane by lane by tl.where from two arguments: each lane reads its own argument's
tensor (a GPU follows each lane's pointer). argv[1]: "pick" (even lanes from a, odd from b, both in bounds),
"past" (b's lanes offset past b's end, into a: a and b are views of one storage, so by address alone the
lanes would look like in-bounds reads of a), "moved" (the block transposed after the pick: each lane's
argument found by its address)."""
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def pick(a_ptr, b_ptr, out_ptr, shift, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    src = tl.where(offs % 2 == 0, a_ptr + offs, b_ptr + offs + shift)  # even lanes from a, odd from b
    tl.store(out_ptr + offs, tl.load(src))


@triton.jit
def pick_moved(a_ptr, b_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    offs = r * C + c
    src = tl.trans(tl.where(c % 2 == 0, a_ptr + offs, b_ptr + offs))
    tl.store(out_ptr + tl.trans(offs), tl.load(src))


mode = sys.argv[1] if len(sys.argv) > 1 else "pick"
n = 64
whole = torch.arange(2 * n, dtype=torch.float32)
b, a = whole[:n], whole[n:]  # one storage: a starts right after b ends
out = torch.zeros(n)
if mode == "moved":
    pick_moved[(1,)](a, b, out, R=8, C=8)
else:
    pick[(1,)](a, b, out, n if mode == "past" else 0, BLOCK=n)
lane = torch.arange(n)
want = torch.where(lane % 2 == 0, a, b)
print("values as on a GPU:", bool(torch.equal(out, want)) if mode != "past" else "n/a")
