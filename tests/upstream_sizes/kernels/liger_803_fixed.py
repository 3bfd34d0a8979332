"""Liger-Kernel's RMSNorm forward after the fix of issue #803, with the wrap the fix left behind.

Report: https://github.com/linkedin/Liger-Kernel/issues/803. Fix: PR #804, commit
b27b4c5f2c312f3e006c39bc3e62c6627c18d8a4 (src/liger_kernel/ops/rms_norm.py): `row_idx =
tl.program_id(0).to(tl.int64)` in _rms_norm_forward_kernel, so every row offset is int64. The same file's
_block_rms_norm_forward_kernel, which rms_norm_forward launches instead for rows of at most 256 columns
and at least 32768 rows (`_block_rms_norm_forward_kernel[(triton.cdiv(n_rows, BLOCK_ROW),)]`, BLOCK_ROW =
16), was not touched: its `row_idx = tl.program_id(0) * BLOCK_ROW + tl.arange(0, BLOCK_ROW)` is int32, and
`row_idx[:, None] * X_row_stride` wraps once n_rows * n_cols passes 2**31 (8,388,608 rows of 256 in bf16:
4 GiB). It is still int32 at the snapshot's HEAD; Liger-Kernel issue #1483 ("Blocked Triton RMSNorm
forward overflows int32 row offsets", September 2026, fixed by PR #1482) later reported exactly this wrap.
Both kernels are written again here with the library's offset arithmetic, masks and grids (the Llama
casting path); the script calls the block kernel directly at a small size, as the host would at 32768
rows or more.
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _rms_norm_forward_kernel(
    Y_ptr,
    Y_row_stride,
    X_ptr,
    X_row_stride,
    W_ptr,
    W_row_stride,
    RSTD_ptr,
    RSTD_row_stride,
    n_cols,
    eps,
    offset,
    BLOCK_SIZE: tl.constexpr,
):
    row_idx = tl.program_id(0).to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    Y_ptr += row_idx * Y_row_stride
    X_ptr += row_idx * X_row_stride
    RSTD_ptr += row_idx * RSTD_row_stride

    X_row = tl.load(X_ptr + col_offsets, mask=mask, other=0)
    X_row_dtype = X_row.dtype
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0)
    X_row = X_row.to(tl.float32)
    mean_square = tl.sum(X_row * X_row, axis=0) / n_cols
    rstd = tl.rsqrt(mean_square + eps)
    tl.store(RSTD_ptr, rstd)
    X_row = (X_row * rstd).to(X_row_dtype)
    Y_row = X_row * (offset + W_row)
    tl.store(Y_ptr + col_offsets, Y_row, mask=mask)


@triton.jit
def _block_rms_norm_forward_kernel(
    Y_ptr,
    Y_row_stride,
    X_ptr,
    X_row_stride,
    W_ptr,
    W_row_stride,
    RSTD_ptr,
    RSTD_row_stride,
    n_rows,
    n_cols,
    eps,
    offset,
    BLOCK_SIZE: tl.constexpr,
    BLOCK_ROW: tl.constexpr,
):
    row_idx = tl.program_id(0) * BLOCK_ROW + tl.arange(0, BLOCK_ROW)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    row_mask = row_idx < n_rows
    col_mask = col_offsets < n_cols

    X_row = tl.load(  # expect: wrap X_ptr
        X_ptr + row_idx[:, None] * X_row_stride + col_offsets[None, :],
        mask=row_mask[:, None] & col_mask[None, :],
        other=0,
    )
    X_row_dtype = X_row.dtype
    W_row = tl.load(W_ptr + col_offsets, mask=col_mask, other=0)
    X_row = X_row.to(tl.float32)
    mean_square = tl.sum(X_row * X_row, axis=1) / n_cols
    rstd = tl.rsqrt(mean_square + eps)
    tl.store(RSTD_ptr + row_idx * RSTD_row_stride, rstd, row_mask)
    X_row = (X_row * rstd[:, None]).to(X_row_dtype)
    Y_row = X_row * (offset + W_row)[None, :]
    tl.store(  # expect: wrap Y_ptr
        Y_ptr + row_idx[:, None] * Y_row_stride + col_offsets[None, :],
        Y_row,
        mask=row_mask[:, None] & col_mask[None, :],
    )


def _reference(X, W):
    x = X.float()
    rstd = torch.rsqrt((x * x).mean(dim=1) + 1e-6)
    return rstd, (x * rstd[:, None]).bfloat16().float() * W.float()


if __name__ == "__main__":
    # The row path (n_cols > 256).
    n_rows, n_cols = 48, 600
    X = torch.randn(n_rows, n_cols, dtype=torch.bfloat16)
    W = torch.randn(n_cols, dtype=torch.bfloat16)
    Y = torch.empty_like(X)
    RSTD = torch.empty(n_rows, dtype=torch.float32)
    _rms_norm_forward_kernel[(n_rows,)](
        Y, Y.stride(0), X, X.stride(0), W, W.stride(0), RSTD, RSTD.stride(0), n_cols, 1e-6, 0.0,
        BLOCK_SIZE=triton.next_power_of_2(n_cols),
    )  # fmt: skip
    rstd, y = _reference(X, W)
    assert torch.allclose(RSTD, rstd, rtol=1e-3) and torch.allclose(Y.float(), y, rtol=2e-2, atol=2e-2)

    # The block path (n_cols <= 256), at a small size.
    n_rows, n_cols = 40, 96
    X = torch.randn(n_rows, n_cols, dtype=torch.bfloat16)
    W = torch.randn(n_cols, dtype=torch.bfloat16)
    Y = torch.empty_like(X)
    RSTD = torch.empty(n_rows, dtype=torch.float32)
    BLOCK_ROW = 16
    _block_rms_norm_forward_kernel[(triton.cdiv(n_rows, BLOCK_ROW),)](
        Y, Y.stride(0), X, X.stride(0), W, W.stride(0), RSTD, RSTD.stride(0), n_rows, n_cols, 1e-6, 0.0,
        BLOCK_SIZE=triton.next_power_of_2(n_cols), BLOCK_ROW=BLOCK_ROW,
    )  # fmt: skip
    rstd, y = _reference(X, W)
    assert torch.allclose(RSTD, rstd, rtol=1e-3) and torch.allclose(Y.float(), y, rtol=2e-2, atol=2e-2)
