"""A run with > 100 M out-of-bounds lanes and > 10 M touched elements, for bench/analysis_bound.py.

copy_unmasked: 1 M-lane tiles without a mask over a 12 M-element tensor: the last programs read far
past its end (contiguous runs of offsets, as TritonBench's argmax did). gather_rows: a 2-D tile per
program with a row stride larger than the row, so every row's tail lands in the padding (runs).
"""

import torch
import triton
import triton.language as tl

N = 12 << 20
B = 1 << 20
PROGRAMS = 116  # 116 M lanes, 104 M of them past the end


@triton.jit
def copy_unmasked(x_ptr, out_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    v = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, v, mask=offs < n)


@triton.jit
def gather_rows(x_ptr, out_ptr, ROWS: tl.constexpr, COLS: tl.constexpr, STRIDE: tl.constexpr):
    r = tl.program_id(0) * ROWS + tl.arange(0, ROWS)[:, None]
    c = tl.arange(0, COLS)[None, :]
    v = tl.load(x_ptr + r * STRIDE + c)
    tl.store(out_ptr + r * COLS + c, v)


if __name__ == "__main__":
    x = torch.ones(N)
    out = torch.empty(N)
    copy_unmasked[(PROGRAMS,)](x, out, N, B=B)
    base = torch.ones(4096, 1024)
    view = base[:, :1000]  # rows of 1000 with stride 1024: 24 elements of padding after each
    rows_out = torch.empty(4096 * 1024)
    gather_rows[(64,)](view, rows_out, ROWS=64, COLS=1024, STRIDE=1024)
