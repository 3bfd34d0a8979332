"""Program 0 waits on a flag that no program of the launch ever sets: on a GPU this launch hangs. The
tool runs the other programs by turns, sees that nothing can change, and stops at the waiting line."""
import torch
import triton
import triton.language as tl


@triton.jit
def never_set(flag_ptr, out_ptr):
    pid = tl.program_id(0)
    if pid == 0:
        while tl.atomic_add(flag_ptr, 0) == 0:
            pass
    tl.store(out_ptr + pid, 1)


if __name__ == "__main__":
    out = torch.zeros(3, dtype=torch.int32)
    never_set[(3,)](torch.zeros(1, dtype=torch.int32), out)
