"""Order between programs made by a flag: message passing through a release and a waiting acquire.

Program Q stores data, then a release atomic on one element (the flag); program P waits on that flag
with acquire atomics in a loop (a spin: the same atomic executed again and again on the element) and
then reads the data. Once P's wait has seen Q's release, what Q did before the release happens before
what P does after (the PTX memory model's release/acquire pattern), so the store and the load do not
race. Used by races.py; see docs/findings.md for what is modelled.

The run's order of atomics on one element is its modification order (the interpreter, and programs run
by turns, execute them one at a time). Only acquires at a site that waited count: a program executing it
on the flag more than once in the launch. A single atomic that happened to come after another
program's is ordered by timing only, so it orders nothing here.
"""

from __future__ import annotations

import numpy as np

from ..model import LaunchTrace, Site
from ..model.elements import RANGE

_KEY = 1 << 40  # flag key = tensor index * _KEY + element


def _acquires(s: Site) -> bool:
    return s.kind == "atomic" and s.sem in ("", "acq_rel", "acquire") and s.scope != "cta"


def _releases(s: Site) -> bool:
    return s.kind == "atomic" and s.sem in ("", "acq_rel", "release") and s.scope != "cta"


class FlagOrder:
    """Which (program, row) happens before which, through flags, in one launch."""

    def __init__(self, L: LaunchTrace) -> None:
        self._rel: dict[tuple[int, int], np.ndarray] = {}  # (flag, program) -> its release rows, sorted
        self._acq: dict[tuple[int, int], np.ndarray] = {}  # (flag, program) -> its waiting acquire rows
        self._flags: list[int] = []
        atomic_sites = [i for i, s in enumerate(L.sites) if s.kind == "atomic" and s.arg >= 0]
        if not atomic_sites:
            return
        rows = np.flatnonzero(np.isin(L.ex_site, atomic_sites))
        rows = rows[(L.touched.kind[rows] == RANGE) & (L.touched.count[rows] == 1)]  # one element each
        if rows.size == 0:
            return
        site = L.ex_site[rows].astype(np.int64)
        prog = L.ex_program[rows].astype(np.int64)
        arg = np.array([L.sites[i].arg for i in range(len(L.sites))], dtype=np.int64)[site]
        flag = arg * _KEY + L.touched.lo[rows].astype(np.int64)
        rel = np.array([_releases(s) for s in L.sites], dtype=bool)[site]
        acq = np.array([_acquires(s) for s in L.sites], dtype=bool)[site]
        # a waiting acquire: its (site, flag, program) executed more than once
        key = np.stack([site, flag, prog], axis=1)
        _, inverse, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
        waited = acq & (counts[inverse.reshape(-1)] > 1)
        for sel, out in ((rel, self._rel), (waited, self._acq)):
            lists: dict[tuple[int, int], list[int]] = {}
            for f, p, r in zip(flag[sel].tolist(), prog[sel].tolist(), rows[sel].tolist()):
                lists.setdefault((f, p), []).append(r)
            for k, v in lists.items():
                out[k] = np.asarray(v, dtype=np.int64)  # rows ascend: np.flatnonzero's order
        self._flags = sorted({f for f, _ in self._acq})

    def any(self) -> bool:
        """Some program waited on a flag in this launch (else nothing is ordered here)."""
        return bool(self._acq)

    def before(self, q: int, row_q: int, p: int, row_p: int) -> bool:
        """Whether program q's execution at row_q happens before program p's at row_p: q releases a
        flag after row_q, and p's wait on that flag acquires it after that release, before row_p."""
        for f in self._flags:
            rel = self._rel.get((f, q))
            acq = self._acq.get((f, p))
            if rel is None or acq is None:
                continue
            i = int(np.searchsorted(rel, row_q, side="right"))
            j = int(np.searchsorted(acq, row_p, side="left")) - 1
            if i < rel.size and j >= 0 and rel[i] < acq[j]:
                return True
        return False
