"""Programmatic dependent launch (Hopper's grid dependency control), as lmdeploy's paged attention uses it:
`tl.extra.cuda.gdc_wait()` before reading what the previous launch wrote and `gdc_launch_dependents()` once
the next launch may start. The compiler compiles both (safe without PDL too); launches run one after the
other to their end here, so the wait is met and the hint changes nothing."""
import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import gdc_wait


@triton.jit
def produce(x_ptr, y_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    tl.extra.cuda.gdc_launch_dependents()
    tl.store(y_ptr + offs, tl.load(x_ptr + offs) * 2.0)


@triton.jit
def consume(y_ptr, z_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    gdc_wait()
    tl.store(z_ptr + offs, tl.load(y_ptr + offs) + 1.0)


if __name__ == "__main__":
    x = torch.arange(32.0)
    y, z = torch.empty(32), torch.empty(32)
    produce[(1,)](x, y, N=32)
    consume[(1,)](y, z, N=32)
    torch.testing.assert_close(z, x * 2.0 + 1.0)
    print("grid dependency control ok")
