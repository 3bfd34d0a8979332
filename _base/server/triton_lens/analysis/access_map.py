"""Data for the access-map viewer: kernels and launches of a run, and per tensor, per access site,
per program, the element sets it touched (compact ENC form, never one JSON number per element).
The format is documented in docs/architecture.md ("Viewer data").
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..model import LaunchTrace, RunResult
from ..model import elements as enc
from .groups import program_label


def kernels_overview(result: RunResult) -> dict[str, Any]:
    kernels: dict[tuple[str, str, int], dict[str, Any]] = {}  # (name, file, line) -> its overview
    for k in result.kernels:
        kernels[(k.name, k.file, k.line)] = {"name": k.name, "file": k.file, "line": k.line, "launches": []}
    for L in result.launches:
        key = (L.kernel, L.def_file, L.def_line)
        entry = kernels.setdefault(key, {"name": L.kernel, "file": L.def_file, "line": L.def_line, "launches": []})
        entry["launches"].append(
            {
                "index": L.index,
                "grid": list(L.grid),
                "file": L.file,
                "line": L.line,
                "programs": L.n_programs,
                "complete": L.complete,
                "tensors": [t.to_json() for t in L.tensors],
            }
        )
    return {"file": result.file, "status": result.status, "kernels": list(kernels.values())}


def _launch(result: RunResult, launch: int) -> LaunchTrace:
    for L in result.launches:
        if L.index == launch:
            return L
    raise KeyError(f"no launch {launch} in this run (it has {len(result.launches)})")


STEP_LIMIT = 8192  # per-execution sets sent per map at most (loop steps); the rest is merged only


def access_map(result: RunResult, launch: int, tensor: int, line: int | None = None) -> dict[str, Any]:
    """Every access of one tensor in one launch, per (site, program), merged over loop iterations,
    with the launch-wide row (execution order) of each execution and, for accesses a program ran
    more than once (loops), each execution's sets as `steps` (iteration i = steps[i]).

    `line` (optional) keeps only the sites on that source line.
    """
    L = _launch(result, launch)
    if not 0 <= tensor < len(L.tensors):
        raise KeyError(f"launch {launch} has no tensor {tensor}")
    t = L.tensors[tensor]
    site_ids = [i for i, s in enumerate(L.sites) if s.arg == tensor and (line is None or s.line == line)]
    sites = [dict(L.sites[i].to_json(), id=n) for n, i in enumerate(site_ids)]
    accesses = []
    budget = [STEP_LIMIT]
    for n, i in enumerate(site_ids):
        rows = np.flatnonzero(L.ex_site == i)
        if rows.size == 0:
            continue
        progs = L.ex_program[rows]
        order = np.argsort(progs, kind="stable")
        rows, progs = rows[order], progs[order]
        heads = np.flatnonzero(np.concatenate(([True], progs[1:] != progs[:-1])))
        bounds = np.append(heads, rows.size)
        for h, e in zip(bounds[:-1], bounds[1:]):
            r = rows[h:e]
            accesses.append(
                {
                    "site": n,
                    "program": [int(v) for v in L.program_coords(int(progs[h]))],
                    "label": list(program_label(L, int(progs[h]))),
                    "executions": int(r.size),
                    "lanes": int(L.ex_lanes[r].sum()),
                    "active": int(L.ex_active[r].sum()),
                    "touched": _enc_rows(L.touched, r),
                    "masked": _enc_rows(L.masked, r),
                    "oob": _enc_rows(L.oob, r),
                    **_steps(L, r, budget),
                }
            )
    return {
        "launch": {"index": L.index, "kernel": L.kernel, "grid": list(L.grid), "file": L.file, "line": L.line},
        "tensor": t.to_json(),
        "sites": sites,
        "accesses": accesses,
        "steps_truncated": budget[0] < 0,
    }


def _steps(L: LaunchTrace, r: np.ndarray, budget: list[int]) -> dict[str, Any]:
    """`rows` (execution order in the launch) and, for a loop, one entry per execution."""
    out: dict[str, Any] = {"rows": r.tolist()}
    if r.size > 1:
        if budget[0] < r.size:
            budget[0] = -1
            return out
        budget[0] -= int(r.size)
        cols = [
            (sets, sets.kind[r].tolist(), sets.lo[r].tolist(), sets.count[r].tolist())
            for sets in (L.touched, L.masked, L.oob)
        ]
        lanes, active = L.ex_lanes[r].tolist(), L.ex_active[r].tolist()
        steps = []
        for j, x in enumerate(r.tolist()):
            encs = []
            for sets, kind, lo, count in cols:  # a tile or nothing needs no numpy (the common case)
                k = kind[j]
                encs.append(
                    None
                    if k == enc.EMPTY
                    else {"runs": [lo[j], count[j]]}
                    if k == enc.RANGE
                    else enc.to_json(sets.get(x))
                )
            steps.append(
                {"lanes": lanes[j], "active": active[j], "touched": encs[0], "masked": encs[1], "oob": encs[2]}
            )
        out["steps"] = steps
    return out


def _enc_rows(sets: enc.ElementSets, rows: np.ndarray) -> dict[str, Any] | None:
    """ENC of the union of some executions' sets; one range (a tile) needs no numpy at all."""
    if rows.size == 1:
        r = int(rows[0])
        kind = int(sets.kind[r])
        if kind == enc.EMPTY:
            return None
        if kind == enc.RANGE:
            return {"runs": [int(sets.lo[r]), int(sets.count[r])]}
    return enc.to_json(sets.union(rows))


def _json_number(v: Any) -> object:
    f = float(v)
    if math.isnan(f) or math.isinf(f):
        return str(f)
    return int(v) if isinstance(v, (np.integer, int, np.bool_)) else f


def tensor_values(result: RunResult, launch: int, tensor: int, start: int = 0, count: int = 64) -> dict[str, Any]:
    """Values of a tensor after the launch, for the viewer's tooltip (null when they were not kept)."""
    L = _launch(result, launch)
    values = L.values.get(tensor)
    if values is None:
        return {"start": start, "values": None}
    steps = L.value_steps.get(tensor)
    if steps is not None:  # a sample: exact values only where it has them, null elsewhere
        t = L.tensors[tensor]
        cols = int(t.shape[-1]) if t.shape else 1
        sc = -(-cols // steps[1])
        idx = np.arange(max(0, start), min(t.numel, max(0, start) + max(0, min(int(count), 4096))))
        r, c = np.divmod(idx, cols)
        kept = (r % steps[0] == 0) & (c % steps[1] == 0)
        pos = (r // steps[0]) * sc + c // steps[1]
        return {
            "start": start,
            "values": [_json_number(values[p]) if k else None for p, k in zip(pos.tolist(), kept.tolist())],
            "sampled": [steps[0], steps[1]],
        }
    count = max(0, min(int(count), 4096))
    chunk = values[max(0, start) : max(0, start) + count]
    return {"start": start, "values": [_json_number(v) for v in chunk.tolist()]}
