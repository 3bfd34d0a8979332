"""megablocks' _padded_copy (the gather of a MoE layer) before PR #185 ("Fix int32 overflow in Triton
_padded_copy pointer arithmetic").

Report and fix: https://github.com/databricks/megablocks/pull/185 (closed; #186 is the same change, open:
neither is merged in the snapshot, whose megablocks/backend/kernels.py is at 35abddf8). The kernel moves to
its rows with `a += offset * NUM_COLUMNS` and `b += index_b * NUM_COLUMNS`, both int32: `offset` is a
token index loaded from `indices`, `index_b` is the program id less the loaded bin bounds plus the loaded
padded bin start. The fix widens both (`.to(tl.int64)`), megablocks_185_fixed.py. Written again with the
kernel's offsets and masks and padded_gather's launch (`_padded_copy[(indices.shape[0],)]`, A_TO_B, no
scale); the library autotunes BLOCK_X (one config pinned here).

What the size check can see: `index_b * NUM_COLUMNS` grows with the program id, so it is checked (the
loaded bin bounds read as zeros on address-only memory: index_b is the program id, the smallest it can be
in a bin), and found. `offset * NUM_COLUMNS` is a loaded value times the width: the check reads loads as
zeros, so that wrap (the one the report hit, under routing imbalance) is out of its reach. The output's
row count is data too (the host reads padded_bins[-1]): at another size the check keeps `b` at the
script's rows, so only sizes where the rows still hold every program are meaningful there.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _padded_copy(
    a,
    b,
    indices,
    bin_ids,
    weights,
    bins,
    padded_bins,
    NUM_COLUMNS: tl.constexpr,
    TOP_K: tl.constexpr,
    BLOCK_X: tl.constexpr,
    A_TO_B: tl.constexpr,
    SCALE: tl.constexpr,
):
    index_a = tl.load(indices + tl.program_id(0))
    bin_idx = tl.load(bin_ids + tl.program_id(0))
    offset_in_bin = tl.program_id(0)
    if bin_idx > 0:
        offset_in_bin -= tl.load(bins + bin_idx - 1)
    index_b = offset_in_bin
    if bin_idx > 0:
        index_b += tl.load(padded_bins + bin_idx - 1)

    offset = index_a // TOP_K if A_TO_B else index_a
    a += tl.multiple_of(offset * NUM_COLUMNS, NUM_COLUMNS)
    b += tl.multiple_of(index_b * NUM_COLUMNS, NUM_COLUMNS)
    offsets = tl.max_contiguous(tl.arange(0, BLOCK_X), BLOCK_X)
    scale = tl.load(weights + index_a) if SCALE else 1
    iptr = a if A_TO_B else b
    optr = b if A_TO_B else a

    iterations = tl.cdiv(NUM_COLUMNS, BLOCK_X)
    for _ in range(iterations):
        mask = offsets < NUM_COLUMNS
        x = tl.load(iptr + offsets, mask=mask)
        x = x.to(tl.float32) * scale.to(tl.float32)
        tl.store(optr + offsets, x.to(optr.dtype.element_ty), mask=mask)  # expect: wrap b
        offsets += BLOCK_X


def padded_gather(x, indices, bin_ids, bins, padded_bins, top_k):
    output_rows = int(padded_bins[-1].item())
    out = torch.zeros((output_rows, x.shape[1]), dtype=x.dtype, device=x.device)
    _padded_copy[(indices.shape[0],)](
        x, out, indices, bin_ids, None, bins, padded_bins,
        NUM_COLUMNS=x.shape[1], A_TO_B=True, TOP_K=top_k, SCALE=False, BLOCK_X=64,
    )  # fmt: skip
    return out


if __name__ == "__main__":
    # 10 tokens, top-2 routing to 3 experts, each expert's rows padded to a multiple of 8.
    tokens, top_k, experts, columns = 10, 2, 3, 96
    x = torch.randn(tokens, columns)
    choice = torch.arange(tokens * top_k) % experts
    bin_ids, indices = torch.sort(choice.int(), stable=True)
    indices = indices.int()
    counts = torch.bincount(bin_ids, minlength=experts)
    bins = torch.cumsum(counts, 0).int()
    padded_bins = torch.cumsum((counts + 7) // 8 * 8, 0).int()
    out = padded_gather(x, indices, bin_ids, bins, padded_bins, top_k)
    starts = padded_bins - ((counts + 7) // 8 * 8)
    for e in range(experts):
        rows = x[indices[bin_ids == e].long() // top_k]
        assert torch.equal(out[starts[e] : starts[e] + counts[e]], rows)
