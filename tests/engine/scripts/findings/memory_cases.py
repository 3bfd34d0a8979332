"""Host writes and uninitialised memory (tests/engine/test_findings_memory.py): each access that a test
looks at ends with `# at: NAME`."""
import torch
import triton
import triton.language as tl


@triton.jit
def read_all(src_ptr, dst_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    m = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=m), mask=m)  # at: read_all


@triton.jit
def read_copied(src_ptr, dst_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    m = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=m), mask=m)  # at: read_copied


@triton.jit
def read_view_written(src_ptr, dst_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    m = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=m), mask=m)  # at: read_half_columns


@triton.jit
def read_reused(src_ptr, dst_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    m = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=m), mask=m)  # at: read_reused


@triton.jit
def write_half(out_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(out_ptr + offs, offs.to(tl.float32), mask=offs < n // 2)  # at: write_half_zeros


@triton.jit
def write_half_empty(out_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(out_ptr + offs, offs.to(tl.float32), mask=offs < n // 2)  # at: write_half_empty


if __name__ == "__main__":
    dst = torch.empty(64)
    # Read before anything wrote it: 64 uninitialised elements.
    read_all[(1,)](torch.empty_like(dst), dst, 64, B=64)
    # copy_, out= and a random fill write everything: nothing uninitialised.
    a = torch.empty(64)
    a.copy_(torch.arange(64.0))
    b = torch.empty(64)
    torch.add(a, 1.0, out=b)
    c = torch.empty(64).normal_()
    for src in (a, b, c):
        read_copied[(1,)](src, dst, 64, B=64)
    # A strided view assignment writes half the columns: 16 of 32 elements stay uninitialised.
    grid = torch.empty(4, 8)
    grid[:, :4] = 1.0
    read_view_written[(1,)](grid, dst, 32, B=32)
    # Freed torch.empty memory reused by a fully written tensor: nothing uninitialised.
    for _ in range(3):
        gone = torch.empty(4096)
        del gone
        reused = torch.ones(4096)
        read_reused[(64,)](reused, torch.empty(4096), 4096, B=64)
    # A partial write of a zero-filled output: information; of a torch.empty one: a warning.
    write_half[(2,)](torch.zeros(100), 100, B=64)
    write_half_empty[(2,)](torch.empty(100), 100, B=64)
