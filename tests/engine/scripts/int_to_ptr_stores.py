"""Stores through pointers made from integers: one far from any tensor, one into a tensor the
script holds but does not pass (a pointer table, as grouped GEMM uses)."""
import sys

import torch
import triton
import triton.language as tl


@triton.jit
def stray_store_kernel(x_ptr, delta, B: tl.constexpr):
    o = tl.arange(0, B)
    p = (x_ptr.to(tl.int64) + delta).to(tl.pointer_type(tl.float32))
    tl.store(p + o, 7.0)


@triton.jit
def table_store_kernel(table_ptr, B: tl.constexpr):
    o = tl.arange(0, B)
    p = tl.load(table_ptr).to(tl.pointer_type(tl.float32))
    tl.store(p + o, 5.0)


if __name__ == "__main__":
    x = torch.zeros(64)
    neighbour = torch.zeros(4096)
    far = 1 << 44 if sys.argv[1:] != ["neighbour"] else neighbour.data_ptr() + 64 * 4 - x.data_ptr()
    stray_store_kernel[(1,)](x, far, B=64)
    target = torch.zeros(64)
    table_store_kernel[(1,)](torch.tensor([target.data_ptr()], dtype=torch.int64), B=64)
    print("neighbour untouched:", bool((neighbour == 0).all()), "target written:", bool((target == 5).all()))
