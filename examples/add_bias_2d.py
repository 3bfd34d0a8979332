"""A bug to find: add a bias row to every row of a 50 x 96 matrix, in 16 x 32 tiles.

The mask only checks the columns. The matrix has 50 rows, the grid covers 64, so the bottom tiles
read and write rows 50..63, past the end of x and out. Hover the loads, open the access map
(the "Visualize this kernel" lens above the kernel) and watch the red band under the matrix.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def add_bias_kernel(x_ptr, bias_ptr, out_ptr, n_rows, n_cols, stride,
                    BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    col_ok = cols < n_cols
    mask = col_ok[None, :]  # forgot: & (rows < n_rows)[:, None]
    tile = tl.load(x_ptr + rows[:, None] * stride + cols[None, :], mask=mask)
    bias = tl.load(bias_ptr + cols, mask=col_ok)
    tl.store(out_ptr + rows[:, None] * stride + cols[None, :], tile + bias[None, :], mask=mask)


if __name__ == "__main__":
    x = torch.randn(50, 96)
    bias = torch.randn(96)
    out = torch.empty_like(x)
    grid = (triton.cdiv(50, 16), triton.cdiv(96, 32))
    add_bias_kernel[grid](x, bias, out, 50, 96, x.stride(0), BLOCK_R=16, BLOCK_C=32)
