"""Accesses launched more than once over one tensor: halves by two launches, the same half twice."""

import torch
import triton
import triton.language as tl


@triton.jit
def copy_block(x_ptr, y_ptr, start, BLOCK: tl.constexpr):
    offs = start + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))  # halves


@triton.jit
def copy_again(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))  # same half


if __name__ == "__main__":
    x = torch.arange(256, dtype=torch.float32)
    y = torch.empty_like(x)
    copy_block[(1,)](x, y, 0, BLOCK=128)
    copy_block[(1,)](x, y, 128, BLOCK=128)
    copy_again[(1,)](x, y, BLOCK=128)
    copy_again[(1,)](x, y, BLOCK=128)
