"""@jit helpers that load, store and add atomically, called after (and before) the kernel's own loads:
every access belongs to the line inside the helper, whichever load path ran first in the launch."""

import torch
import triton
import triton.language as tl


@triton.jit
def _masked_load(ptr, offs, n):
    return tl.load(ptr + offs, mask=offs < n + 4)  # 4 lanes past the end of y


@triton.jit
def _unmasked_load(ptr, offs):
    return tl.load(ptr + offs)  # 4 lanes past the end of y


@triton.jit
def _store(ptr, offs, v, n):
    tl.store(ptr + offs, v, mask=offs < n)


@triton.jit
def _descriptor_load(ptr, n):
    d = tl.make_tensor_descriptor(ptr, shape=[n], strides=[1], block_shape=[16])
    return d.load([0])


@triton.jit
def _atomic(ptr, offs, v, n):
    tl.atomic_add(ptr + offs, v, mask=offs < n)


@triton.jit
def unmasked_first(x_ptr, y_ptr, out_ptr, acc_ptr, n, DESCRIPTORS: tl.constexpr):
    offs = tl.arange(0, 16)
    a = tl.load(x_ptr + offs)
    b = _masked_load(y_ptr, offs, n)
    if DESCRIPTORS:  # tensor descriptors exist from triton 3.4
        b += _descriptor_load(x_ptr, n)
    _store(out_ptr, offs, a + b, n)
    _atomic(acc_ptr, offs, a, n)


@triton.jit
def masked_first(x_ptr, y_ptr, out_ptr, acc_ptr, n):
    offs = tl.arange(0, 16)
    a = tl.load(x_ptr + offs, mask=offs < n)
    b = _unmasked_load(y_ptr, offs)
    tl.store(out_ptr + offs, a + b, mask=offs < n)
    tl.atomic_add(acc_ptr + offs, a, mask=offs < n)


if __name__ == "__main__":
    descriptors = hasattr(triton, "set_allocator")
    if descriptors:
        triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8))
    x = torch.arange(16, dtype=torch.float32)
    y = torch.ones(12)
    out = torch.empty(12)
    acc = torch.zeros(12)
    unmasked_first[(1,)](x, y, out, acc, 12, DESCRIPTORS=descriptors)
    masked_first[(1,)](x, y, out, acc, 12)
