"""Facts about one source access for the editor's hover and inlay hints (records.AccessRecord.facts): its
totals (stats.access_totals), plus the details a reader wants when pointing at a load or store: touched elements as index
ranges per dimension (all programs, and the first few programs separately), a small text map of the
tensor with the touched cells marked, and where the tensor's parameter is named in the kernel's def.

Pure functions over the recorded arrays (model.RunResult + analysis.groups); nothing here knows LSP.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model import AccessStats, TensorInfo
from ..source.kernels import outline
from .groups import Group, program_label
from .index_text import format_ranges
from .text import format_program
from .touched import Touched

FIRST_PROGRAMS = 3


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
    """What a hover shows of one access (records.AccessRecord.facts): its totals (the record's, from stats.py) and what only the hover
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
    # The size check's runs of the kernel's launches (LaunchTrace.size_checked), when it found nothing at this
    # access: the sizes beyond the script's at which its lanes stayed in bounds.
    sizes_checked: list[dict[str, Any]] = field(default_factory=list)

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


def access_facts_of(g: Group, totals: AccessStats, reach: Touched | None, first_programs: int) -> AccessFacts:
    first = g.parts[0].launch
    arg = totals.arg
    tensor = reach.tensor if reach is not None else None
    f = AccessFacts(totals=totals, kernel=first.kernel, def_file=first.def_file, def_line=first.def_line, tensor=tensor)
    if reach is not None:  # the extent is the totals' own: one rule for the table, the hint and the hover
        f.extent = totals.extent
        f.map_rows, f.map_note = reach.text_map()
        f.map_launches, f.shapes_differ = reach.launches, reach.shapes_differ
    oob_parts: list[np.ndarray] = []
    for part in g.parts:
        L, rows = part.launch, part.rows
        if len(oob_parts) < 4 and rows.size and L.ex_oob[rows].any():
            bad_rows = rows[L.ex_oob[rows] > 0][:16]
            oob_parts.extend(L.oob.gather(bad_rows))
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


def sizes_checked(g: Group) -> list[dict[str, Any]]:
    """The size check's runs of the launches this access ran in, each size once."""
    seen, out = set(), []
    for part in g.parts:
        if not part.rows.size:
            continue
        for c in part.launch.size_checked:
            k = (c.get("tail"), c.get("largest"), repr(c.get("proved")))
            if k not in seen:
                seen.add(k)
                out.append(c)
    return out
