"""FlagGems' linearized adjacent-index kernel before the fix of issue #6083 (int32 offsets, an illegal
memory access at 16k-token inputs).

Report: https://github.com/flagos-ai/FlagGems/issues/6083; fix: PR #6087 ("cast pid_p to int64 to prevent
int32 offset overflow"), which changes `pid_p = tl.program_id(axis=0)` to `.to(tl.int64)`. The snapshot
here predates the merge; the kernel is the one src/flag_gems/ops/index.py's generate_index_linearized_kernel
generates (and generate_index_linearized_wrapper launches) for `inp[:, idx]` on a contiguous 3-D input
with one int32 index tensor: it bakes the indexed dimension's extent and the suffix volume into the code
as literals (a new kernel per shape), and launches `grid = lambda meta: (P, cdiv(M, BLOCK_SIZE0),
cdiv(N, BLOCK_SIZE1))` with the prefix P a constant of the generated wrapper. Written again here with those
literals for a (P, 24, 64) int8 input; the library autotunes the blocks (one config pinned here).

`(pid_p * 24 + linear_index[:, None]) * 64` is int32 (program id, int32 index values, literals): it wraps
once the prefix passes 2**31 / (24 * 64) rows, a 2 GiB int8 input (the report's mamba state
(30, 1566, 8, 128, 128), read as (30, 1566, 131072), wraps within its 30 prefix rows).
"""

import torch
import triton
import triton.language as tl


@triton.jit
def index_linearized_kernel(input_ptr, indices0_ptr, out_ptr, M, N, BLOCK_SIZE0: tl.constexpr, BLOCK_SIZE1: tl.constexpr):
    pid_p = tl.program_id(axis=0)
    pid_m = tl.program_id(axis=1)
    pid_n = tl.program_id(axis=2)

    index_offsets = pid_m * BLOCK_SIZE0 + tl.arange(0, BLOCK_SIZE0)
    suffix_offsets = pid_n * BLOCK_SIZE1 + tl.arange(0, BLOCK_SIZE1)
    index_mask = index_offsets < M

    raw0 = tl.load(indices0_ptr + index_offsets, mask=index_mask, other=0)
    idx0 = tl.where(raw0 < 0, raw0 + 24, raw0)

    linear_index = idx0 * 1
    valid_index = (idx0 >= 0) & (idx0 < 24)

    src_offsets = (pid_p * 24 + linear_index[:, None]) * 64 + suffix_offsets[None, :]
    out_offsets = (pid_p * M + index_offsets[:, None]) * 64 + suffix_offsets[None, :]
    mask = index_mask[:, None] & valid_index[:, None] & (suffix_offsets[None, :] < 64)

    cur_value = tl.load(input_ptr + src_offsets, mask=mask)  # expect: wrap input_ptr
    tl.store(out_ptr + out_offsets, cur_value, mask=mask)  # expect: wrap out_ptr


def index_wrapper(input, indices, out):
    M = indices[0].numel()
    P = input.shape[0]
    N = 64

    grid = lambda meta: (P, triton.cdiv(M, meta["BLOCK_SIZE0"]), triton.cdiv(N, meta["BLOCK_SIZE1"]))  # noqa: E731
    index_linearized_kernel[grid](input, indices[0], out, M, N, BLOCK_SIZE0=4, BLOCK_SIZE1=64)
    return out


if __name__ == "__main__":
    inp = torch.randint(-100, 100, (7, 24, 64), dtype=torch.int8)
    idx = torch.tensor([3, 0, 23, -1, 5], dtype=torch.int32)
    out = torch.empty(7, idx.numel(), 64, dtype=torch.int8)
    index_wrapper(inp, [idx], out)
    assert torch.equal(out, inp[:, idx.long()])
