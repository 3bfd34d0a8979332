"""Findings: out-of-bounds lanes, races between programs, dead masks, unwritten outputs, and the
script's own failures. Pure functions over the recorded arrays; messages name the problem and the
fix in the kernel author's terms.
"""
from __future__ import annotations

import os

import numpy as np

from ..model.elements import runs_to_indices
from ..model import (CRASHED, ERROR, EXCEPTION, NO_LAUNCH, TIMEOUT, Finding, LaunchTrace, Related, RunResult, TensorInfo)
from .groups import Group, format_program, program_label

_VERB = {"load": "read", "store": "wrote", "atomic": "updated"}
_NOUN = {"load": "load", "store": "store", "atomic": "atomic"}
EXAMPLES = 3


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _shape(t: TensorInfo) -> str:
    return "×".join(str(s) for s in t.shape) if t.shape else "scalar"


def _where_oob(t: TensorInfo, offsets: np.ndarray) -> str:
    if offsets.size == 0:
        return "outside"
    lo, hi = int(offsets.min()), int(offsets.max())
    span = 1 + sum((s - 1) * st for s, st in zip(t.shape, t.strides))  # elements from first to last
    if lo >= span:
        return "past the end of"
    if hi < 0:
        return "before the start of"
    if lo >= 0 and hi < span:
        return "in the gaps between the rows of"
    return "outside"


def oob_findings(groups: dict[tuple, Group]) -> list[Finding]:
    out = []
    for (file, line, arg, kind), g in groups.items():
        lanes = 0
        progs: list[tuple[int, tuple]] = []
        examples: list[int] = []
        all_offsets = []
        tensor = None
        unmasked = True
        for part in g.parts:
            L, rows = part.launch, part.rows
            bad_rows = rows[L.ex_oob[rows] > 0]
            if bad_rows.size == 0:
                continue
            lanes += int(L.ex_oob[bad_rows].sum(dtype=np.int64))
            unmasked &= bool((L.ex_active[rows] == L.ex_lanes[rows]).all())
            for p in np.unique(L.ex_program[bad_rows]):
                progs.append((L.index, program_label(L, int(p))))
            offsets = np.concatenate(L.oob.gather(bad_rows))
            all_offsets.append(offsets)
            if tensor is None and g.first.arg >= 0:
                tensor = L.tensors[L.sites[part.sites[0]].arg]
        if lanes == 0:
            continue
        offsets = np.unique(np.concatenate(all_offsets)) if all_offsets else np.empty(0, np.int64)
        examples = [int(v) for v in offsets[:EXAMPLES]]
        n_prog = len(progs)
        who = (f"program {format_program(progs[0][1])}" if n_prog == 1
               else f"{n_prog} programs (e.g. {', '.join(format_program(p) for _, p in progs[:EXAMPLES])})")
        if tensor is not None:
            where = _where_oob(tensor, offsets)
            size = f"{tensor.numel} elements" if len(tensor.shape) <= 1 else f"{_shape(tensor)}, {tensor.numel} elements"
            what = f"{where} {arg}'s tensor ({size})"
        else:
            what = "outside every tensor argument"
        verb = {"load": "would read", "store": "would write", "atomic": "would update"}[kind]
        if unmasked:
            fix = f"add a mask to the {_NOUN[kind]} (e.g. mask=offs < n) so these lanes are switched off"
        elif what.startswith("in the gaps"):
            fix = "compute the address with the tensor's real strides (pass x.stride(0) rather than the row length)"
        else:
            fix = f"the {_NOUN[kind]}'s mask lets them through: tighten it, or clamp the offsets"
        more = '…' if offsets.size > EXAMPLES else ''
        if tensor is not None:
            at = f"at element offsets {', '.join(str(e) for e in examples)}{more}"
        else:  # a pointer made from an integer: no tensor to count elements in, the byte address
            at = f"at addresses {', '.join(hex(e) for e in examples)}{more}"
            fix = ("the address made from an integer (int_to_ptr) lies in no tensor the script holds: "
                   "check the integer it was made from")
        label = arg if tensor is not None else "pointer made from an integer"
        msg = (f"{label}: {_plural(lanes, 'lane')} of {who} {verb} {what}, {at} — {fix}. "
               f"Triton Lens kept them off memory; on a GPU they are undefined behaviour.")
        s = g.first
        out.append(Finding(kind="oob", severity="error", file=file, line=line, col=s.col, end_line=s.end_line,
                           end_col=s.end_col, arg=arg, access=kind, lanes=lanes, programs=n_prog,
                           elements=int(offsets.size), example_programs=[p for _, p in progs[:EXAMPLES]],
                           example_elements=examples, message=msg))
    return out


def dead_findings(groups: dict[tuple, Group]) -> list[Finding]:
    out = []
    for (file, line, arg, kind), g in groups.items():
        lanes = sum(int(p.launch.ex_lanes[p.rows].sum(dtype=np.int64)) for p in g.parts)
        active = sum(int(p.launch.ex_active[p.rows].sum(dtype=np.int64)) for p in g.parts)
        if lanes == 0 or active:
            continue
        execs = sum(int(p.rows.size) for p in g.parts)
        s = g.first
        out.append(Finding(kind="dead", severity="warning", file=file, line=line, col=s.col, end_line=s.end_line,
                           end_col=s.end_col, arg=arg, access=kind, lanes=lanes,
                           programs=sum(int(np.unique(p.launch.ex_program[p.rows]).size) for p in g.parts),
                           message=(f"{arg}: this {_NOUN[kind]}'s mask was false in all {lanes} lanes of its "
                                    f"{_plural(execs, 'execution')}, so it never touched memory"
                                    f"{' and always returned `other`' if kind == 'load' else ''} — check the mask's "
                                    "condition (a comparison the wrong way round, or against the wrong bound?)")))
    return out


def _group_minmax(e: np.ndarray, p: np.ndarray):
    """Distinct elements of e, with the min and max program touching each."""
    order = np.lexsort((p, e))
    es, ps = e[order], p[order]
    heads = np.flatnonzero(np.concatenate(([True], es[1:] != es[:-1])))
    return es[heads], np.minimum.reduceat(ps, heads), np.maximum.reduceat(ps, heads)


def _lookup(keys: np.ndarray, values: np.ndarray, q: np.ndarray, missing: int):
    pos = np.searchsorted(keys, q)
    pos_c = np.minimum(pos, max(keys.size - 1, 0))
    found = (pos < keys.size) & (keys[pos_c] == q) if keys.size else np.zeros(q.shape, bool)
    out = np.full(q.shape, missing, dtype=np.int64)
    if keys.size:
        out[found] = values[pos_c[found]]
    return found, out


def _contended_elements(L: LaunchTrace, rows: np.ndarray):
    """(element, program, site) of every touch of elements that more than one program touched.

    Works on runs first: runs sorted by start fall into clusters of chained overlaps; only clusters
    that hold two programs are expanded to elements, so disjoint tiles (the common case) cost
    nothing per element.
    """
    r_row, start, length = L.touched.runs(rows)
    if r_row.size < 2:
        return None, None, None
    prog = L.ex_program[r_row].astype(np.int64)
    order = np.argsort(start, kind="stable")
    r_row, start, length, prog = r_row[order], start[order], length[order], prog[order]
    end = start + length
    reach = np.maximum.accumulate(end)
    new_cluster = np.concatenate(([True], start[1:] >= reach[:-1]))
    cluster = np.cumsum(new_cluster) - 1
    pmin = np.minimum.reduceat(prog, np.flatnonzero(new_cluster))
    pmax = np.maximum.reduceat(prog, np.flatnonzero(new_cluster))
    shared = (pmin != pmax)[cluster]
    if not shared.any():
        return None, None, None
    r_row, start, length, prog = r_row[shared], start[shared], length[shared], prog[shared]
    E = runs_to_indices(start, length)
    P = np.repeat(prog, length)
    S = np.repeat(L.ex_site[r_row].astype(np.int64), length)
    return E, P, S


def race_findings(launches: list[LaunchTrace]) -> list[Finding]:
    # Per (file, line, arg, kind): programs and elements taking part, summed over launches.
    acc: dict[tuple, dict] = {}
    for L in launches:
        for t in L.tensors:
            site_ids = [i for i, s in enumerate(L.sites) if s.arg == t.index]
            if not any(L.sites[i].kind == "store" for i in site_ids):
                continue  # no plain store: loads and atomics never race with each other
            rows = np.flatnonzero(np.isin(L.ex_site, site_ids))
            if rows.size == 0:
                continue
            E, P, S = _contended_elements(L, rows)
            if E is None:
                continue
            is_store = np.isin(S, [i for i in site_ids if L.sites[i].kind == "store"])
            eA, minA, maxA = _group_minmax(E, P)
            eW, minW, maxW = _group_minmax(E[is_store], P[is_store])
            _, lo_a = _lookup(eA, minA, E, -1)
            _, hi_a = _lookup(eA, maxA, E, -1)
            found_w, lo_w = _lookup(eW, minW, E, -1)
            _, hi_w = _lookup(eW, maxW, E, -1)
            other_any = (lo_a != P) | (hi_a != P)
            other_store = found_w & ((lo_w != P) | (hi_w != P))
            part = np.where(is_store, other_any, other_store)
            if not part.any():
                continue
            taking = sorted(set(S[part].tolist()))
            for i in taking:
                sel = part & (S == i)
                s = L.sites[i]
                key = (s.file, s.line, t.name, s.kind)
                a = acc.setdefault(key, {"site": s, "programs": set(), "elements": 0, "examples_p": [],
                                         "examples_e": [], "others": {}, "launch": L})
                progs = np.unique(P[sel])
                a["programs"].update((L.index, int(p)) for p in progs)
                els = np.unique(E[sel])
                a["elements"] += int(els.size)
                for p in progs[:EXAMPLES]:
                    if len(a["examples_p"]) < EXAMPLES:
                        a["examples_p"].append(program_label(L, int(p)))
                a["examples_e"].extend(int(e) for e in els[:EXAMPLES - len(a["examples_e"])])
                for j in taking:
                    if j != i or len(taking) == 1:
                        o = L.sites[j]
                        a["others"][(o.file, o.line, o.kind)] = o
    out = []
    for (file, line, arg, kind), a in acc.items():
        s = a["site"]
        n_prog = len(a["programs"])
        others = [o for k, o in a["others"].items() if (o.file, o.line, o.kind) != (file, line, kind)]
        with_what = ", ".join(f"the {o.kind} at line {o.line}" for o in others) if others else "itself"
        if kind == "store" and not others:
            what = "store to the same elements"
        elif kind == "store":
            what = f"store elements that other programs access ({with_what})"
        else:
            what = f"{_VERB.get(kind, kind)} elements that other programs store to ({with_what})"
        msg = (f"{arg}: {n_prog} programs {what} — {_plural(a['elements'], 'element')}, e.g. "
               f"{', '.join(str(e) for e in a['examples_e'])}; programs "
               f"{', '.join(format_program(p) for p in a['examples_p'])}. Programs run in no fixed order on a GPU, "
               "so the result depends on timing: give each program its own elements, use an atomic "
               "(tl.atomic_add), or split the kernel in two launches.")
        related = [Related(o.file, o.line, o.col, o.end_line, o.end_col, f"the other {o.kind} of {arg} in this race")
                   for o in others]
        out.append(Finding(kind="race", severity="warning", file=file, line=line, col=s.col, end_line=s.end_line,
                           end_col=s.end_col, arg=arg, access=kind, programs=n_prog, elements=a["elements"],
                           example_programs=a["examples_p"], example_elements=a["examples_e"], message=msg,
                           related=related))
    return out


def unwritten_findings(launches: list[LaunchTrace]) -> list[Finding]:
    acc: dict[tuple, dict] = {}
    for L in launches:
        if not L.complete:
            continue
        for t in L.tensors:
            stores = [i for i, s in enumerate(L.sites) if s.arg == t.index and s.kind in ("store", "atomic")]
            if not stores or t.numel == 0:
                continue
            rows = np.flatnonzero(np.isin(L.ex_site, stores))
            written = L.touched.cover(rows, t.numel)
            missing = t.numel - int(np.count_nonzero(written))
            if missing <= 0:
                continue
            first = min((L.sites[i] for i in stores), key=lambda s: (s.line, s.col))
            key = (first.file, first.line, t.name, first.kind)
            a = acc.setdefault(key, {"site": first, "missing": 0, "numel": 0, "examples": [], "launches": 0})
            a["missing"] += missing
            a["numel"] += t.numel
            a["launches"] += 1
            if not a["examples"]:
                a["examples"] = [int(e) for e in np.flatnonzero(~written)[:EXAMPLES]]
    out = []
    for (file, line, arg, kind), a in acc.items():
        s = a["site"]
        msg = (f"{arg}: {a['missing']} of {a['numel']} elements were written by no program"
               f"{' (over ' + str(a['launches']) + ' launches)' if a['launches'] > 1 else ''}, e.g. "
               f"{', '.join(str(e) for e in a['examples'])} — they keep whatever the tensor held before "
               "(torch.empty gives garbage): launch enough programs to cover the output, or mean it")
        out.append(Finding(kind="unwritten", severity="information", file=file, line=line, col=s.col,
                           end_line=s.end_line, end_col=s.end_col, arg=arg, access=kind, elements=a["missing"],
                           example_elements=a["examples"], message=msg))
    return out


def run_findings(result: RunResult) -> list[Finding]:
    """The script's own failures, and kernels that never ran."""
    out = []
    e = result.error
    if e is not None and result.status in (EXCEPTION, TIMEOUT, CRASHED):
        in_file = e.file is not None and e.line is not None and _same_file(e.file, result.file)
        line = e.line if in_file else 1
        kept = (f" The {_plural(len(result.launches), 'launch')} that finished before are shown."
                if result.launches else "")
        if result.status == EXCEPTION:
            where = "" if in_file else f" (raised in {e.file}:{e.line})" if e.file else ""
            msg = f"{e.type}: {e.message}{where}.{kept}"
            sev = "error"
        elif result.status == TIMEOUT:
            msg = (f"{e.message}{'' if in_file else ''}: the script may hang here, or needs more time "
                   f"(raise the time limit: tritonLens.timeLimit, or --timeout).{kept}")
            sev = "warning"
        else:
            msg = f"{e.message}.{kept}"
            sev = "error"
        out.append(Finding(kind=result.status, severity=sev, file=result.file, line=line, message=msg,
                           detail=e.traceback))
    if e is not None and result.status == ERROR and e.line is not None and e.file is not None \
            and _same_file(e.file, result.file):  # the file itself cannot run (its bytes do not decode)
        out.append(Finding(kind="error", severity="error", file=result.file, line=e.line, message=e.message))
    if result.status == NO_LAUNCH:
        for k in result.kernels:
            out.append(Finding(kind="no-launch", severity="information", file=k.file, line=k.line,
                               message=(f"{k.name}: no kernel launch ran in this file, so there is nothing to show. "
                                        f"Launch it under `if __name__ == \"__main__\":`, or add a comment "
                                        f"`# triton-lens: run <command>` naming a script or test that launches it.")))
        if not result.kernels:
            out.append(Finding(kind="no-launch", severity="information", file=result.file, line=1,
                               message="no Triton kernel launch ran in this file"))
    return out


def _same_file(a: str, b: str) -> bool:
    return os.path.abspath(a) == os.path.abspath(b)


def all_findings(result: RunResult, groups: dict) -> list[Finding]:
    from .standin import standin_findings

    findings = (oob_findings(groups) + race_findings(result.launches) + dead_findings(groups)
                + unwritten_findings(result.launches) + run_findings(result) + standin_findings(result))
    order = {"error": 0, "warning": 1, "information": 2}
    findings.sort(key=lambda f: (f.file, f.line, order.get(f.severity, 3), f.kind))
    return findings

