"""Critical sections: which executions of a launch ran while their program held a spin lock.

A lock is one element of a tensor argument that programs take with tl.atomic_cas (or tl.atomic_xchg
on a tensor used only that way) and give back with tl.atomic_xchg, tl.atomic_store or a plain
tl.store to the same element. A program's rows are in its own order (the interpreter runs programs
one after another; programs that wait on each other run by turns and interleave their rows,
trace_engine/interpreter/cooperative.py): the program's rows between its acquire (the last attempt, the one that
took the lock) and its release are its critical section. See docs/findings.md for what the memory model
says and what is modelled.
"""

from __future__ import annotations

import numpy as np

from ..model import LaunchTrace, Site
from ..model.elements import RANGE

NO_LOCK = -1
_KEY = 1 << 40  # lock key = tensor index * _KEY + element


def _acquires(s: Site) -> bool:
    """An atomic whose memory order makes what follows it visible only after it (acquire), device-wide."""
    return s.sem in ("", "acq_rel", "acquire") and s.scope != "cta"


def _releases(s: Site) -> bool:
    if s.kind == "store":
        return True  # a plain store back (see docs/findings.md: not a release in the PTX model)
    return s.sem in ("", "acq_rel", "release") and s.scope != "cta"


def lock_sections(L: LaunchTrace) -> tuple[np.ndarray, np.ndarray]:
    """(lock key per execution or NO_LOCK, True for the lock operations themselves)."""
    n = L.ex_site.size
    held = np.full(n, NO_LOCK, dtype=np.int64)
    sync = np.zeros(n, dtype=bool)
    by_tensor: dict[int, list[int]] = {}
    for i, s in enumerate(L.sites):
        if s.arg >= 0:
            by_tensor.setdefault(s.arg, []).append(i)
    for t, site_ids in by_tensor.items():
        sites = [L.sites[i] for i in site_ids]
        has_cas = any(s.op == "tl.atomic_cas" for s in sites)
        xchg_only = all(s.op == "tl.atomic_xchg" or s.kind == "store" for s in sites) and any(
            s.op == "tl.atomic_xchg" for s in sites
        )
        if not (has_cas or xchg_only):
            continue
        take = [
            i for i in site_ids if L.sites[i].op == "tl.atomic_cas" or (xchg_only and L.sites[i].op == "tl.atomic_xchg")
        ]
        give = [
            i for i in site_ids if L.sites[i].op in ("tl.atomic_xchg", "tl.atomic_store") or L.sites[i].kind == "store"
        ]
        rows = np.flatnonzero(np.isin(L.ex_site, take + give))
        # Only scalar lock operations (one element each) take part; a vector of CAS is no lock.
        rows = rows[(L.touched.kind[rows] == RANGE) & (L.touched.count[rows] == 1)]
        if rows.size == 0:
            continue
        sync[rows] = True  # lock operations are synchronisation, not data
        _walk(L, t, rows, set(take), set(give), held)
    return held, sync


def _walk(L: LaunchTrace, t: int, rows: np.ndarray, take: set[int], give: set[int], held: np.ndarray) -> None:
    state: dict[tuple[int, int], int] = {}  # (program, element) -> row of the acquire
    for r, site, prog, elem in zip(
        rows.tolist(), L.ex_site[rows].tolist(), L.ex_program[rows].tolist(), L.touched.lo[rows].tolist()
    ):
        s = L.sites[site]
        k = (prog, elem)
        start = state.get(k)
        if start is not None and site in give and (s.op != "tl.atomic_cas"):
            del state[k]
            if _acquires(L.sites[int(L.ex_site[start])]) and _releases(s):
                # the program's own rows in between (programs run by turns interleave theirs);
                # nested sections keep the innermost lock
                between = np.arange(start + 1, r)
                between = between[L.ex_program[between] == prog]
                free = between[held[between] == NO_LOCK]
                held[free] = t * _KEY + elem
        elif site in take:
            state[k] = r  # a retry of the spin loop starts the section again
