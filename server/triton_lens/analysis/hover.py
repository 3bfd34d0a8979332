"""Facts about one source access for the editor's hover and inlay hints: what `stats.access_stats`
sums, plus the details a reader wants when pointing at a load or store: touched elements as index
ranges per dimension (all programs, and the first few programs separately), a small text map of the
tensor with the touched cells marked, and where the tensor's parameter is named in the kernel's def.

Pure functions over the recorded arrays (model.RunResult + analysis.groups); nothing here knows LSP.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..model import AccessStats, TensorInfo
from ..trace_engine.kernels import outline
from .groups import Group, Key, program_label
from .text import format_program

if TYPE_CHECKING:
    from . import Analysis

FIRST_PROGRAMS = 3
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
    per_row = np.add.reduceat(m2, cedge[:-1], axis=1, dtype=np.int64)  # (n_rows, cols_c)
    hit = np.add.reduceat(per_row, redge[:-1], axis=0, dtype=np.int64)
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


# ---------------------------------------------------------------------------------------------
# Where a parameter is named


def param_location(lines: list[str], from_line: int, param: str) -> tuple[int, int, int] | None:
    """(line, col, end_col) of `param` in the signature of the kernel whose decorators or `def` sit at
    1-based `from_line`, from the kernel finder. A tuple member "t[1]" or descriptor field "desc.base" is
    found by its parameter name. None when not found."""
    for k in outline("\n".join(lines)):
        if k.first_line <= from_line <= k.line:
            p = k.param(param)
            return None if p is None else (p.line, p.col, p.end_col)
    return None


# ---------------------------------------------------------------------------------------------
# Facts per access


@dataclass
class ProgramFacts:
    label: str  # "(3,)" or "(1, 2)"
    launch: int
    executions: int
    lanes: int
    active: int
    oob: int
    extent: str


@dataclass
class AccessFacts:
    """What a hover shows of one access: its totals (computed once, in stats.py) and what only the hover
    needs: the union extent and text map over launches, the first programs one by one, example offsets."""

    totals: AccessStats
    kernel: str
    def_file: str
    def_line: int  # the kernel's first line (decorator or def)
    tensor: TensorInfo | None  # as the first launch saw it
    extent: str = ""  # all programs, all launches of the first launch's tensor shape
    first_programs: list[ProgramFacts] = field(default_factory=list)
    map_rows: list[str] = field(default_factory=list)
    map_note: str = ""
    map_launches: int = 0  # launches folded into the map (those whose tensor had the first one's shape)
    oob_offsets: list[int] = field(default_factory=list)  # a few example element offsets
    shapes_differ: bool = False  # launches saw tensors of different shapes

    key = property(lambda self: (self.totals.file, self.totals.line, self.totals.arg, self.totals.kind))
    file = property(lambda self: self.totals.file)
    line = property(lambda self: self.totals.line)
    arg = property(lambda self: self.totals.arg)
    kind = property(lambda self: self.totals.kind)
    op = property(lambda self: self.totals.op)
    launches = property(lambda self: self.totals.launches)
    programs = property(lambda self: self.totals.programs)
    executions = property(lambda self: self.totals.executions)
    lanes = property(lambda self: self.totals.lanes)
    active = property(lambda self: self.totals.active)
    oob = property(lambda self: self.totals.oob)
    unique = property(lambda self: self.totals.unique)
    bytes = property(lambda self: self.totals.bytes)


def _facts(g: Group, totals: AccessStats, first_programs: int) -> AccessFacts:
    first = g.parts[0].launch
    arg = totals.arg
    arg_index = first.sites[g.parts[0].sites[0]].arg
    tensor = first.tensors[arg_index] if arg_index >= 0 else None
    f = AccessFacts(totals=totals, kernel=first.kernel, def_file=first.def_file, def_line=first.def_line, tensor=tensor)
    use_mask = tensor is not None and tensor.numel <= MASK_LIMIT
    union_mask = np.zeros(tensor.numel, dtype=bool) if tensor is not None and use_mask else None
    union_parts: list[np.ndarray] = []
    oob_parts: list[np.ndarray] = []
    for part in g.parts:
        L, rows = part.launch, part.rows
        if rows.size == 0:
            continue
        a = L.sites[part.sites[0]].arg
        t = L.tensors[a] if a >= 0 else None
        same = tensor is not None and t is not None and tuple(t.shape) == tuple(tensor.shape)
        if same and union_mask is not None and t is not None:
            union_mask |= L.touched.cover(rows, t.numel)
        elif same:
            union_parts.append(L.touched.union(rows))
        if same:
            f.map_launches += 1
        elif tensor is not None and t is not None:
            f.shapes_differ = True
        if len(oob_parts) < 4 and L.ex_oob[rows].any():
            bad_rows = rows[L.ex_oob[rows] > 0][:16]
            oob_parts.extend(L.oob.gather(bad_rows))
    if tensor is not None and union_mask is not None:  # union_mask: a tensor, and use_mask
        f.extent = format_mask(arg, tensor.shape, union_mask)
        f.map_rows, f.map_note = text_map_mask(tensor.shape, union_mask)
    elif tensor is not None:
        allt = np.unique(np.concatenate(union_parts)) if union_parts else np.empty(0, np.int64)
        f.extent = format_ranges(arg, tensor.shape, allt)
        f.map_rows, f.map_note = text_map(tensor.shape, allt)
    if oob_parts:
        f.oob_offsets = [int(v) for v in np.unique(np.concatenate(oob_parts))[:4]]
    # The first few programs of the first launch that ran this access, one by one.
    ran = next((p for p in g.parts if p.rows.size), None)
    if ran is not None:
        L, rows = ran.launch, ran.rows
        progs = L.ex_program[rows]
        a = L.sites[ran.sites[0]].arg
        t = L.tensors[a] if a >= 0 else None
        for p in np.unique(progs)[:first_programs]:
            prow = rows[progs == p]
            touched = L.touched.union(prow)
            f.first_programs.append(
                ProgramFacts(
                    label=format_program(program_label(L, int(p))),
                    launch=L.index,
                    executions=int(prow.size),
                    lanes=int(L.ex_lanes[prow].sum(dtype=np.int64)),
                    active=int(L.ex_active[prow].sum(dtype=np.int64)),
                    oob=int(L.ex_oob[prow].sum(dtype=np.int64)),
                    extent=format_ranges(arg, t.shape, touched) if t is not None else "",
                )
            )
    return f


def access_facts(analysis: Analysis, first_programs: int = FIRST_PROGRAMS) -> dict[Key, AccessFacts]:
    """Facts for every (file, line, arg, kind) access of an analysed run (analysis.Analysis): its
    totals are the analysis' own (stats.access_stats), only the hover's extras are computed here."""
    totals = {(a.file, a.line, a.arg, a.kind): a for a in analysis.accesses}
    out = {}
    for key, g in analysis.groups.items():
        if key in totals and any(p.rows.size for p in g.parts):
            out[key] = _facts(g, totals[key], first_programs)
    return out
