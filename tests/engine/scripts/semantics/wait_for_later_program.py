"""Program 0 spins until program 1 raises a flag. On a GPU both are resident and it ends; under the
interpreter program 0 runs alone first, so the tool stops it at the waiting line."""
import torch
import triton
import triton.language as tl


@triton.jit
def handoff(flag_ptr, out_ptr):
    pid = tl.program_id(0)
    if pid == 0:
        while tl.atomic_add(flag_ptr, 0) == 0:
            pass
        tl.store(out_ptr, 1)
    else:
        tl.atomic_xchg(flag_ptr, 1)


if __name__ == "__main__":
    flag = torch.zeros(1, dtype=torch.int32)
    out = torch.zeros(1, dtype=torch.int32)
    handoff[(2,)](flag, out)
