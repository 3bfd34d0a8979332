"""Liger-Kernel's RMSNorm forward before the fix of issue #803 ("crashes on very long seqlen 2^31").

Report: https://github.com/linkedin/Liger-Kernel/issues/803 (an illegal memory access at seqlen 1M x 4096
in bf16). Fixed by PR #804, commit b27b4c5f2c312f3e006c39bc3e62c6627c18d8a4, which casts the program id to
int64; this file is the kernel of its parent (src/liger_kernel/ops/rms_norm.py, _rms_norm_forward_kernel),
written again here with the same offset arithmetic, masks, dtypes and grid: one program per row, launched
as `_rms_norm_forward_kernel[(n_rows,)]` by rms_norm_forward (the row path, taken for BLOCK_SIZE > 256).

`row_idx` is tl.program_id(0) (int32) and the row strides are int arguments (int32), so `row_idx *
X_row_stride` is an int32 product: it wraps once n_rows * n_cols passes 2**31 (524,288 rows of 4096), a
4 GiB bf16 input. Casting modes and the weight offset are kept to the Llama path (rstd in float32).
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
    row_idx = tl.program_id(0)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    Y_ptr += row_idx * Y_row_stride
    X_ptr += row_idx * X_row_stride
    RSTD_ptr += row_idx * RSTD_row_stride

    X_row = tl.load(X_ptr + col_offsets, mask=mask, other=0)  # expect: wrap X_ptr
    X_row_dtype = X_row.dtype
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0)
    X_row = X_row.to(tl.float32)
    mean_square = tl.sum(X_row * X_row, axis=0) / n_cols
    rstd = tl.rsqrt(mean_square + eps)
    tl.store(RSTD_ptr, rstd)
    X_row = (X_row * rstd).to(X_row_dtype)
    Y_row = X_row * (offset + W_row)
    tl.store(Y_ptr + col_offsets, Y_row, mask=mask)  # expect: wrap Y_ptr


if __name__ == "__main__":
    n_rows, n_cols = 48, 600
    X = torch.randn(n_rows, n_cols, dtype=torch.bfloat16)
    W = torch.randn(n_cols, dtype=torch.bfloat16)
    Y = torch.empty_like(X)
    RSTD = torch.empty(n_rows, dtype=torch.float32)
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    _rms_norm_forward_kernel[(n_rows,)](
        Y, Y.stride(0), X, X.stride(0), W, W.stride(0), RSTD, RSTD.stride(0), n_cols, 1e-6, 0.0, BLOCK_SIZE=BLOCK_SIZE
    )
    x = X.float()
    rstd = torch.rsqrt((x * x).mean(dim=1) + 1e-6)
    assert torch.allclose(RSTD, rstd, rtol=1e-3)
    assert torch.allclose(Y.float(), (x * rstd[:, None]).bfloat16().float() * W.float(), rtol=2e-2, atol=2e-2)
