"""Programs that wait on each other, run by turns (trace_engine/interpreter/cooperative.py), and the races between
them: data handed over through a flag is ordered, data from a program that sets no flag is not, and a
lock taken after a barrier (sections interleaved by turns) still orders its section."""
import torch
import triton
import triton.language as tl


@triton.jit
def handoff(data_ptr, flag_ptr, out_ptr):
    # program 0 waits for program 1's data; program 2 writes the same element with no flag at all
    pid = tl.program_id(0)
    if pid == 0:
        while tl.atomic_add(flag_ptr, 0, sem="acquire") == 0:
            pass
        tl.store(out_ptr, tl.load(data_ptr))  # at: flag_ordered_load
        tl.store(out_ptr + 1, tl.load(data_ptr + 1))  # at: unordered_load
    elif pid == 1:
        tl.store(data_ptr, 7.0)  # at: released_store
        tl.atomic_xchg(flag_ptr, 1, sem="release")
    else:
        tl.store(data_ptr + 1, 9.0)  # at: unreleased_store


@triton.jit
def barrier_then_lock(count_ptr, lock_ptr, acc_ptr, N: tl.constexpr):
    tl.atomic_add(count_ptr, 1)
    while tl.atomic_add(count_ptr, 0) < N:
        pass
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    v = tl.load(acc_ptr)  # at: locked_load
    tl.store(acc_ptr, v + 1.0)  # at: locked_store
    tl.atomic_xchg(lock_ptr, 0)


@triton.jit
def relaxed_flag(data_ptr, flag_ptr, out_ptr):
    # the same handoff with relaxed atomics: nothing orders the data
    pid = tl.program_id(0)
    if pid == 0:
        while tl.atomic_add(flag_ptr, 0, sem="relaxed") == 0:
            pass
        tl.store(out_ptr, tl.load(data_ptr))  # at: relaxed_load
    else:
        tl.store(data_ptr, 7.0)
        tl.atomic_xchg(flag_ptr, 1, sem="relaxed")


if __name__ == "__main__":
    out = torch.zeros(2)
    handoff[(3,)](torch.zeros(2), torch.zeros(1, dtype=torch.int32), out)
    assert out.tolist() == [7.0, 9.0], out
    acc = torch.zeros(1)
    barrier_then_lock[(4,)](torch.zeros(1, dtype=torch.int32), torch.zeros(1, dtype=torch.int32), acc, N=4)
    assert acc.item() == 4.0, acc
    relaxed_flag[(2,)](torch.zeros(1), torch.zeros(1, dtype=torch.int32), torch.zeros(1))
