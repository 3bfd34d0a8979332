"""Address -> element mapping for one tensor argument: which lanes are inside the tensor and which
elements (flat row-major indices) they touch. Out of bounds means outside the elements its shape
and strides reach: past the end, before the start, in the padding of a sliced view, or in a
neighbouring tensor of the same storage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ...model import Site, TensorInfo
from .rows import row_view

if TYPE_CHECKING:  # the engine imports torch only where a script uses it
    import torch


def _shift_of(itemsize: int) -> int:
    return itemsize.bit_length() - 1 if itemsize & (itemsize - 1) == 0 else -1


class TensorView:
    __slots__ = (
        "info",
        "base",
        "itemsize",
        "shift",
        "numel",
        "contiguous",
        "nbytes",
        "_dims",
        "tensor",
        "host_end",
        "storage_lo",
        "storage_hi",
        "storage_known",
        "rows",
    )

    def __init__(
        self, info: TensorInfo, base: int, tensor: torch.Tensor | None = None, storage: tuple[int, int] | None = None
    ):
        self.info = info
        self.base = int(base)
        self.itemsize = int(info.itemsize)
        self.shift = _shift_of(self.itemsize)
        self.numel = info.numel
        self.tensor = tensor  # the host tensor, kept for the value snapshot at the end of the launch
        self.storage_lo, self.storage_hi = storage if storage else (self.base, self.base + self.numel * self.itemsize)
        # the span is the storage's own allocation (else the view's reach from its first element, which an
        # expanded or strided view can take past its storage)
        self.storage_known = storage is not None
        shape, strides = info.shape, info.strides
        expected, contiguous = 1, True
        for size, stride in zip(reversed(shape), reversed(strides)):
            if size != 1 and stride != expected:
                contiguous = False
            expected *= size
        self.contiguous = contiguous
        self.nbytes = self.numel * self.itemsize
        # Dimensions that move the address, largest stride first, with the row-major stride of each.
        row_major = [1] * len(shape)
        for k in range(len(shape) - 2, -1, -1):
            row_major[k] = row_major[k + 1] * shape[k + 1]
        dims = [(strides[k], shape[k], row_major[k]) for k in range(len(shape)) if shape[k] > 1 and strides[k] > 0]
        dims.sort(key=lambda t: -t[0])
        self._dims = dims
        self.rows = row_view(shape, strides)  # (row length, row stride) when there are rows to overrun, else None

    def elements(self, d: np.ndarray) -> np.ndarray:
        """Element offsets (floor) of byte offsets from the tensor's first element."""
        return d >> self.shift if self.shift >= 0 else d // self.itemsize

    def classify(self, d: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(in-bounds mask, flat indices of the in-bounds lanes) for byte offsets d (int64)."""
        if self.numel == 0:
            return np.zeros(d.shape, dtype=bool), np.empty(0, dtype=np.int64)
        e = self.elements(d)
        aligned = (d & (self.itemsize - 1)) == 0 if self.shift >= 0 else (d % self.itemsize) == 0
        if self.contiguous:
            inb = (e >= 0) & (e < self.numel) & aligned
            return inb, e[inb]
        ok = (e >= 0) & aligned
        rem = np.where(ok, e, 0)
        flat = np.zeros_like(rem)
        for stride, size, row_major in self._dims:
            i = rem // stride
            ok &= i < size
            rem = rem - i * stride
            flat += i * row_major
        ok &= rem == 0
        return ok, flat[ok]

    def in_storage(self, addr: int) -> bool:
        return self.storage_lo <= addr < self.storage_hi


def written_args(sites: list[Site], ex_site: np.ndarray, ex_active: np.ndarray) -> set[int] | None:
    """The arguments (TensorInfo.index) a launch's executions wrote: every store or atomic with an active
    lane, through the argument its site names (a lane out of its tensor is masked off, never written).
    None when one wrote through a pointer no argument holds: it may have written anything."""
    writes = np.array([s.kind != "load" for s in sites] + [False], dtype=bool)  # (the last: no site)
    args = np.array([s.arg for s in sites] + [-1], dtype=np.int64)
    rows = writes[ex_site] & (ex_active > 0)
    found = set(np.unique(args[ex_site[rows]]).tolist())
    return None if -1 in found else found


def views_not_written(views: list[TensorView], written: set[int] | None) -> set[int]:
    """The views (TensorInfo.index) whose storage span meets no written view's: their values are the same
    after the launch as before it. Views of one storage share its fate (a store to one may change another)."""
    if written is None:
        return set()
    spans = [(v.storage_lo, v.storage_hi) for v in views if v.info.index in written]
    return {v.info.index for v in views if all(v.storage_hi <= lo or hi <= v.storage_lo for lo, hi in spans)}
