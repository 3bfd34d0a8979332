"""Synchronisation cases for the race analysis (tests/engine/test_findings_sync.py): each access that
a test looks at ends with `# at: NAME`."""
import torch
import triton
import triton.language as tl


@triton.jit
def load_vs_atomic(acc_ptr, out_ptr):
    pid = tl.program_id(0)
    if pid == 0:
        v = tl.load(acc_ptr)  # at: plain_load
        tl.store(out_ptr, v)
    else:
        tl.atomic_add(acc_ptr, 1.0)  # at: atomic_add


@triton.jit
def two_atomics(acc_ptr):
    tl.atomic_add(acc_ptr, 1.0)  # at: atomic_only_a
    tl.atomic_max(acc_ptr, 2.0)  # at: atomic_only_b


@triton.jit
def store_released(acc_ptr, lock_ptr):
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    v = tl.load(acc_ptr)  # at: store_released_load
    tl.store(acc_ptr, v + 1.0)  # at: store_released_store
    tl.store(lock_ptr, 0)


@triton.jit
def relaxed_lock(acc_ptr, lock_ptr):
    while tl.atomic_cas(lock_ptr, 0, 1, sem="relaxed") == 1:
        pass
    v = tl.load(acc_ptr)  # at: relaxed_load
    tl.store(acc_ptr, v + 1.0)
    tl.atomic_xchg(lock_ptr, 0, sem="relaxed")


@triton.jit
def cta_lock(acc_ptr, lock_ptr):
    while tl.atomic_cas(lock_ptr, 0, 1, scope="cta") == 1:
        pass
    v = tl.load(acc_ptr)  # at: cta_load
    tl.store(acc_ptr, v + 1.0)
    tl.atomic_xchg(lock_ptr, 0, scope="cta")


@triton.jit
def outside_section(acc_ptr, lock_ptr):
    while tl.atomic_cas(lock_ptr, 0, 1) == 1:
        pass
    v = tl.load(acc_ptr)  # at: inside_load
    tl.store(acc_ptr, v + 1.0)  # at: inside_store
    tl.atomic_xchg(lock_ptr, 0)
    tl.store(acc_ptr, 0.0)  # at: outside_store


@triton.jit
def different_locks(acc_ptr, lock_ptr):
    lock = lock_ptr + tl.program_id(0) % 2
    while tl.atomic_cas(lock, 0, 1) == 1:
        pass
    v = tl.load(acc_ptr)  # at: two_locks_load
    tl.store(acc_ptr, v + 1.0)
    tl.atomic_xchg(lock, 0)


@triton.jit
def xchg_lock(acc_ptr, lock_ptr):
    while tl.atomic_xchg(lock_ptr, 1) == 1:
        pass
    v = tl.load(acc_ptr)  # at: xchg_lock_load
    tl.store(acc_ptr, v + 1.0)
    tl.atomic_xchg(lock_ptr, 0)


@triton.jit
def same_value_then_different(out_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(out_ptr + i, i)  # at: same_values
    tl.store(out_ptr + N + i, i * tl.program_id(0))  # at: different_values


@triton.jit
def temporary_then_same_final(out_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(out_ptr + i, tl.full((N,), 0, tl.int32))  # at: temporary_store
    tl.store(out_ptr + i, tl.full((N,), 1, tl.int32))  # at: same_final_store


@triton.jit
def temporary_then_different_final(out_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(out_ptr + i, tl.full((N,), 0, tl.int32))  # at: temporary_store_2
    tl.store(out_ptr + i, i + tl.program_id(0))  # at: different_final_store


@triton.jit
def temporary_read_back(out_ptr, res_ptr, N: tl.constexpr):
    i = tl.arange(0, N)
    tl.store(out_ptr + i, tl.full((N,), 0, tl.int32))  # at: temporary_store_3
    x = tl.load(out_ptr + i)  # at: read_between
    tl.store(out_ptr + i, tl.full((N,), 1, tl.int32))  # at: same_final_store_3
    tl.store(res_ptr + tl.program_id(0) * N + i, x)


if __name__ == "__main__":
    acc = torch.zeros(1)
    out = torch.zeros(1)
    load_vs_atomic[(4,)](acc, out)
    two_atomics[(4,)](torch.zeros(1))
    for kernel in (store_released, relaxed_lock, cta_lock, outside_section, xchg_lock):
        kernel[(4,)](torch.zeros(1), torch.zeros(1, dtype=torch.int32))
    different_locks[(4,)](torch.zeros(1), torch.zeros(2, dtype=torch.int32))
    same_value_then_different[(3,)](torch.zeros(32, dtype=torch.int32), N=16)
    temporary_then_same_final[(4,)](torch.zeros(16, dtype=torch.int32), N=16)
    temporary_then_different_final[(4,)](torch.zeros(16, dtype=torch.int32), N=16)
    temporary_read_back[(4,)](torch.zeros(16, dtype=torch.int32), torch.zeros(64, dtype=torch.int32), N=16)
