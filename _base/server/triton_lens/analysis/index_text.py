"""How a set of a tensor's elements reads as text: index ranges per dimension (`x_ptr[0:48, 0:72]`) and
a small text map of the tensor with the touched cells marked. Pure functions of a shape and a set of
flat row-major indices (or a bool mask over the tensor); they never allocate one entry per element."""

from __future__ import annotations

import numpy as np

MAP_COLS = 32
MAP_ROWS = 12
# Text map cells: all, at least half, some, none of the cell's elements touched.
FULL, MOST, SOME, NONE = "█", "▓", "░", "·"


# ---------------------------------------------------------------------------------------------
# Index ranges


def _dim_range(values: np.ndarray, distinct: bool = False) -> str:
    """One dimension's distinct indices as a half-open range: "0:64", "7", "0:64:2", or "3 of 0:64".
    distinct: the values are sorted and distinct already (no sort of millions of indices)."""
    u = values if distinct else np.unique(values)
    lo, hi = int(u[0]), int(u[-1]) + 1
    if u.size == 1:
        return f"{lo}"
    if u.size == hi - lo:
        return f"{lo}:{hi}"
    d = np.diff(u)
    if bool((d == d[0]).all()):
        return f"{lo}:{hi}:{int(d[0])}"
    return f"{u.size} of {lo}:{hi}"


def dim_ranges(shape: tuple[int, ...], flat: np.ndarray) -> list[str]:
    """Per dimension, the indices that flat row-major element indices `flat` reach."""
    if flat.size == 0 or len(shape) == 0:
        return []
    idx = np.unravel_index(np.asarray(flat, dtype=np.int64), tuple(int(s) for s in shape))
    return [_dim_range(d) for d in idx]


def format_ranges(name: str, shape: tuple[int, ...], flat: np.ndarray) -> str:
    """`x_ptr[0:1000]`, `a_ptr[0:48, 0:72]`, `out_ptr[7]`; `x_ptr[]` when nothing was touched. When the
    elements do not fill the box the ranges describe, the count follows: `t[0:64, 0:64] (100 elements)`."""
    if flat.size == 0:
        return f"{name}[]"
    if len(shape) == 0:
        return f"{name}"
    numel = int(np.prod(shape, dtype=np.int64))
    if numel <= min(MASK_LIMIT, 64 * flat.size) and int(flat.min()) >= 0 and int(flat.max()) < numel:
        # A mask no bigger than a few times the indices: marking them is one pass, where the distinct
        # indices (the count and every dimension's) are a hash of all of them each (1 ms per 65 k).
        mask = np.zeros(numel, dtype=bool)
        mask[flat] = True
        return format_mask(name, shape, mask)
    parts = dim_ranges(shape, flat)
    return f"{name}[{', '.join(parts)}]" + _count_suffix(parts, int(np.unique(flat).size))


# ---------------------------------------------------------------------------------------------
# Text map


def _bins(n: int, cells: int) -> np.ndarray:
    """Bin edges splitting [0, n) into `cells` near-equal parts."""
    return (np.arange(cells + 1, dtype=np.int64) * n) // cells


def _fold(shape: tuple[int, ...]) -> tuple[int, int]:
    """(rows, columns) of the tensor with its leading dimensions folded into rows."""
    shape = tuple(int(s) for s in shape) or (1,)
    if len(shape) == 1:
        return 1, shape[0]
    n_rows = 1
    for s in shape[:-1]:
        n_rows *= s
    return n_rows, shape[-1]


def _render(shape: tuple[int, ...], hit: np.ndarray, redge: np.ndarray, cedge: np.ndarray) -> tuple[list[str], str]:
    n_rows, n_cols = _fold(shape)
    rows_c, cols_c = hit.shape
    cap = np.outer(np.diff(redge), np.diff(cedge))  # elements per cell
    frac = hit / cap
    sym = np.full(frac.shape, NONE, dtype="<U1")
    sym[frac > 0] = SOME
    sym[frac >= 0.5] = MOST
    sym[hit == cap] = FULL
    lines = ["".join(row) for row in sym]
    per_r = n_rows / rows_c
    per_c = n_cols / cols_c
    if per_r == 1 and per_c == 1:
        return lines, "one cell per element"

    def fmt(v: float) -> str:
        return f"{v:.0f}" if v == int(v) else f"~{v:.1f}"

    if len(shape) <= 1:
        return lines, f"one cell per {fmt(per_c)} elements"
    rows_word = "row" if len(shape) == 2 else "row of the last dimension"
    return lines, f"one cell per {fmt(per_r)} {rows_word}{'s' if per_r != 1 else ''} × {fmt(per_c)} columns"


def _grid(shape: tuple[int, ...], max_rows: int, max_cols: int) -> tuple[int, int, np.ndarray, np.ndarray]:
    n_rows, n_cols = _fold(shape)
    rows_c, cols_c = min(n_rows, max_rows), min(n_cols, max_cols)
    return n_rows, n_cols, _bins(n_rows, rows_c), _bins(n_cols, cols_c)


def text_map(
    shape: tuple[int, ...], flat: np.ndarray, max_cols: int = MAP_COLS, max_rows: int = MAP_ROWS
) -> tuple[list[str], str]:
    """A small picture of the tensor: one character per cell, each cell a block of elements
    (leading dimensions folded into rows), marked by how many of them `flat` touched.

    Returns (rows of text, a note saying what one cell is). Never allocates one entry per element.
    """
    n_rows, n_cols, redge, cedge = _grid(shape, max_rows, max_cols)
    if n_rows == 0 or n_cols == 0:
        return [], "empty tensor"
    rows_c, cols_c = redge.size - 1, cedge.size - 1
    flat = np.unique(np.asarray(flat, dtype=np.int64))
    flat = flat[(flat >= 0) & (flat < n_rows * n_cols)]
    r, c = flat // n_cols, flat % n_cols
    cr = np.searchsorted(redge, r, side="right") - 1
    cc = np.searchsorted(cedge, c, side="right") - 1
    hit = np.bincount(cr * cols_c + cc, minlength=rows_c * cols_c).reshape(rows_c, cols_c)
    return _render(shape, hit, redge, cedge)


def text_map_mask(
    shape: tuple[int, ...], mask: np.ndarray, max_cols: int = MAP_COLS, max_rows: int = MAP_ROWS
) -> tuple[list[str], str]:
    """`text_map` of the elements set in a bool mask over the whole tensor (row-major)."""
    n_rows, n_cols, redge, cedge = _grid(shape, max_rows, max_cols)
    if n_rows == 0 or n_cols == 0:
        return [], "empty tensor"
    m2 = mask.reshape(n_rows, n_cols)
    bands = list(zip(redge[:-1].tolist(), redge[1:].tolist()))
    cells = list(zip(cedge[:-1].tolist(), cedge[1:].tolist()))
    # A reduceat over each row's columns walked every element through an int64 sum: 20-45 ms for 9.4 M
    # elements. Wide cells: a count per cell (a vectorised pass over its rows), 1-3 ms. Narrow ones (a
    # few columns a cell: a strided count is slow there): each band's rows added into one row first.
    if n_cols >= 64 * len(cells):
        hit = np.array([[np.count_nonzero(m2[r0:r1, c0:c1]) for c0, c1 in cells] for r0, r1 in bands], dtype=np.int64)
    else:
        u = m2.view(np.uint8)
        hit = np.stack(
            [np.add.reduceat(np.add.reduce(u[r0:r1], axis=0, dtype=np.int64), cedge[:-1]) for r0, r1 in bands]
        )
    return _render(shape, hit, redge, cedge)


# ---------------------------------------------------------------------------------------------
# Touched elements as a bool mask (large tensors: no sort of millions of indices)

MASK_LIMIT = 1 << 26  # elements (64 MB of mask); above this the sets are merged by sorting their indices


def mask_ranges(shape: tuple[int, ...], mask: np.ndarray) -> list[str]:
    """`dim_ranges` of the elements set in a bool mask."""
    shape = tuple(int(s) for s in shape)
    if not shape or not mask.any():
        return []
    arr = mask.reshape(shape)
    out = []
    for d in range(len(shape)):
        other = tuple(i for i in range(len(shape)) if i != d)
        present = np.asarray(arr.any(axis=other)) if other else arr
        out.append(_present_range(present))
    return out


def _present_range(present: np.ndarray) -> str:
    """`_dim_range` of the true positions of a 1-D bool array; a solid stretch costs no index array."""
    n = int(np.count_nonzero(present))
    lo = int(np.argmax(present))
    hi = present.size - int(np.argmax(present[::-1]))
    if n == hi - lo:
        return f"{lo}" if n == 1 else f"{lo}:{hi}"
    return _dim_range(np.flatnonzero(present), distinct=True)


def _box(parts: list[str]) -> int:
    box = 1
    for p in parts:
        if " of " in p:
            return -1
        if ":" in p:
            a = [int(v) for v in p.split(":")]
            box *= len(range(a[0], a[1], a[2] if len(a) == 3 else 1))
    return box


def _count_suffix(parts: list[str], n: int) -> str:
    """ " (100 elements)" when the ranges describe a box the elements do not fill (and say so nowhere else)."""
    box = _box(parts)
    if box == n or (box == -1 and len(parts) == 1):  # "224 of 10:996" already gives the count
        return ""
    return f" ({n} element{'s' if n != 1 else ''})"


def format_mask(name: str, shape: tuple[int, ...], mask: np.ndarray) -> str:
    """`format_ranges` of the elements set in a bool mask."""
    n = int(np.count_nonzero(mask))
    if n == 0:
        return f"{name}[]"
    if len(shape) == 0:
        return f"{name}"
    parts = mask_ranges(shape, mask)
    return f"{name}[{', '.join(parts)}]" + _count_suffix(parts, n)
