"""Findings: out-of-bounds lanes, races between programs, dead masks, unwritten outputs, and the
script's own failures. Pure functions over the recorded arrays; messages name the problem and the
fix in the kernel author's terms.
"""
from __future__ import annotations

import os

import numpy as np

from ..model import (CRASHED, EXCEPTION, NO_LAUNCH, TIMEOUT, Finding, RunResult, TensorInfo)
from .groups import Group, format_program, program_label
from .memory import uninit_findings, unwritten_findings
from .races import race_findings
from .text import EXAMPLES, plural as _plural

_NOUN = {"load": "load", "store": "store", "atomic": "atomic"}


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
        msg = (f"{arg}: {_plural(lanes, 'lane')} of {who} {verb} {what}, at element offsets "
               f"{', '.join(str(e) for e in examples)}{'…' if offsets.size > EXAMPLES else ''} — {fix}. "
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
    findings = (oob_findings(groups) + race_findings(result.launches) + dead_findings(groups)
                + unwritten_findings(result.launches) + uninit_findings(result.launches) + run_findings(result))
    order = {"error": 0, "warning": 1, "information": 2}
    findings.sort(key=lambda f: (f.file, f.line, order.get(f.severity, 3), f.kind))
    return findings

