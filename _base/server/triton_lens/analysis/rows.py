"""Row overruns (`overrun`): a row-wise access whose lanes run past their row into the next one.

The recorder counts, per execution, the active in-bounds lanes of a line that started inside a row and
reached a later row (trace_engine/recording/rows.py), or -1 for a line that did not start on its row's block grid.
An access is row-wise when none of its executions is -1 and some execution starts in a row after the
first (a single program reading a 4x3 tensor as 8 flat elements, Triton-Puzzles' first demo, has no row
structure to overrun); its overrun is every execution with crossings.
Lanes past the end of the tensor are out of bounds (`oob`), not overruns: they are not counted here.
"""

from __future__ import annotations

import numpy as np

from ..model import Finding
from .groups import Group, Key, program_label
from .text import EXAMPLES, format_program, plural

_VERB = {"load": "read", "store": "write", "atomic": "update"}


def overrun_findings(groups: dict[Key, Group]) -> list[Finding]:
    out = []
    for (_, _, arg, kind), g in groups.items():
        lanes = 0
        progs: list[tuple[int, ...]] = []
        shape: tuple[int, ...] = ()
        flat = False
        for part in g.parts:
            L, rows = part.launch, part.rows
            if L.ex_overrun.size != L.ex_site.size:  # not recorded
                flat = True
                break
            cross = L.ex_overrun[rows]
            if (cross < 0).any():
                flat = True
                break
            bad = rows[cross > 0]
            if bad.size == 0:
                continue
            lanes += int(L.ex_overrun[bad].sum(dtype=np.int64))
            progs.extend(program_label(L, int(p)) for p in np.unique(L.ex_program[bad]))
            if not shape:
                shape = L.tensors[L.sites[part.sites[0]].arg].shape
        if flat or not lanes or not _starts_past_first_row(g):
            continue
        s = g.first
        dims = "×".join(str(d) for d in shape)
        who = ", ".join(format_program(p) for p in progs[:EXAMPLES]) + ("…" if len(progs) > EXAMPLES else "")
        noun = "mask" if s.unmasked else "mask's column bound"
        out.append(
            Finding.at(
                s,
                kind="overrun",
                severity="warning",
                arg=arg,
                access=kind,
                lanes=lanes,
                programs=len(progs),
                example_programs=progs[:EXAMPLES],
                message=(
                    f"{arg}: {plural(lanes, 'lane')} of {plural(len(progs), 'program')} ({who}) {_VERB[kind]} past the "
                    f"end of their row of {arg} ({dims}, rows of {shape[-1]}) into the next row: inside the tensor, "
                    f"so nothing faults, but each such program {'reads' if kind == 'load' else 'writes'} another "
                    f"row's data — {'add a mask' if s.unmasked else 'tighten the ' + noun} so the columns stop at "
                    f"the row length (e.g. mask=cols < n_cols)."
                ),
            )
        )
    return out


def _starts_past_first_row(g: Group) -> bool:
    """Whether some execution of the access touches no element of the tensor's first row: the sign of a
    kernel that walks rows. Early exit: a row-wise kernel's second program already shows it."""
    for part in g.parts:
        L = part.launch
        t = L.tensors[L.sites[part.sites[0]].arg]
        length = int(t.shape[-1]) if t.shape else 0
        for i in part.rows.tolist():
            e = L.touched.get(i)
            if length and e.size and int(e.min()) >= length:
                return True
    return False
