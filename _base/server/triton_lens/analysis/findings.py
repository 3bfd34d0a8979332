"""Findings: out-of-bounds lanes, races between programs, dead masks, unwritten outputs, and the
script's own failures. Pure functions over the recorded arrays; messages name the problem and the
fix in the kernel author's terms.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..model import CRASHED, ERROR, EXCEPTION, NO_LAUNCH, TIMEOUT, Finding, LaunchTrace, RunResult, TensorInfo
from .groups import Group, Key, program_label
from .memory import uninit_findings, unwritten_findings
from .races import race_findings
from .rows import overrun_findings
from .sizes import size_findings
from .text import EXAMPLES, format_program, plural

_plural = plural

_NOUN = {"load": "load", "store": "store", "atomic": "atomic"}


def _shape(t: TensorInfo) -> str:
    return "×".join(str(s) for s in t.shape) if t.shape else "scalar"


def _span(t: TensorInfo) -> int:
    """Elements from the tensor's first element to its last, padding included."""
    return 1 + sum((s - 1) * st for s, st in zip(t.shape, t.strides)) if t.numel else 0


def _describe(t: TensorInfo) -> str:
    """The tensor as its shape and strides make it: a broadcast view and padding between rows said so."""
    broadcast = [k for k, (s, st) in enumerate(zip(t.shape, t.strides)) if s > 1 and st == 0]
    if broadcast:
        distinct = 1
        for s, st in zip(t.shape, t.strides):
            if st != 0:
                distinct *= s
        dims = ", ".join(str(k) for k in broadcast)
        return (
            f"a broadcast view {_shape(t)} (stride 0 in dim{'s' if len(broadcast) > 1 else ''} {dims}: "
            f"{plural(distinct, 'distinct element')} in memory)"
        )
    size = plural(t.numel, "element") if len(t.shape) <= 1 else f"{_shape(t)}, {plural(t.numel, 'element')}"
    pad = _span(t) - t.numel
    if pad > 0 and all(st > 0 for st in t.strides):
        size += f", with {plural(pad, 'element')} of padding between its rows"
    return size


def _where_oob(t: TensorInfo, lo: int, hi: int) -> str:
    span = _span(t)
    if lo >= span:
        return "past the end of"
    if hi < 0:
        return "before the start of"
    if lo >= 0 and hi < span:
        return "in the padding between the rows of"
    return "outside"


COORD_LIMIT = 1 << 20  # out-of-bounds offsets expanded to coordinates (beyond: the outer dimension only)


def _half_open(lo: int, hi: int) -> str:
    return f"{lo}" if hi == lo else f"{lo}:{hi + 1}"


def in_coordinates(name: str, t: TensorInfo, starts: np.ndarray, ends: np.ndarray) -> str:
    """Out-of-bounds element offsets (merged runs [start, end)) in an N-D tensor's own coordinates, read
    through its strides as if each dimension ran on: `x_ptr[64:90, 0:100]: dimension 0 has only 64` for
    rows past the last one, `x_ptr[0:31, 100:968]: dimension 1 has only 100` for the padding after each row. Empty
    for 1-D tensors (the offsets say it), broadcast or unordered strides."""
    shape, strides = tuple(int(d) for d in t.shape), tuple(int(s) for s in t.strides)
    if len(shape) < 2 or starts.size == 0 or any(s <= 0 for s in strides):
        return ""
    if any(strides[k] < strides[k + 1] * shape[k + 1] for k in range(len(shape) - 1)):
        return ""  # dimensions that interleave in memory: no one reading of an offset
    count = int((ends - starts).sum())
    if count <= COORD_LIMIT:
        offs = np.concatenate([np.arange(a, b, dtype=np.int64) for a, b in zip(starts.tolist(), ends.tolist())])
        dims, rest = [], offs
        for st in strides:
            dims.append(np.floor_divide(rest, st))
            rest = rest - dims[-1] * st
        lo_hi = [(int(d.min()), int(d.max())) for d in dims]
    else:  # the outer dimension from the runs' ends alone (offsets are sorted)
        lo_hi = [(int(starts[0]) // strides[0], (int(ends[-1]) - 1) // strides[0])]
        lo_hi += [(0, d - 1) for d in shape[1:]]
    past = [k for k, (lo, hi) in enumerate(lo_hi) if lo < 0 or hi >= shape[k]]
    if not past:
        return ""
    k = past[0]
    return f"{name}[{', '.join(_half_open(lo, hi) for lo, hi in lo_hi)}]: dimension {k} has only {shape[k]}"


def _launch_name(L: LaunchTrace) -> str:
    return f"launch {L.index + 1} (line {L.line})"


def oob_findings(groups: dict[Key, Group]) -> list[Finding]:
    """Active lanes outside the tensor. Bounded by the compact sets: offsets are merged as runs,
    never expanded per lane."""
    out = []
    for (_, _, arg, kind), g in groups.items():
        lanes = 0
        progs: list[tuple[LaunchTrace, tuple[int, ...]]] = []
        # (launch, tensor, starts, ends): the first launch with out-of-bounds lanes
        shown: tuple[LaunchTrace, TensorInfo | None, np.ndarray, np.ndarray] | None = None
        elements = 0
        launches = 0
        unmasked = True
        for part in g.parts:
            L, rows = part.launch, part.rows
            bad_rows = rows[L.ex_oob[rows] > 0]
            if bad_rows.size == 0:
                continue
            launches += 1
            lanes += int(L.ex_oob[bad_rows].sum(dtype=np.int64))
            unmasked &= all(L.sites[i].unmasked for i in np.unique(L.ex_site[bad_rows]).tolist())
            progs.extend((L, program_label(L, int(p))) for p in np.unique(L.ex_program[bad_rows]))
            st, en = L.oob.merged_runs(bad_rows)
            elements += int((en - st).sum())
            if shown is None:
                a = L.sites[part.sites[0]].arg
                shown = (L, L.tensors[a] if a >= 0 else None, st, en)
        if lanes == 0 or shown is None:  # (one implies the other)
            continue
        L0, tensor, st, en = shown
        examples: list[int] = []
        for lo, hi in zip(st.tolist(), en.tolist()):
            examples.extend(range(lo, min(hi, lo + EXAMPLES - len(examples))))
            if len(examples) >= EXAMPLES:
                break
        n_off = int((en - st).sum())
        n_prog = len(progs)
        if launches == 1:
            who = (
                f"program {format_program(progs[0][1])}"
                if n_prog == 1
                else f"{n_prog} programs (e.g. {', '.join(format_program(p) for _, p in progs[:EXAMPLES])})"
            )
        elif n_prog == launches and len({p for _, p in progs}) == 1:
            who = f"program {format_program(progs[0][1])} in each of {launches} launches"
        else:
            ex = ", ".join(f"{format_program(p)} of launch {L.index + 1}" for L, p in progs[:EXAMPLES])
            who = f"{plural(n_prog, 'program')} in {launches} launches (e.g. {ex})"
        if tensor is not None:
            where = _where_oob(tensor, int(st[0]), int(en[-1]) - 1)
            desc = _describe(tensor)
            what = (
                f"{where} {arg}'s tensor, {desc},"
                if desc.startswith("a broadcast")
                else f"{where} {arg}'s tensor ({desc})"
            )
        else:
            where, what = "outside", "outside every tensor argument"
        verb = {"load": "would read", "store": "would write", "atomic": "would update"}[kind]
        if unmasked:
            fix = f"add a mask to the {_NOUN[kind]} (e.g. mask=offs < n) so these lanes are switched off"
        elif where.startswith("in the padding"):
            fix = "compute the address with the tensor's real strides (pass x.stride(0) rather than the row length)"
        else:
            fix = (
                f"the {_NOUN[kind]}'s mask lets {'them' if lanes > 1 else 'it'} through: tighten it, "
                "or clamp the offsets"
            )
        offsets = f"{', '.join(str(e) for e in examples)}{'…' if n_off > len(examples) else ''}"
        of_launch = f" of the tensor of {_launch_name(L0)}" if launches > 1 else ""
        word = "offset" if n_off == 1 else "offsets"
        at = f"at element {word} {offsets}{of_launch}"
        coords = in_coordinates(arg, tensor, st, en) if tensor is not None else ""
        if coords:
            at += f" ({coords})"
        if tensor is None:  # a pointer made from an integer: no tensor to count elements in, the byte address
            at = (
                f"at {'address' if n_off == 1 else 'addresses'} "
                f"{', '.join(hex(e) for e in examples)}{'…' if n_off > len(examples) else ''}"
            )
            fix = (
                "the address made from an integer (int_to_ptr) lies in no tensor the script holds: "
                "check the integer it was made from"
            )
        label = arg if tensor is not None else "pointer made from an integer"
        msg = (
            f"{label}: {plural(lanes, 'lane')} of {who} {verb} {what} {at} "
            f"— {fix}. Triton Lens kept them off memory; on a GPU they are undefined behaviour."
        )
        s = g.first
        out.append(
            Finding.at(
                s,
                kind="oob",
                severity="error",
                arg=arg,
                access=kind,
                lanes=lanes,
                programs=n_prog,
                elements=elements,
                example_programs=[p for _, p in progs[:EXAMPLES]],
                example_elements=examples,
                message=msg,
            )
        )
    return out


def dead_findings(groups: dict[Key, Group]) -> list[Finding]:
    out = []
    for (_, _, arg, kind), g in groups.items():
        lanes = sum(int(p.launch.ex_lanes[p.rows].sum(dtype=np.int64)) for p in g.parts)
        active = sum(int(p.launch.ex_active[p.rows].sum(dtype=np.int64)) for p in g.parts)
        if lanes == 0 or active:
            continue
        execs = sum(int(p.rows.size) for p in g.parts)
        s = g.first
        out.append(
            Finding.at(
                s,
                kind="dead",
                severity="warning",
                arg=arg,
                access=kind,
                lanes=lanes,
                programs=sum(int(np.unique(p.launch.ex_program[p.rows]).size) for p in g.parts),
                message=(
                    f"{arg}: this {_NOUN[kind]}'s mask was false in all {lanes} lanes of its "
                    f"{_plural(execs, 'execution')}, so it never touched memory"
                    f"{' and always returned `other`' if kind == 'load' else ''} — check the mask's "
                    "condition (a comparison the wrong way round, or against the wrong bound?)"
                ),
            )
        )
    return out


def _stop(text: str) -> str:
    """The text as a sentence: a full stop added unless it ends with one (the script's own messages)."""
    return text if text.endswith((".", "!", "?")) else text + "."


def run_findings(result: RunResult) -> list[Finding]:
    """The script's own failures, and kernels that never ran."""
    out = []
    e = result.error
    if e is not None and result.status in (EXCEPTION, TIMEOUT, CRASHED):
        in_file = e.file is not None and e.line is not None and _same_file(e.file, result.file)
        line = e.line if in_file and e.line is not None else 1
        done = [L for L in result.launches if L.complete]
        cut = len(result.launches) - len(done)
        kept = ""
        if done:
            kept = (
                " The launch that finished before is shown."
                if len(done) == 1
                else f" The {len(done)} launches that finished before are shown."
            )
        if cut and result.status == TIMEOUT:
            kept += (
                " The launch it stopped in is shown with the programs that finished"
                if cut == 1
                else f" The {cut} launches it stopped in are shown with the programs that finished"
            )
            kept += " (partial)."
        elif cut:
            kept += (
                " The launch it was raised in is shown up to that point (partial)."
                if cut == 1
                else f" The {cut} launches it was raised in are shown up to that point (partial)."
            )
        span: dict[str, Any] = {}
        if result.status == EXCEPTION and e.would_not_compile:
            # the compiler's error, at the expression it is raised at (the kernel's file may be another)
            msg = f"{_stop(e.message)}{kept}"
            sev = "error"
            if e.file is not None and e.line is not None:
                span = {"file": e.file, "line": e.line, "col": e.col if e.col is not None else -1}
                span.update(end_line=e.end_line or e.line, end_col=e.end_col if e.end_col is not None else -1)
        elif result.status == EXCEPTION:
            where = "" if in_file else f" (raised in {e.file}:{e.line})" if e.file else ""
            msg = f"{e.type}: {_stop(e.message + where)}{kept}"
            sev = "error"
        elif result.status == TIMEOUT:
            msg = f"{e.message}: the script may hang here, or needs more time.{kept}"
            sev = "warning"
        else:
            msg = f"{_stop(e.message)}{kept}"
            sev = "error"
        at = span or {"file": result.file, "line": line}
        # a compile error is the compiler's, at its expression: the interpreter's traceback (through
        # triton's internals to the launch) says nothing more; it stays in the run's error
        detail = "" if e.would_not_compile else e.traceback
        out.append(Finding(kind=result.status, severity=sev, message=msg, detail=detail, remedy=e.remedy, **at))
    if (
        e is not None
        and result.status == ERROR
        and e.line is not None
        and e.file is not None
        and _same_file(e.file, result.file)
    ):  # the file itself cannot run (its bytes do not decode)
        out.append(Finding(kind="error", severity="error", file=result.file, line=e.line, message=e.message))
    if result.status == NO_LAUNCH:
        for k in result.kernels:
            out.append(
                Finding(
                    kind="no-launch",
                    severity="information",
                    file=k.file,
                    line=k.line,
                    message=(
                        f"{k.name}: no kernel launch ran in this file, so there is nothing to show. "
                        f'Launch it under `if __name__ == "__main__":`, or add a comment '
                        f"`# triton-lens: run <command>` naming a script or test that launches it."
                    ),
                )
            )
        if not result.kernels:
            out.append(
                Finding(
                    kind="no-launch",
                    severity="information",
                    file=result.file,
                    line=1,
                    message="no Triton kernel launch ran in this file",
                )
            )
    return out


# The findings that hold for the programs that ran, whichever others run: the exact lanes of those
# programs (an out-of-bounds lane, a row overrun, a TF32 dot, a descriptor with no allocator). A partial
# run (a launch's sample, trace_engine/recording/progressive.py) shows only these. The others need every program
# of the launch (races between programs, unwritten and uninitialised elements, dead masks, coalescing
# over all executions, the size check after the launch, the script's end): never shown from a sample.
SAMPLE_KINDS = frozenset({"oob", "overrun", "tf32", "allocator"})


def sample_findings(findings: list[Finding]) -> list[Finding]:
    """Of a partial run's findings, those a sample of programs can prove (SAMPLE_KINDS)."""
    return [f for f in findings if f.kind in SAMPLE_KINDS]


def _same_file(a: str, b: str) -> bool:
    return os.path.abspath(a) == os.path.abspath(b)


def all_findings(result: RunResult, groups: dict[Key, Group]) -> list[Finding]:
    from .standin import standin_findings

    findings = (
        oob_findings(groups)
        + race_findings(result.launches)
        + dead_findings(groups)
        + overrun_findings(groups)
        + unwritten_findings(result.launches, result.scratch_buffers)
        + uninit_findings(result.launches)
        + run_findings(result)
        + standin_findings(result)
    )
    oob_at = {(f.file, f.line, f.arg) for f in findings if f.kind == "oob"}
    findings += size_findings(result.launches, oob_at)
    order = {"error": 0, "warning": 1, "information": 2}
    findings.sort(key=lambda f: (f.file, f.line, order.get(f.severity, 3), f.kind))
    return findings
