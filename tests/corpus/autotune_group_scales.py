"""Dequantise with one scale per GROUP weights, autotuned over the block size. The scale load has no mask:
its author reasoned that n is a multiple of GROUP, so every element has a scale. That holds for a block no
larger than a group (it then divides n too), not for BLOCK=256: its last program runs past n, and its 128
lanes past the end read a scale that does not exist. A GPU may keep any of the three configs, so the
finding is reported whichever one the autotuner keeps (the hints show BLOCK=64, the first in the list)."""

import torch
import triton
import triton.language as tl

GROUP = 128


@triton.autotune(
    configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})],
    key=["n"],
)
@triton.jit
def dequant_kernel(w_ptr, s_ptr, out_ptr, n, GROUP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    w = tl.load(w_ptr + offs, mask=mask)  # expect: launches=1
    s = tl.load(s_ptr + offs // GROUP)  # expect: oob load s_ptr lanes=128 programs=1; oob-sizes load s_ptr
    tl.store(out_ptr + offs, w * s, mask=mask)


if __name__ == "__main__":
    n = 5 * GROUP  # 640: a multiple of 64 and 128, not of 256
    w = torch.rand(n)
    s = torch.rand(n // GROUP)
    out = torch.empty(n)
    dequant_kernel[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](w, s, out, n, GROUP=GROUP)
    assert torch.equal(out, w * s.repeat_interleave(GROUP))
