"""The kernel of triton issue #6748 ("pointer should use int64 as its latent operating data type by default
to avoid overflow"), as its report wrote it: a 2-D store whose row offset `offs_m[:, None] * stride_m` is
int32 (program id, tl.arange and int arguments all int32), an illegal memory access once the tensor passes
2**31 elements.

Report: https://github.com/triton-lang/triton/issues/6748 (closed; Triton's offsets stay int32, so the fix
belongs in the kernel: triton_6748_fixed.py widens the row offsets before the stride product). The kernel
is written again with the report's offsets, masks, its one autotune config and its program-id split;
the report shows no host code, so the launch is the grid its split implies: cdiv(num_rows, BLOCK_SIZE_M)
* cdiv(num_cols, BLOCK_SIZE_N) programs, as a function of the config.
"""

import torch
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({"BLOCK_SIZE_M": 128, "BLOCK_SIZE_N": 256}, num_stages=3, num_warps=8)],
    key=["num_rows", "num_cols"],
)
@triton.jit
def kernel_1(pointer, stride_m, stride_n, num_rows: int, num_cols: int, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(num_rows, BLOCK_SIZE_M)
    pid_m = pid % num_pid_m
    pid_n = pid // num_pid_m

    offs_m = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_n = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)

    values = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)

    pointers = pointer + offs_m[:, None] * stride_m + offs_n[None, :] * stride_n
    mask = (offs_m[:, None] < num_rows) & (offs_n[None, :] < num_cols)
    tl.store(pointers, values, mask=mask)  # expect: wrap pointer


if __name__ == "__main__":
    x = torch.ones(200, 300)
    grid = lambda META: (triton.cdiv(x.shape[0], META["BLOCK_SIZE_M"]) * triton.cdiv(x.shape[1], META["BLOCK_SIZE_N"]),)  # noqa: E731
    kernel_1[grid](x, x.stride(0), x.stride(1), x.shape[0], x.shape[1])
    assert torch.equal(x, torch.zeros(200, 300))
