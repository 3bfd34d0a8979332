"""Programs of one launch that wait on each other: a GPU runs them (all resident at once); the tool
runs them by turns. Each kernel's result is checked against what a GPU gives, by the script itself."""
import torch
import triton
import triton.language as tl


@triton.jit
def grid_barrier(count_ptr, out_ptr, N: tl.constexpr):
    # every program arrives, then waits until all N have: each reads N afterwards
    pid = tl.program_id(0)
    tl.atomic_add(count_ptr, 1)
    while tl.atomic_add(count_ptr, 0) < N:
        pass
    tl.store(out_ptr + pid, tl.atomic_add(count_ptr, 0))


@triton.jit
def first_program_reduces(x_ptr, partial_ptr, done_ptr, out_ptr, N: tl.constexpr, BLOCK: tl.constexpr):
    # each program leaves its block's sum; program 0 waits until the others are done and adds them up
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    tl.store(partial_ptr + pid, tl.sum(tl.load(x_ptr + offs), axis=0))
    if pid == 0:
        while tl.atomic_add(done_ptr, 0, sem="acquire") < N - 1:
            pass
        total = tl.sum(tl.load(partial_ptr + tl.arange(0, N)), axis=0)
        tl.store(out_ptr, total)
    else:
        tl.atomic_add(done_ptr, 1, sem="release")


@triton.jit
def in_reverse_order(turn_ptr, order_ptr, N: tl.constexpr):
    # program i may go only after program i + 1 did: the last program goes first
    pid = tl.program_id(0)
    while tl.atomic_add(turn_ptr, 0) != N - 1 - pid:
        pass
    tl.store(order_ptr + (N - 1 - pid), pid)
    tl.atomic_add(turn_ptr, 1)


if __name__ == "__main__":
    count = torch.zeros(1, dtype=torch.int32)
    seen = torch.zeros(8, dtype=torch.int32)
    grid_barrier[(8,)](count, seen, N=8)
    assert seen.tolist() == [8] * 8, seen

    x = torch.arange(64, dtype=torch.float32)
    partial = torch.zeros(4)
    done = torch.zeros(1, dtype=torch.int32)
    out = torch.zeros(1)
    first_program_reduces[(4,)](x, partial, done, out, N=4, BLOCK=16)
    assert out.item() == x.sum().item(), out

    turn = torch.zeros(1, dtype=torch.int32)
    order = torch.full((6,), -1, dtype=torch.int32)
    in_reverse_order[(6,)](turn, order, N=6)
    assert order.tolist() == [5, 4, 3, 2, 1, 0], order
    print("all three as on a GPU")
