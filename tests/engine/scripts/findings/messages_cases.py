"""Out-of-bounds messages (tests/engine/test_findings_messages.py): each access a test looks at ends
with `# at: NAME`."""
import torch
import triton
import triton.language as tl


@triton.jit
def tail_read(x_ptr, out_ptr, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    v = tl.load(x_ptr + offs)  # at: unmasked
    tl.store(out_ptr + offs, v, mask=offs < 0)


@triton.jit
def wrong_bound(x_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(x_ptr + offs, 1.0, mask=offs < n + 1)  # at: masked


@triton.jit
def rows_2d(x_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    r = tl.arange(0, R)[:, None]
    c = tl.arange(0, C)[None, :]
    v = tl.load(x_ptr + r * C + c)  # at: broadcast
    tl.store(out_ptr + r * C + c, v)


if __name__ == "__main__":
    # One program (1,) out of bounds in each of 3 launches, each with its own tensor size.
    for n in (24, 20, 28):
        tail_read[(2,)](torch.ones(n), torch.zeros(32), B=16)
    wrong_bound[(1,)](torch.zeros(10), 10, B=16)
    # A broadcast row (stride 0 in dim 0) read as if it were a full 4×16 tensor.
    row = torch.ones(1, 8).expand(4, 8)
    rows_2d[(1,)](row, torch.zeros(4, 16), R=4, C=16)
