"""Kernel arguments that are pointers without being torch tensors, as a compiled launch takes them.

A compiled kernel takes any object with `data_ptr()` and a `dtype` as a pointer (FlagGems's
StridedBuffer: a tensor's memory reinterpreted with another shape, strides or offset). The interpreter
copies each pointer argument through torch's storage API (`new_empty`, `untyped_storage`), which such an
object lacks ("'StridedBuffer' object has no attribute 'new_empty'"). `as_tensor(arg)` gives the launch
a tensor over the same memory instead, taken from the tensor the object wraps: the same data pointer,
shape and strides, so the kernel, the copy back and the recorder all see what the GPU would.
"""

from __future__ import annotations

from typing import Any

import torch


def _wrapped_tensors(arg: Any) -> list[torch.Tensor]:
    try:
        attrs = vars(arg).values()
    except TypeError:  # __slots__ and no __dict__
        attrs = (getattr(arg, n, None) for n in getattr(type(arg), "__slots__", ()))
    return [v for v in attrs if isinstance(v, torch.Tensor)]


def as_tensor(arg: Any) -> Any:
    """A torch tensor over the memory of a pointer-like argument; any other argument as it is (also one
    whose memory is no tensor it holds, or whose view torch cannot express: negative strides)."""
    if isinstance(arg, torch.Tensor) or not isinstance(getattr(arg, "dtype", None), torch.dtype):
        return arg
    data_ptr = getattr(arg, "data_ptr", None)
    if not callable(data_ptr):
        return arg
    try:
        ptr = int(data_ptr())
    except Exception:  # noqa: BLE001 - the object's own method
        return arg
    itemsize = arg.dtype.itemsize
    for base in _wrapped_tensors(arg):
        storage = base.untyped_storage()
        start, nbytes = storage.data_ptr(), storage.nbytes()
        offset, rest = divmod(ptr - start, itemsize)
        if rest or not 0 <= ptr - start <= nbytes:
            continue
        shape = tuple(int(d) for d in getattr(arg, "shape", ()))
        stride = getattr(arg, "stride", None)
        strides = tuple(int(s) for s in stride()) if callable(stride) else None
        if strides is None or len(strides) != len(shape):
            shape, strides = ((nbytes // itemsize) - offset,), (1,)
        if any(s < 0 for s in strides):
            return arg
        try:
            return torch.empty(0, dtype=arg.dtype, device=base.device).set_(storage, offset, shape, strides)
        except RuntimeError:
            return arg
    return arg
