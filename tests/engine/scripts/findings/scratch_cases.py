"""Scratch buffers (tests/engine/test_findings_memory.py): a torch.empty buffer that one launch fills in
part and a later launch reads only where it was filled. Each store that a test looks at ends with
`# at: NAME`."""
import torch
import triton
import triton.language as tl


@triton.jit
def partial_sums(x_ptr, part_ptr, n, B: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * B + tl.arange(0, B)
    tl.store(part_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))  # at: dropped


@triton.jit
def partial_sums_read_back(x_ptr, part_ptr, n, B: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * B + tl.arange(0, B)
    tl.store(part_ptr + pid, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0)))  # at: read_back


@triton.jit
def total(part_ptr, out_ptr, n_parts, P: tl.constexpr):
    offs = tl.arange(0, P)
    tl.store(out_ptr, tl.sum(tl.load(part_ptr + offs, mask=offs < n_parts, other=0.0)))


def reduce(x, B, read_back=False):
    n_parts = triton.cdiv(x.numel(), B)
    # Sized for the smallest block a library allows: more partial sums than this launch makes.
    part = torch.empty(x.numel() // 16)
    out = torch.empty(1)
    kernel = partial_sums_read_back if read_back else partial_sums
    kernel[(n_parts,)](x, part, x.numel(), B=B)
    total[(1,)](part, out, n_parts, P=64)
    if read_back:
        print(part.sum().item())  # the host reads the elements no program wrote
    return out


if __name__ == "__main__":
    x = torch.randn(1000)
    torch.testing.assert_close(reduce(x, 64)[0], x.sum())
    torch.testing.assert_close(reduce(x, 64, read_back=True)[0], x.sum())
