"""More viewer data (docs/architecture.md, "Viewer data"): tensor values as a colour map with
histograms, tl.dot executions linked to the loads of their operands, and one launch's performance.
Loop steps and execution order ride in the access map itself (`access_map.py`).

Each function takes a RunResult and checked parameters and returns a JSON-ready dict; KeyError means
"no such launch / tensor". The viewer service (`viewer_service.py`) checks the requests' parameters,
calls these and caches their answers.
"""

from __future__ import annotations

import base64
import math
from typing import Any

import numpy as np

from ..model import LaunchTrace, RunResult
from .access_map import _launch
from .groups import group_executions, program_label
from .index_text import format_ranges
from .performance import line_metrics
from .performance import performance as _performance

# Colour cells sent per tensor at most (44 KB of base64): three 1M-element tensors with their maps stay
# under 256 KB on the wire; beyond it, each cell is the mean of neighbouring elements (flat order).
VALUE_CELLS = 1 << 15
HIST_BINS = 32
DOT_EXECUTIONS = 4096  # tl.dot executions listed at most per launch
TILE_CELLS = 128  # a tl.dot tile's drawing, cells per side at most (the page draws a tile in 96 px)


def _widened(a: np.ndarray) -> np.ndarray:
    """a's values as float64 for drawing. A signalling NaN (a torch.empty buffer can hold one) raises the
    FPU's invalid flag when widened, which numpy would report as a warning in the server's log: it is
    still a NaN, drawn as one."""
    with np.errstate(invalid="ignore"):
        return a.astype(np.float64, copy=False)


def _finite_range(v: np.ndarray) -> tuple[float, float]:
    f = v[np.isfinite(v)]
    if f.size == 0:
        return 0.0, 0.0
    return float(f.min()), float(f.max())


def _histogram(v: np.ndarray) -> dict[str, Any]:
    f = v[np.isfinite(v)]
    lo, hi = _finite_range(v)
    counts = (
        np.histogram(f, bins=HIST_BINS, range=(lo, hi if hi > lo else lo + 1))[0] if f.size else np.zeros(HIST_BINS)
    )
    return {
        "lo": lo,
        "hi": hi,
        "counts": [int(c) for c in counts],
        "elements": int(v.size),
        "nonfinite": int(v.size - f.size),
    }


def _sample_mask(mask: np.ndarray, t_shape: list[int], steps: tuple[int, int] | None) -> np.ndarray:
    """A mask over the full tensor's flat elements, at the positions of the sample of `steps`."""
    if steps is None:
        return mask
    cols = int(t_shape[-1]) if t_shape else 1
    return mask.reshape(-1, cols)[:: steps[0], :: steps[1]].reshape(-1)


def value_map(result: RunResult, launch: int, tensor: int, when: str = "after") -> dict[str, Any]:
    """The tensor's values (after the launch, or before it for inputs) quantised to 0..254 over
    [lo, hi] (255: NaN/inf), one per `block` consecutive flat elements (their mean; [lo, hi] is the range
    of these cells, the tensor's own colour scale), plus per source
    line that accessed the tensor the histogram of the values of the elements it touched.

    A tensor over the recorder's value limit has a sample of its values (LaunchTrace.value_steps):
    1 in `rows_step` rows x 1 in `cols_step` columns, `sample_cols` columns per sampled row; the cells
    (and the range and histograms) are then of the sample's flat order."""
    L = _launch(result, launch)
    if not 0 <= tensor < len(L.tensors):
        raise KeyError(f"launch {launch} has no tensor {tensor}")
    store = L.values_before if when == "before" else L.values
    v = store.get(tensor)
    t = L.tensors[tensor]
    if v is None:
        why = "values were not kept for this run" if t.numel > 0 else "empty tensor"
        return {"when": when, "values": None, "reason": why}
    steps = L.value_steps.get(tensor)
    v = _widened(np.asarray(v)).reshape(-1)
    n = v.size
    block = max(1, math.ceil(n / VALUE_CELLS))
    if block > 1:
        pad = (-n) % block
        vv = np.concatenate((v, np.full(pad, np.nan))) if pad else v
        with np.errstate(invalid="ignore"):
            cells = np.nanmean(np.where(np.isfinite(vv), vv, np.nan).reshape(-1, block), axis=1)
    else:
        cells = v
    # the colour scale is the tensor's own, over the cells drawn: with blocks, over their means (the
    # extremes of single elements would squeeze the means of a wide tensor into a few middle colours)
    lo, hi = _finite_range(cells)
    span = hi - lo
    q = np.full(cells.size, 255, dtype=np.uint8)
    ok = np.isfinite(cells)
    q[ok] = np.clip(np.round((cells[ok] - lo) / span * 254) if span > 0 else 127, 0, 254).astype(np.uint8)
    hists: dict[str, list[np.ndarray]] = {}  # "file\nline" -> the rows of its executions
    for i, s in enumerate(L.sites):
        if s.arg != tensor:
            continue
        key = f"{s.file}\n{s.line}"
        rows = np.flatnonzero(L.ex_site == i)
        hists.setdefault(key, []).append(rows)
    histograms = []
    for key, parts in hists.items():
        full = L.touched.cover(np.concatenate(parts), t.numel if steps else n)
        mask = _sample_mask(full, list(t.shape), steps)
        file, line = key.split("\n")
        h = dict(_histogram(v[mask]), file=file, line=int(line))
        if steps:
            h["touched"] = int(np.count_nonzero(full))  # the elements the line touched; `elements`: of the sample
        histograms.append(h)
    out = {
        "when": when,
        "dtype": t.dtype,
        "numel": t.numel if steps else n,
        "lo": lo,
        "hi": hi,
        "block": block,
        "cells": int(q.size),
        "q": base64.b64encode(q.tobytes()).decode("ascii"),
        "histograms": histograms,
        "before": tensor in L.values_before,
        "after": tensor in L.values,
    }
    if steps:
        cols = int(t.shape[-1]) if t.shape else 1
        out.update(rows_step=steps[0], cols_step=steps[1], sample_cols=-(-cols // steps[1]), sampled=n)
    return out


def _iterations(site: np.ndarray, program: np.ndarray) -> np.ndarray:
    """Per row, how many rows with the same (site, program) came before it."""
    key = site.astype(np.int64) * (1 << 32) + program.astype(np.int64)
    order = np.argsort(key, kind="stable")
    k = key[order]
    heads = np.concatenate(([True], k[1:] != k[:-1]))
    start = np.maximum.accumulate(np.where(heads, np.arange(k.size), 0))
    out = np.empty(k.size, dtype=np.int64)
    out[order] = np.arange(k.size) - start
    return out


def dots(result: RunResult, launch: int) -> dict[str, Any]:
    """Every tl.dot execution: program, iteration (its count within the program), M x N x K, and
    the A and B tiles: the loads whose values the dot took (the recorder tags each loaded value with
    its execution), with the elements they touched; an operand computed in the kernel has none."""
    L = _launch(result, launch)
    d = L.dots
    ex_iter = _iterations(L.ex_site, L.ex_program) if L.ex_site.size else np.empty(0, dtype=np.int64)
    dot_iter = _iterations(d.site, d.program) if len(d) else np.empty(0, dtype=np.int64)
    kept = np.zeros(len(d), dtype=bool)
    kept[d.tile_row[d.tile_row < len(d)]] = True
    out = []
    for r in range(min(len(d), DOT_EXECUTIONS)):
        p = int(d.program[r])
        m, n, k = int(d.m[r]), int(d.n[r]), int(d.k[r])
        a_row, b_row = int(d.a_row[r]), int(d.b_row[r])
        a, b = (None if a_row < 0 else a_row), (None if b_row < 0 else b_row)
        out.append(
            {
                "site": int(d.site[r]),
                "program": list(program_label(L, p)),
                "linear": p,
                "iteration": int(dot_iter[r]),
                "m": m,
                "n": n,
                "k": k,
                "a": _operand(L, a, ex_iter, (m, k)),
                "b": _operand(L, b, ex_iter, (k, n)),
                "c": [m, n],
                "values": bool(kept[r]),
            }
        )
    return {
        "launch": L.index,
        "sites": [dict(s.to_json(), id=i) for i, s in enumerate(d.sites)],
        "executions": out,
        "truncated": len(d) > DOT_EXECUTIONS,
    }


def dot_tiles(result: RunResult, launch: int, execution: int) -> dict[str, Any]:
    """The values of one tl.dot execution's A, B and C tiles (C: the result, acc + A @ B as the GPU
    computes it), each as colour levels over its own range: `q` one byte a cell (0..254 from lo to hi,
    255 NaN or inf), a cell the mean of block[0] x block[1] values when the tile has more than
    TILE_CELLS a side. `kept` false (and `why`) when the run did not keep them (dot_tiles.py)."""
    L = _launch(result, launch)
    d = L.dots
    if not 0 <= execution < len(d):
        raise KeyError(f"launch {launch} has no tl.dot execution {execution} (it has {len(d)})")
    tiles = d.tiles(execution)
    if tiles is None:
        return {"execution": execution, "kept": False, "why": _tiles_why(L, execution)}
    return {"execution": execution, "kept": True, **{k: _tile(t) for k, t in zip("abc", tiles)}}


def _tiles_why(L: LaunchTrace, r: int) -> str:
    d = L.dots
    kept = sorted(set(d.program[d.tile_row].tolist())) if d.tile_row.size else []
    if d.sites[int(d.site[r])].a_dtype.startswith("fp8"):
        return "fp8 tiles' values are not kept"
    if not kept:
        return "values not kept for this launch's tl.dot (a batched or non-float dot)"
    lo, hi = kept[0], kept[-1]
    names = f"program {lo}" if lo == hi else f"programs {lo}-{hi}"
    return f"values kept for {names} only (8 MB a launch): pick one of them"


def _tile(t: np.ndarray) -> dict[str, Any]:
    r, c = t.shape
    br, bc = -(-r // TILE_CELLS), -(-c // TILE_CELLS)
    v = _widened(t)
    if br > 1 or bc > 1:
        pr, pc = -(-r // br) * br, -(-c // bc) * bc
        padded = np.full((pr, pc), np.nan)
        padded[:r, :c] = v
        blocks = padded.reshape(pr // br, br, pc // bc, bc)
        with np.errstate(all="ignore"):
            finite = np.isfinite(blocks)
            v = np.where(finite, blocks, 0).sum(axis=(1, 3)) / np.maximum(finite.sum(axis=(1, 3)), 1)
            v[~finite.any(axis=(1, 3))] = np.nan
    lo, hi = _finite_range(v)
    with np.errstate(all="ignore"):
        level = np.clip(np.round((v - lo) / (hi - lo) * 254), 0, 254) if hi > lo else np.zeros(v.shape)
    q = np.where(np.isfinite(v), level, 255).astype(np.uint8)
    return {
        "shape": [int(r), int(c)],
        "cells": [int(q.shape[0]), int(q.shape[1])],
        "block": [int(br), int(bc)],
        "lo": lo,
        "hi": hi,
        "q": base64.b64encode(q.tobytes()).decode("ascii"),
    }


def _operand(L: LaunchTrace, row: int | None, ex_iter: np.ndarray, shape: tuple[int, int]) -> dict[str, Any] | None:
    if row is None:
        return {"shape": list(shape), "linked": False, "why": "computed in the kernel (not the value of a load)"}
    s = L.sites[int(L.ex_site[row])]
    t = L.tensors[s.arg] if s.arg >= 0 else None
    touched = L.touched.get(row)
    return {
        "shape": list(shape),
        "linked": True,
        "file": s.file,
        "line": s.line,
        "op": s.op,
        "tensor": s.arg,
        "name": t.name if t else "?",
        "iteration": int(ex_iter[row]),
        "extent": format_ranges(t.name, t.shape, touched) if t else "",
        "elements": int(touched.size),
    }


def launch_performance(result: RunResult, launch: int) -> dict[str, Any]:
    """analysis.performance of one launch alone (lines, tl.dot lines, the launch, the GPU table)."""
    L = _launch(result, launch)
    one = RunResult(file=result.file, status=result.status, launches=[L])
    return _performance(one, line_metrics(group_executions([L]))).to_json()
