"""Findings about memory contents: outputs a launch left unwritten, and loads of memory nothing wrote.

What "written before" means comes from the worker's host-write tracking (trace_engine/recording/host_writes.py):
`LaunchTrace.unwritten_before` lists, per tensor, the elements that no host operation and no
earlier kernel store had written when the launch started (memory from torch.empty and friends).
A run recorded without that tracking (the in-process Triton-Viz API) lists none: its unwritten
outputs stay information and it reports no uninit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model import Finding, LaunchTrace
from .groups import Key
from .text import EXAMPLES, plural


def _unwritten_mask(L: LaunchTrace, index: int, numel: int) -> np.ndarray | None:
    runs = L.unwritten_before.get(index)
    if runs is None or runs.size == 0:
        return None
    out = np.zeros(numel, dtype=bool)
    for lo, n in zip(runs[0::2].tolist(), runs[1::2].tolist()):
        out[lo : lo + n] = True
    return out


def _rows(L: LaunchTrace, sites: list[int]) -> np.ndarray:
    return np.flatnonzero(np.isin(L.ex_site, sites))


def _examples(mask: np.ndarray) -> list[int]:
    return [int(e) for e in np.flatnonzero(mask)[:EXAMPLES]]


def _fmt(examples: list[int], total: int) -> str:
    return ", ".join(str(e) for e in examples) + ("…" if total > len(examples) else "")


def _dropped_scratch(launches: list[LaunchTrace], scratch: list[dict[str, Any]] | None) -> set[tuple[int, int]]:
    """(launch, tensor index) of the torch.empty buffers whose garbage nothing ever saw: a later launch
    read the buffer, only where it had been written, and no host operation read an unwritten element of
    it afterwards (RunResult.scratch_buffers). Unknown (no report, a later launch missing or cut short):
    not in the set, so the warning stays."""
    if not scratch:
        return set()
    by_index = {L.index: L for L in launches}
    out: set[tuple[int, int]] = set()
    for buf in scratch:
        if buf.get("host_read_after") is not None:
            continue
        uses = [(int(a), int(b)) for a, b in buf.get("uses", [])]
        for j, use in enumerate(uses):
            read_later = False
            for li, ti in uses[j + 1 :]:
                L2 = by_index.get(li)
                if L2 is None or not L2.complete or ti >= len(L2.tensors):
                    read_later = False
                    break
                loads = [i for i, s in enumerate(L2.sites) if s.arg == ti and s.kind in ("load", "atomic")]
                if not loads:
                    continue
                numel = L2.tensors[ti].numel
                before = _unwritten_mask(L2, ti, numel)
                if before is not None and (L2.touched.cover(_rows(L2, loads), numel) & before).any():
                    read_later = False  # it read the garbage (an uninit error there): not harmless
                    break
                read_later = True
            if read_later:
                out.add(use)
    return out


def _remedy(a: dict[str, Any], kind: str) -> str:
    """The grid when it launched too few lanes to reach every element; else the mask (or the offsets)."""
    if a["short_of_lanes"]:
        return (
            "launch enough programs to cover the output (e.g. a grid of triton.cdiv(n, BLOCK)), or fill the "
            "tensor first (torch.zeros)"
        )
    return (
        f"the {kind}s had lanes enough for every element, so their mask (or offsets) left these out: check the "
        f"{kind}'s mask against the output's size (e.g. mask=offs < n), or fill the tensor first (torch.zeros)"
    )


def unwritten_findings(launches: list[LaunchTrace], scratch: list[dict[str, Any]] | None = None) -> list[Finding]:
    """Outputs a launch's stores left partly unwritten: a warning where those elements hold garbage that
    something may see (not a scratch buffer that only later launches read where written, then dropped)."""
    acc: dict[Key, dict[str, Any]] = {}  # per line: the first site and the totals over launches
    dropped = _dropped_scratch(launches, scratch)
    for L in launches:
        if not L.complete:
            continue
        for t in L.tensors:
            stores = [i for i, s in enumerate(L.sites) if s.arg == t.index and s.kind in ("store", "atomic")]
            if not stores or t.numel == 0:
                continue
            written = L.touched.cover(_rows(L, stores), t.numel)
            missing = ~written
            n_missing = int(np.count_nonzero(missing))
            if n_missing == 0:
                continue
            before = _unwritten_mask(L, t.index, t.numel)
            if (L.index, t.index) in dropped:
                before = None  # garbage nothing read: as harmless as elements the host filled
            garbage = missing & before if before is not None else np.zeros(0, dtype=bool)
            n_garbage = int(np.count_nonzero(garbage))
            first = min((L.sites[i] for i in stores), key=lambda s: (s.line, s.col))
            key = (first.file, first.line, t.name, first.kind)
            a = acc.setdefault(
                key,
                {
                    "site": first,
                    "missing": 0,
                    "garbage": 0,
                    "numel": 0,
                    "examples": [],
                    "garbage_examples": [],
                    "launches": 0,
                    "scratch": 0,
                    "short_of_lanes": False,  # some launch's stores had fewer lanes, masked or not, than elements
                },
            )
            lanes = int(L.ex_lanes[_rows(L, stores)].sum(dtype=np.int64))
            a["short_of_lanes"] |= lanes < t.numel
            a["scratch"] += (L.index, t.index) in dropped
            a["missing"] += n_missing
            a["garbage"] += n_garbage
            a["numel"] += t.numel
            a["launches"] += 1
            if not a["examples"]:
                a["examples"] = _examples(missing)
            if n_garbage and not a["garbage_examples"]:
                a["garbage_examples"] = _examples(garbage)
    out = []
    for (_, _, arg, kind), a in acc.items():
        s = a["site"]
        over = f" (over {a['launches']} launches)" if a["launches"] > 1 else ""
        if a["garbage"]:
            also = (
                f"; {a['missing'] - a['garbage']} more hold what was written there before"
                if a["missing"] > a["garbage"]
                else ""
            )
            msg = (
                f"{arg}: {a['missing']} of {a['numel']} elements were written by no program{over}, and "
                f"{plural(a['garbage'], 'element')} of them (e.g. {_fmt(a['garbage_examples'], a['garbage'])}) "
                f"were never written by anything before either{also}: they hold whatever was in memory "
                f"(torch.empty & co.) — {_remedy(a, kind)}"
            )
            sev = "warning"
        elif a["scratch"] == a["launches"]:
            msg = (
                f"{arg}: {a['missing']} of {a['numel']} elements were written by no program{over}, e.g. "
                f"{_fmt(a['examples'], a['missing'])} — a scratch buffer: later launches read it only where "
                "it was written, and no launch and no host operation read these elements afterwards "
                "(information: they hold whatever was in memory, which nothing sees)"
            )
            sev = "information"
        else:
            msg = (
                f"{arg}: {a['missing']} of {a['numel']} elements were written by no program{over}, e.g. "
                f"{_fmt(a['examples'], a['missing'])} — they keep what the host or an earlier kernel wrote "
                "there (information: fine when the kernel only updates part of the tensor)"
            )
            sev = "information"
        out.append(
            Finding.at(
                s,
                kind="unwritten",
                severity=sev,
                arg=arg,
                access=kind,
                elements=a["missing"],
                example_elements=a["garbage_examples"] or a["examples"],
                message=msg,
            )
        )
    return out


def uninit_findings(launches: list[LaunchTrace]) -> list[Finding]:
    """Loads (and atomics) whose active in-bounds lanes read elements nothing had written."""
    acc: dict[Key, dict[str, Any]] = {}  # per line: the first site and the totals over launches
    for L in launches:
        for t in L.tensors:
            before = _unwritten_mask(L, t.index, t.numel)
            if before is None:
                continue
            # Elements this launch's own stores write are not counted: reading them is a race
            # (another program) or reads what the program wrote itself.
            writes = [i for i, s in enumerate(L.sites) if s.arg == t.index and s.kind == "store"]
            if writes:
                before &= ~L.touched.cover(_rows(L, writes), t.numel)
            by_key: dict[Key, list[int]] = {}
            for i, s in enumerate(L.sites):
                if s.arg == t.index and s.kind in ("load", "atomic"):
                    by_key.setdefault((s.file, s.line, t.name, s.kind), []).append(i)
            for key, sites in by_key.items():
                read = L.touched.cover(_rows(L, sites), t.numel) & before
                n = int(np.count_nonzero(read))
                if n == 0:
                    continue
                first = min((L.sites[i] for i in sites), key=lambda s: s.col)
                a = acc.setdefault(
                    key, {"site": first, "elements": 0, "examples": [], "launches": set(), "numel": t.numel}
                )
                a["elements"] += n
                a["launches"].add(L.index)
                if not a["examples"]:
                    a["examples"] = _examples(read)
    out = []
    for (_, _, arg, kind), a in acc.items():
        s = a["site"]
        over = f" (over {plural(len(a['launches']), 'launch')})" if len(a["launches"]) > 1 else ""
        verb = "read" if kind == "load" else "updated"
        msg = (
            f"{arg}: this {kind} {verb} {plural(a['elements'], 'element')}{over} that nothing had written "
            f"(e.g. {_fmt(a['examples'], a['elements'])}): memory from torch.empty & co. that no host "
            "operation and no earlier kernel filled. On a GPU they hold whatever was in memory "
            "(compute-sanitizer's initcheck reports these) — fill the tensor first (torch.zeros), "
            "write those elements in an earlier launch, or mask the load to the part that was written"
        )
        out.append(
            Finding.at(
                s,
                kind="uninit",
                severity="error",
                arg=arg,
                access=kind,
                elements=a["elements"],
                example_elements=a["examples"],
                message=msg,
            )
        )
    return out
