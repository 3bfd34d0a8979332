"""Per-access totals of memory accesses, summed over launches; the extent and distinct elements from
touched.py (the one rule the table, hint, hover and viewer share)."""

from __future__ import annotations

import numpy as np

from ..model import AccessStats
from .groups import Group
from .touched import Touched


def access_totals(g: Group, u: Touched | None) -> AccessStats:
    """The totals of one access (a group of executions by (file, line, arg, kind)); `u`: what it touched."""
    file, line, arg, kind = g.key
    launches = programs = lanes = active = oob = nbytes = executions = 0
    for part in g.parts:
        L, rows = part.launch, part.rows
        if rows.size == 0:
            continue
        launches += 1
        executions += int(rows.size)
        programs += int(np.unique(L.ex_program[rows]).size)
        lanes += int(L.ex_lanes[rows].sum(dtype=np.int64))
        act = int(L.ex_active[rows].sum(dtype=np.int64))
        bad = int(L.ex_oob[rows].sum(dtype=np.int64))
        active += act
        oob += bad
        arg_index = L.sites[part.sites[0]].arg
        if arg_index >= 0:
            nbytes += (act - bad) * L.tensors[arg_index].itemsize
    s = g.first
    return AccessStats(
        file=file,
        line=line,
        col=s.col,
        end_line=s.end_line,
        end_col=s.end_col,
        arg=arg,
        kind=kind,
        op=s.op,
        launches=launches,
        programs=programs,
        lanes=lanes,
        active=active,
        unique=u.unique if u is not None else 0,
        oob=oob,
        bytes=nbytes,
        executions=executions,
        extent=u.extent(arg) if u is not None else "",
    )
