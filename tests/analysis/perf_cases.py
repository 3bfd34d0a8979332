"""Kernels whose performance metrics are easy to work out by hand (tests/analysis/test_performance.py)."""

import torch
import triton
import triton.language as tl


@triton.jit
def row_tile_kernel(x_ptr, out_ptr, N: tl.constexpr):
    # A 16 x 32 float32 tile of a row-major 64 x 64 matrix: each row of the tile is 128 contiguous,
    # 32-byte aligned bytes, so every sector fetched is used: 100%.
    rows = tl.program_id(0) * 16 + tl.arange(0, 16)
    cols = tl.arange(0, 32)
    tile = tl.load(x_ptr + rows[:, None] * N + cols[None, :])  # row tile
    tl.store(out_ptr + rows[:, None] * 32 + cols[None, :], tile)


@triton.jit
def column_walk_kernel(x_ptr, out_ptr, N: tl.constexpr):
    # Program c reads column c of a row-major 64 x 64 float32 matrix: 64 lanes 256 B apart, each
    # alone in its 32-byte sector: 4 / 32 = 12.5%.
    c = tl.program_id(0)
    r = tl.arange(0, 64)
    col = tl.load(x_ptr + r * N + c)  # column walk
    tl.store(out_ptr + c * 64 + r, col)


@triton.jit
def broadcast_kernel(w_ptr, out_ptr):
    # Every one of the 8 programs reads the same 64 weights: reuse = 8.
    p = tl.program_id(0)
    r = tl.arange(0, 64)
    w = tl.load(w_ptr + r)  # broadcast
    tl.store(out_ptr + p * 64 + r, w)


@triton.jit
def dot_kernel(a_ptr, b_ptr, c_ptr):
    # One 16 x 16 x 32 product per program, 4 programs: 4 * 2 * 16 * 16 * 32 FLOPs.
    r16 = tl.arange(0, 16)
    r32 = tl.arange(0, 32)
    a = tl.load(a_ptr + r16[:, None] * 32 + r32[None, :])
    b = tl.load(b_ptr + r32[:, None] * 16 + r16[None, :])
    c = tl.dot(a, b)  # dot
    tl.store(c_ptr + tl.program_id(0) * 256 + r16[:, None] * 16 + r16[None, :], c)


if __name__ == "__main__":
    x = torch.randn(64, 64)
    row_tile_kernel[(4,)](x, torch.empty(64, 32), N=64)
    column_walk_kernel[(64,)](x, torch.empty(64, 64), N=64)
    broadcast_kernel[(8,)](torch.randn(64), torch.empty(8, 64))
    dot_kernel[(4,)](torch.randn(16, 32), torch.randn(32, 16), torch.empty(4, 16, 16))
