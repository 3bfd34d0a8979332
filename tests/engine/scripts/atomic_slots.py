"""Each lane takes its slot from an atomic counter (lmdeploy's MoE route sort: a per-expert cursor) and
writes there: the slot is below n at any n, so the store is in bounds at every size."""
import torch
import triton
import triton.language as tl


@triton.jit
def take_slots(cursor_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    slot = tl.atomic_add(cursor_ptr + offs * 0, 1, mask=m)
    tl.store(out_ptr + slot, offs, mask=m)


if __name__ == "__main__":
    n = 12
    cursor = torch.zeros(1, dtype=torch.int32)
    out = torch.full((n,), -1, dtype=torch.int32)
    take_slots[(1,)](cursor, out, n, BLOCK=256)
    assert sorted(out.tolist()) == list(range(n)) and cursor.item() == n, out
    print("atomic slots ok")
