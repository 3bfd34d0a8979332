"""Races between programs of one launch, respecting locks, atomics and identical stores.

Two touches of one element by different programs conflict when at least one writes it and they are
not both atomics: plain store vs anything, atomic vs plain load or plain store. They are ordered
(no race) when both ran inside critical sections of the same lock (see locks.py). Plain stores of
identical values to an element by every program that stores it cannot change the result; nor can
stores to an element no program reads while another writes it, when every program leaves it the same
values (it ends with some program's last store to it; what they stored before is overwritten by their
own program): that is reported as information, not as a race.
See docs/findings.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..model import Finding, LaunchTrace, Related, Site
from ..model.elements import runs_to_indices
from .flags import FlagOrder
from .groups import Key, program_label
from .locks import NO_LOCK, lock_sections
from .text import EXAMPLES, format_program, plural

LOAD, STORE, ATOMIC = 0, 1, 2
_LAST = 3  # in classify's counts only: a store that is its program's last store to the element
_SAMPLES = 32  # racing touches per line whose other sides are looked up (for the message and related lines)
_FLAG_CHECKS = 4096  # racing touches looked at pair by pair for an order through a flag; beyond: kept
_NOUN = {"load": "load", "store": "store", "atomic": "atomic"}
_CLASS = {"load": LOAD, "store": STORE, "atomic": ATOMIC}


@dataclass
class _Touches:
    """Every touch of an element that more than one program touched: one entry per (execution, element)."""

    E: np.ndarray  # element (flat index of the tensor)
    R: np.ndarray  # execution row
    P: np.ndarray  # program
    C: np.ndarray  # LOAD | STORE | ATOMIC
    K: np.ndarray  # lock held, or NO_LOCK
    H: np.ndarray  # a store's fingerprint of (elements, values), 0 when unknown
    # Set by classify, per touch:
    V: np.ndarray | None = None  # every program storing the element stores the same values
    last: np.ndarray | None = None  # a store that is its program's last store to the element
    read: np.ndarray | None = None  # a program loads the element and another program stores it
    final: np.ndarray | None = None  # every program's last store to the element stores the same values


def _contended(L: LaunchTrace, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(element, row) of every touch of elements more than one program touched.

    Works on runs first: runs sorted by start fall into clusters of chained overlaps; only clusters
    that hold two programs are expanded to elements, so disjoint tiles (the common case) cost
    nothing per element.
    """
    r_row, start, length = L.touched.runs(rows)
    if r_row.size < 2:
        return None
    prog = L.ex_program[r_row].astype(np.int64)
    order = np.argsort(start, kind="stable")
    r_row, start, length, prog = r_row[order], start[order], length[order], prog[order]
    reach = np.maximum.accumulate(start + length)
    new_cluster = np.concatenate(([True], start[1:] >= reach[:-1]))
    cluster = np.cumsum(new_cluster) - 1
    heads = np.flatnonzero(new_cluster)
    shared = (np.minimum.reduceat(prog, heads) != np.maximum.reduceat(prog, heads))[cluster]
    if not shared.any():
        return None
    r_row, start, length = r_row[shared], start[shared], length[shared]
    return runs_to_indices(start, length), np.repeat(r_row, length)


def _group_ids(*cols: np.ndarray) -> tuple[np.ndarray, int]:
    """Id of each entry's tuple of column values (0..G-1), and G."""
    order = np.lexsort(cols[::-1])
    new = np.zeros(order.size, dtype=bool)
    new[0] = True
    for c in cols:
        cs = c[order]
        new[1:] |= cs[1:] != cs[:-1]
    gid_sorted = np.cumsum(new) - 1
    gid = np.empty(order.size, dtype=np.int64)
    gid[order] = gid_sorted
    return gid, int(gid_sorted[-1]) + 1


def _counts(gid: np.ndarray, g: int, C: np.ndarray, weight: np.ndarray | None = None, n: int = 3) -> np.ndarray:
    """[group, class] -> number of touches (classes 0..n-1)."""
    w = None if weight is None else weight.astype(np.float64)
    return np.bincount(gid * n + C, weights=w, minlength=n * g).reshape(g, n).astype(np.int64)


def classify(T: _Touches) -> tuple[np.ndarray, np.ndarray]:
    """(racing, identical) per touch.

    racing: some touch of the element by another program conflicts with it and no common lock orders
    them. Two plain stores of different values conflict, except on an element no program reads while
    another program stores it: there only the programs' last stores count (the element ends with one
    of them; an earlier store is always overwritten by its own program), and only when they differ.
    identical: a store that conflicts only with other programs' stores, which store the same values
    or leave the same values behind.
    Counts by inclusion-exclusion: touches of the element, minus the same program's, minus the same
    lock's, plus the same program's under the same lock.
    """
    gE, nE = _group_ids(T.E)
    gEP, nEP = _group_ids(T.E, T.P)
    gEK, nEK = _group_ids(T.E, T.K)
    gEPK, nEPK = _group_ids(T.E, T.P, T.K)

    # Each program's last store to each element (rows of one program are in its order).
    is_store = T.C == STORE
    last_row = np.full(nEP, -1, dtype=np.int64)
    np.maximum.at(last_row, gEP, np.where(is_store, T.R, -1))
    last = is_store & (T.R == last_row[gEP])
    T.last = last
    C4 = np.where(last, _LAST, T.C)

    by_others = _counts(gE, nE, C4, n=4)[gE] - _counts(gEP, nEP, C4, n=4)[gEP]  # [touch, class]
    locked = (T.K != NO_LOCK)[:, None]
    other = by_others - locked * (
        _counts(gEK, nEK, C4, n=4)[gEK] - _counts(gEPK, nEPK, C4, n=4)[gEPK]
    )  # [touch, class], less what a common lock orders

    # Elements a program loads while another program stores them (ordered by a lock or not: the
    # value read can still depend on which store came first).
    read_el = np.zeros(nE, dtype=bool)
    np.logical_or.at(read_el, gE, (T.C == LOAD) & ((by_others[:, STORE] > 0) | (by_others[:, _LAST] > 0)))
    read = read_el[gE]
    T.read = read

    def same(sel: np.ndarray) -> np.ndarray:
        """Per touch: the selected stores of its element all have one known fingerprint."""
        big, small = np.iinfo(np.int64).max, np.iinfo(np.int64).min
        hmin = np.full(nE, big, dtype=np.int64)
        np.minimum.at(hmin, gE, np.where(sel, T.H, big))
        hmax = np.full(nE, small, dtype=np.int64)
        np.maximum.at(hmax, gE, np.where(sel, T.H, small))
        unknown = np.zeros(nE, dtype=bool)
        np.logical_or.at(unknown, gE, sel & (T.H == 0))
        agree = (hmin == hmax) & ~unknown
        return np.asarray(agree[gE], dtype=bool)

    same_final = same(last)  # every program leaves the same values
    same_all = same(is_store)  # every store stores the same values
    T.V, T.final = same_all, same_final

    vs_load, vs_atomic, vs_last = other[:, LOAD] > 0, other[:, ATOMIC] > 0, other[:, _LAST] > 0
    vs_store = vs_last | (other[:, STORE] > 0)
    racing = np.where(
        T.C == LOAD,
        vs_store | vs_atomic,
        np.where(
            T.C == ATOMIC,
            vs_load | vs_store,
            vs_load | vs_atomic | np.where(read, vs_store & ~same_all, last & vs_last & ~same_final),
        ),
    )
    identical = is_store & ~racing & vs_store & (same_all | (last & same_final & ~read))
    return racing, identical


@dataclass
class _Acc:
    site: Site
    programs: set[tuple[int, int]] = field(default_factory=set)  # (launch, linear program id)
    examples_p: list[tuple[int, ...]] = field(default_factory=list)
    elements: int = 0
    launches: set[int] = field(default_factory=set)
    examples_e: list[int] = field(default_factory=list)
    # (element, this program, other site, other program, launch)
    pair: tuple[int, tuple[int, ...], Site, tuple[int, ...], int] | None = None
    others: dict[tuple[str, int, str], Site] = field(default_factory=dict)  # (file, line, kind) -> site


def race_findings(launches: list[LaunchTrace]) -> list[Finding]:
    races: dict[Key, _Acc] = {}
    same: dict[Key, _Acc] = {}
    for L in launches:
        sections: tuple[np.ndarray, np.ndarray] | None = None  # lock_sections(L), once it is needed
        for t in L.tensors:
            site_ids = [i for i, s in enumerate(L.sites) if s.arg == t.index]
            kinds = {L.sites[i].kind for i in site_ids}
            if "store" not in kinds and not ({"atomic", "load"} <= kinds):
                continue  # loads and atomics alone never conflict
            rows = np.flatnonzero(np.isin(L.ex_site, site_ids))
            if sections is None:
                sections = lock_sections(L)
            held, sync = sections
            rows = rows[~sync[rows]]
            if rows.size < 2:
                continue
            got = _contended(L, rows)
            if got is None:
                continue
            E, R = got
            site_class = np.array([_CLASS[s.kind] for s in L.sites], dtype=np.int64)
            H = L.ex_vhash[R] if L.ex_vhash.size == L.ex_site.size else np.zeros(R.size, dtype=np.int64)
            T = _Touches(E=E, R=R, P=L.ex_program[R].astype(np.int64), C=site_class[L.ex_site[R]], K=held[R], H=H)
            racing, identical = classify(T)
            flags = FlagOrder(L)
            order = flags if flags.any() else None
            if order is not None:
                racing = _unordered(L, T, racing, order)
            _collect(L, t.name, T, racing, races, want_pair=True, order=order)
            _collect(L, t.name, T, identical & ~_racing_elements(T, racing), same, want_pair=False)
    out = [_race_finding(k, a) for k, a in races.items()]
    out += [_identical_finding(k, a) for k, a in same.items() if k not in races]
    return out


def _unordered(L: LaunchTrace, T: _Touches, racing: np.ndarray, order: FlagOrder) -> np.ndarray:
    """racing, less the touches whose every conflicting touch a flag orders (flags.py)."""
    idx = np.flatnonzero(racing)
    if idx.size > _FLAG_CHECKS:
        return racing
    out: np.ndarray = np.array(racing, dtype=bool)
    for i in idx.tolist():
        if not _partners(L, T, i, order, first=True):
            out[i] = False
    return out


def _racing_elements(T: _Touches, racing: np.ndarray) -> np.ndarray:
    bad = np.unique(T.E[racing])
    return np.isin(T.E, bad)


def _collect(
    L: LaunchTrace,
    arg: str,
    T: _Touches,
    sel: np.ndarray,
    acc: dict[Key, _Acc],
    want_pair: bool,
    order: FlagOrder | None = None,
) -> None:
    if not sel.any():
        return
    S = L.ex_site[T.R]
    taking = sorted(set(S[sel].tolist()))
    for i in taking:
        s = L.sites[i]
        key = (s.file, s.line, arg, s.kind)
        a = acc.setdefault(key, _Acc(site=s))
        mine = sel & (S == i)
        progs = np.unique(T.P[mine])
        a.programs.update((L.index, int(p)) for p in progs)
        a.examples_p.extend(program_label(L, int(p)) for p in progs[: max(0, EXAMPLES - len(a.examples_p))])
        a.launches.add(L.index)
        els = np.unique(T.E[mine])
        a.elements += int(els.size)
        a.examples_e.extend(int(e) for e in els[: max(0, EXAMPLES - len(a.examples_e))])
        if want_pair:
            picks = np.flatnonzero(mine)
            picks = picks[np.linspace(0, picks.size - 1, min(picks.size, _SAMPLES)).astype(np.int64)]
            for j in picks.tolist():
                for other in _partners(L, T, j, order):
                    o = L.sites[int(L.ex_site[T.R[other]])]
                    if a.pair is None:
                        a.pair = (
                            int(T.E[j]),
                            program_label(L, int(T.P[j])),
                            o,
                            program_label(L, int(T.P[other])),
                            L.index,
                        )
                    if (o.file, o.line, o.kind) != (s.file, s.line, s.kind):
                        a.others[(o.file, o.line, o.kind)] = o
        else:
            for j in taking:
                o = L.sites[j]
                if (o.file, o.line, o.kind) != (s.file, s.line, s.kind):
                    a.others[(o.file, o.line, o.kind)] = o


def _partners(L: LaunchTrace, T: _Touches, i: int, order: FlagOrder | None = None, first: bool = False) -> list[int]:
    """The other sides of touch i's race: conflicting touches of its element by other programs that no
    common lock (nor a flag, given `order`) orders, one per site; `first`: the first one only."""
    at = np.flatnonzero((T.E == T.E[i]) & (T.P != T.P[i]))
    ci = T.C[i]
    out: list[int] = []
    seen: set[int] = set()
    for j in at.tolist():
        cj = T.C[j]
        conflict = (
            (ci == STORE or cj == STORE or ci != cj)
            and not (ci == ATOMIC and cj == ATOMIC)
            and not (ci == STORE and cj == STORE and _stores_agree(T, i, j))
        )
        ordered = T.K[i] != NO_LOCK and T.K[i] == T.K[j]
        if conflict and not ordered and order is not None:
            pi, ri, pj, rj = int(T.P[i]), int(T.R[i]), int(T.P[j]), int(T.R[j])
            ordered = order.before(pj, rj, pi, ri) or order.before(pi, ri, pj, rj)
        site = int(L.ex_site[T.R[j]])
        if conflict and not ordered and site not in seen:
            seen.add(site)
            out.append(j)
            if first:
                break
    return out


def _stores_agree(T: _Touches, i: int, j: int) -> bool:
    """Two plain stores of different programs whose order cannot change the result: every store of the
    element stores the same values; or no program reads the element while another stores it, and one of
    the two is overwritten by its own program, or every program leaves the same values."""
    if T.V is None or T.last is None or T.read is None or T.final is None:
        return False
    if T.V[i]:
        return True
    if T.read[i]:
        return False
    return not (T.last[i] and T.last[j]) or bool(T.final[i])


def _side(s: Site, prog: tuple[int, ...]) -> str:
    return f"the {s.kind} at line {s.line} in program {format_program(prog)}"


def _race_finding(key: Key, a: _Acc) -> Finding:
    file, line, arg, kind = key
    s = a.site
    n_prog = len(a.programs)
    launches = f" (in {plural(len(a.launches), 'launch')})" if len(a.launches) > 1 else ""
    if a.pair is not None:
        e, mine, other_site, other_prog, _ = a.pair
        pair = f"{_side(s, mine)} and {_side(other_site, other_prog)} both touch element {e} and nothing orders them"
    else:
        pair = "programs touch the same elements and nothing orders them"
    examples = ", ".join(str(x) for x in a.examples_e)
    msg = (
        f"{arg}: {plural(n_prog, 'program')}{launches} at this {_NOUN[kind]} "
        f"{'race' if n_prog > 1 else 'races'} with other programs on {plural(a.elements, 'element')} "
        f"(e.g. {examples}): {pair}. Programs run in no fixed order on a GPU, so the result "
        "depends on timing: give each program its own elements, use an atomic (tl.atomic_add), guard the "
        "read-modify-write with a lock, or split the kernel in two launches."
    )
    related = [
        Related(o.file, o.line, o.col, o.end_line, o.end_col, f"the other {o.kind} of {arg} in this race")
        for o in a.others.values()
    ]
    return Finding.at(
        s,
        kind="race",
        severity="warning",
        arg=arg,
        access=kind,
        programs=n_prog,
        elements=a.elements,
        example_programs=list(a.examples_p),
        example_elements=list(a.examples_e),
        message=msg,
        related=related,
    )


def _identical_finding(key: Key, a: _Acc) -> Finding:
    file, line, arg, kind = key
    s = a.site
    n_prog = len(a.programs)
    examples = ", ".join(str(x) for x in a.examples_e)
    msg = (
        f"{arg}: {plural(n_prog, 'program')} store the same values to the same "
        f"{plural(a.elements, 'element')} (e.g. {examples}), so the order they run in does not change the "
        "result (information, not a race). Each copy still costs a store; a guard such as "
        "`if tl.program_id(0) == 0` writes them once."
    )
    return Finding.at(
        s,
        kind="race",
        severity="information",
        arg=arg,
        access=kind,
        programs=n_prog,
        elements=a.elements,
        example_programs=list(a.examples_p),
        example_elements=list(a.examples_e),
        message=msg,
    )
