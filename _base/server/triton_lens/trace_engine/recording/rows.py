"""Row overruns: a line of a pointer block that starts in one row of a tensor and runs on into the next.

A row-wise kernel indexes its tensor as `row * stride + col`; when its block is wider than the row and the
mask does not stop `col` at the row's length, the lanes past the row read (or write) the next row: inside
the tensor, so nothing faults, but the data is wrong. Seen from one execution, a line (the pointer block's
last axis, +1 element per lane) that starts on the block grid of its row (its first element's column is a
multiple of the line's width: column 0, BLOCK, 2*BLOCK, ...) and reaches a later row is such a crossing.
A kernel that walks the tensor as flat memory (`pid * BLOCK + arange`, no row term) starts its lines at
any column; one line that does not start on the grid marks the execution -1, and analysis/rows.py then
reads the whole access as flat (no finding). Pure numpy, no triton.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .tensors import TensorView


def row_view(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, int] | None:
    """(row length, row stride) in elements when a tensor has rows to overrun: 2 or more dimensions,
    the last one contiguous and wider than one element, the rows not overlapping; else None."""
    if len(shape) < 2 or shape[-1] < 2 or shape[-2] < 2 or strides[-1] != 1 or strides[-2] < shape[-1]:
        return None
    return int(shape[-1]), int(strides[-2])


def row_crossings(view: TensorView, flat: np.ndarray, mask: np.ndarray | None, shape: tuple[int, ...]) -> int:
    """Active in-bounds lanes of this execution whose line started in an earlier row (0: none), or -1 when
    an active line does not start on its row's block grid. flat: the lanes' byte addresses."""
    rows = view.rows
    assert rows is not None
    length, stride = rows
    width = int(shape[-1]) if shape else 1
    if width < 2 or width % length == 0:  # a block of whole rows walks memory, not one row
        return 0
    e = view.elements(flat.view(np.int64) - view.base).reshape(-1, width)
    col = e[:, 0] % stride
    if not bool((col % width).any()) and bool((col + width <= stride).all()):
        return 0  # the usual tile, on the block grid and inside its row: the one check on the hot path
    active = np.ones(e.shape, dtype=bool) if mask is None else mask.reshape(-1, width)
    lines = active.any(axis=1) & (np.diff(e, axis=1) == 1).all(axis=1)
    if not lines.any():
        return 0
    e, active = e[lines], active[lines]
    first = np.where(active, e, np.iinfo(np.int64).max).min(axis=1)  # each line's first active element
    start = e[:, 0]
    if bool(((start % stride) % width != 0).any()):
        return -1
    crossed = active & (e // stride > (first // stride)[:, None])
    if not crossed.any():
        return 0
    inside, _ = view.classify(e[crossed] * view.itemsize)  # lanes past the end are out of bounds, not overruns
    return int(np.count_nonzero(inside))
