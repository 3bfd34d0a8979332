"""A launch, then torch.distributed with NCCL: the run keeps the launch and says, at that line, that
NCCL needs real GPUs."""
import torch
import torch.distributed as dist
import triton
import triton.language as tl


@triton.jit
def fill_kernel(out_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(out_ptr + offs, 1.0, mask=offs < n)


if __name__ == "__main__":
    out = torch.empty(100, device="cuda")
    fill_kernel[(1,)](out, 100, B=128)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:29531", world_size=1, rank=0)
    dist.all_reduce(out)
