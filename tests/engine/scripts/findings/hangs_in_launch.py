"""Program 3 waits for a flag that nothing sets (on a GPU it hangs as well): the run is stopped at the
time limit inside the launch; programs 0-2 finished and are kept (the launch marked partial)."""
import torch
import triton
import triton.language as tl


@triton.jit
def waits_for_a_flag(x_ptr, flag_ptr, B: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * B + tl.arange(0, B)
    tl.store(x_ptr + offs, offs.to(tl.float32))  # at: tile
    if pid == 3:
        while tl.load(flag_ptr) == 0:
            pass


if __name__ == "__main__":
    x = torch.zeros(8 * 16)
    flag = torch.zeros(1, dtype=torch.int32)
    waits_for_a_flag[(8,)](x, flag, B=16)
