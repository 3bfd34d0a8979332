"""A pointer chosen by tl.where on a scalar condition among tensors that share one storage (xformers'
tiled matmul: `A1 = tl.where(pid_m < grid_m1, A11, A21)`, tiles of one matrix split along its rows):
each program reads the tile the condition picks, in bounds; the other tiles' rows are not its padding."""
import torch
import triton
import triton.language as tl


@triton.jit
def pick_tile(top_ptr, bottom_ptr, out_ptr, ROWS_TOP: tl.constexpr, COLS: tl.constexpr):
    pid = tl.program_id(0)
    src = tl.where(pid < 1, top_ptr, bottom_ptr)
    rows = tl.arange(0, 4)[:, None]
    cols = tl.arange(0, COLS)[None, :]
    x = tl.load(src + rows * 16 + cols, mask=rows < tl.where(pid < 1, ROWS_TOP, 4 - ROWS_TOP))
    tl.store(out_ptr + pid * 4 * COLS + rows * COLS + cols, x)


if __name__ == "__main__":
    m = torch.arange(4 * 16, dtype=torch.float32).reshape(4, 16)
    top, bottom = m[:1, :8], m[1:, :8]  # one storage: bottom starts 16 elements after top
    out = torch.zeros(2, 4, 8)
    pick_tile[(2,)](top, bottom, out, ROWS_TOP=1, COLS=8)
    assert torch.equal(out[0, :1], top) and torch.equal(out[1, :3], bottom), out
    print("pointer select ok")
