"""Performance metrics from the recorded element sets: what a GPU's memory system would see.

Per source access (file, line, tensor, kind), summed over launches:
- bytes requested: active in-bounds lanes x itemsize;
- mask efficiency: active lanes / lanes;
- sector efficiency: bytes requested / bytes of the 32-byte sectors they fall in, per execution (the
  coalescing a GPU sees for one load/store instruction of one program); the tensor's first element is
  taken as 32-byte aligned (torch's allocations are);
- reuse: active in-bounds lanes per unique element, across programs (what L2 must absorb);
- the typical contiguous run and the distance between runs, in storage, for the explanation.
Per tl.dot line: FLOPs (2·M·N·K per execution). Per launch: bytes requested, a DRAM lower bound (each
touched 32-byte sector moved once per direction), FLOPs, arithmetic intensity, and a roofline estimate
of the time on each GPU of `gpus.GPUS`, memory- or compute-bound.

Pure functions over model arrays; never one Python object per element.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..model import Finding, LaunchTrace, RunResult, TensorInfo
from ..model.elements import RANGE
from .gpus import GPUS, precision
from .groups import Group, Key

SECTOR = 32  # bytes: the unit a GPU's L1/L2 moves to and from DRAM
LOW_SECTOR_EFFICIENCY = 0.25  # below this an information diagnostic explains the stride
_SAMPLE_ELEMENTS = 1 << 22  # strided (non-contiguous) tensors: elements decoded per access, at most


def _contiguous(t: TensorInfo) -> bool:
    expect = 1
    for size, stride in reversed(list(zip(t.shape, t.strides))):
        if size != 1 and stride != expect:
            return False
        expect *= size
    return True


def storage_offsets(t: TensorInfo, flat: np.ndarray) -> np.ndarray:
    """Element offsets in storage (from the tensor's first element) of flat row-major indices."""
    if _contiguous(t) or flat.size == 0:
        return flat
    idx = np.unravel_index(flat, tuple(int(s) for s in t.shape))
    out = np.zeros(flat.size, dtype=np.int64)
    for i, st in zip(idx, t.strides):
        out += i.astype(np.int64) * int(st)
    return out


def _storage_runs(L: LaunchTrace, rows: np.ndarray, t: TensorInfo) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """(row, start, length) of the contiguous storage runs each execution touched, sorted by row and
    start, in elements; plus whether the executions were sampled."""
    if _contiguous(t):
        r, s, n = L.touched.runs(rows)
        order = np.lexsort((s, r))
        return r[order], s[order], n[order], False
    total = np.cumsum(L.touched.count[rows].astype(np.int64))
    sampled = bool(total.size and total[-1] > _SAMPLE_ELEMENTS)
    if sampled:
        rows = rows[: max(1, int(np.searchsorted(total, _SAMPLE_ELEMENTS)))]
    parts = L.touched.gather(rows)
    # gather() returns RANGE rows first (as one array), then one array per other row: rebuild row ids.
    kinds = L.touched.kind[rows]
    rr = rows[kinds == RANGE]
    ids = []
    if rr.size:
        ids.append(np.repeat(rr, L.touched.count[rr]))
    for i in rows[kinds != RANGE]:
        if L.touched.count[i] > 0 and int(L.touched.kind[i]) != 0:
            ids.append(np.full(int(L.touched.count[i]), i, dtype=np.int64))
    if not parts:
        e = np.empty(0, dtype=np.int64)
        return e, e, e, sampled
    flat = np.concatenate(parts)
    row = np.concatenate(ids)
    off = storage_offsets(t, flat)
    order = np.lexsort((off, row))
    row, off = row[order], off[order]
    head = np.ones(off.size, dtype=bool)
    head[1:] = (row[1:] != row[:-1]) | (off[1:] != off[:-1] + 1)
    starts = np.flatnonzero(head)
    lengths = np.diff(np.append(starts, off.size))
    return row[starts], off[starts], lengths, sampled


@dataclass
class SectorStats:
    requested: int = 0  # bytes
    sectors: int = 0  # 32-byte sectors, summed over executions
    run_bytes: float = 0.0  # median contiguous run, bytes
    gap_bytes: float = 0.0  # median distance between the starts of neighbouring runs, bytes (0: one run)
    sampled: bool = False

    @property
    def efficiency(self) -> float | None:
        return self.requested / (self.sectors * SECTOR) if self.sectors else None


def sector_stats(L: LaunchTrace, rows: np.ndarray, t: TensorInfo) -> SectorStats:
    row, start, length, sampled = _storage_runs(L, rows, t)
    out = SectorStats(sampled=sampled)
    if row.size == 0:
        return out
    isz = t.itemsize
    s0 = (start * isz) // SECTOR
    s1 = ((start + length) * isz - 1) // SECTOR
    same_row = row[1:] == row[:-1]
    shared = same_row & (s0[1:] == s1[:-1])  # a sector split between two runs of one execution
    out.requested = int(length.sum()) * isz
    out.sectors = int((s1 - s0 + 1).sum() - shared.sum())
    out.run_bytes = float(np.median(length)) * isz
    gaps = (start[1:] - start[:-1])[same_row]
    out.gap_bytes = float(np.median(gaps)) * isz if gaps.size else 0.0
    return out


@dataclass
class LineMetrics:
    """Per source access, summed over launches."""

    file: str
    line: int
    arg: str
    kind: str
    op: str
    dtype: str = ""
    itemsize: int = 0
    lanes: int = 0
    active: int = 0
    requested: int = 0  # bytes
    sectors: int = 0
    unique: int = 0  # elements, per launch, summed
    run_bytes: float = 0.0
    gap_bytes: float = 0.0
    sampled: bool = False
    executions: int = 0
    col: int = -1  # the call's column range (the diagnostic's range)
    end_line: int = 0
    end_col: int = -1

    @property
    def mask_efficiency(self) -> float | None:
        return self.active / self.lanes if self.lanes else None

    @property
    def sector_efficiency(self) -> float | None:
        return self.requested / (self.sectors * SECTOR) if self.sectors else None

    @property
    def reuse(self) -> float | None:
        return (self.requested / self.itemsize) / self.unique if self.unique and self.itemsize else None

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "arg": self.arg,
            "kind": self.kind,
            "op": self.op,
            "dtype": self.dtype,
            "bytes": self.requested,
            "sector_bytes": self.sectors * SECTOR,
            "mask_efficiency": _round(self.mask_efficiency),
            "sector_efficiency": _round(self.sector_efficiency),
            "reuse": _round(self.reuse),
            "run_bytes": self.run_bytes,
            "stride_bytes": self.gap_bytes,
            "sampled": self.sampled,
        }


@dataclass
class DotMetrics:
    file: str
    line: int
    executions: int
    shape: tuple[int, int, int]  # M, N, K of the first execution
    a_dtype: str
    b_dtype: str
    precision: str
    flops: int
    launches: list[int] = field(default_factory=list)  # indices of the launches that ran it

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "launches": list(self.launches),
            "executions": self.executions,
            "m": self.shape[0],
            "n": self.shape[1],
            "k": self.shape[2],
            "a_dtype": self.a_dtype,
            "b_dtype": self.b_dtype,
            "precision": self.precision,
            "flops": self.flops,
        }


@dataclass
class Roofline:
    gpu: str
    seconds: float
    memory_seconds: float
    compute_seconds: float

    @property
    def bound(self) -> str:
        return "compute" if self.compute_seconds > self.memory_seconds else "memory"

    def to_json(self) -> dict[str, Any]:
        return {
            "gpu": self.gpu,
            "seconds": self.seconds,
            "memory_seconds": self.memory_seconds,
            "compute_seconds": self.compute_seconds,
            "bound": self.bound,
        }


@dataclass
class LaunchMetrics:
    index: int
    kernel: str
    requested: int  # bytes, all accesses
    dram_bytes: int  # lower bound: every touched sector once per direction
    flops: int
    flops_by_precision: dict[str, int] = field(default_factory=dict)
    roofline: dict[str, Roofline] = field(default_factory=dict)  # gpu key -> Roofline

    @property
    def intensity(self) -> float | None:
        return self.flops / self.dram_bytes if self.dram_bytes else None

    def to_json(self) -> dict[str, Any]:
        return {
            "launch": self.index,
            "kernel": self.kernel,
            "bytes": self.requested,
            "dram_bytes": self.dram_bytes,
            "flops": self.flops,
            "intensity": _round(self.intensity),
            "roofline": {k: r.to_json() for k, r in self.roofline.items()},
        }


@dataclass
class Performance:
    lines: list[LineMetrics]
    dots: list[DotMetrics]
    launches: list[LaunchMetrics]

    def line(self, file: str, line: int) -> list[LineMetrics]:
        return [m for m in self.lines if m.line == line and m.file == file]

    def to_json(self) -> dict[str, Any]:
        return {
            "gpus": [g.to_json() for g in GPUS.values()],
            "lines": [m.to_json() for m in self.lines],
            "dots": [d.to_json() for d in self.dots],
            "launches": [m.to_json() for m in self.launches],
        }


def _round(v: float | None) -> float | None:
    return None if v is None else round(float(v), 4)


def line_metrics(groups: dict[Key, Group]) -> dict[Key, LineMetrics]:
    """Each access's metrics by its group's key (the access records take theirs from here), in the order
    of (file, line, arg, kind)."""
    out = {}
    for (file, line, arg, kind), g in sorted(groups.items(), key=lambda kv: kv[0]):
        m = LineMetrics(
            file=file,
            line=line,
            arg=arg,
            kind=kind,
            op=g.first.op,
            col=g.first.col,
            end_line=g.first.end_line,
            end_col=g.first.end_col,
        )
        runs, gaps = [], []
        for part in g.parts:
            L, rows = part.launch, part.rows
            if rows.size == 0:
                continue
            m.lanes += int(L.ex_lanes[rows].sum(dtype=np.int64))
            m.executions += int(rows.size)
            m.active += int(L.ex_active[rows].sum(dtype=np.int64))
            t_index = L.sites[part.sites[0]].arg
            if t_index < 0:
                continue
            t = L.tensors[t_index]
            m.dtype, m.itemsize = t.dtype, t.itemsize
            s = sector_stats(L, rows, t)
            m.requested += s.requested
            m.sectors += s.sectors
            m.sampled |= s.sampled
            runs.append(s.run_bytes)
            gaps.append(s.gap_bytes)
            m.unique += int(np.count_nonzero(L.touched.cover(rows, t.numel)))
        if runs:
            m.run_bytes, m.gap_bytes = runs[0], gaps[0]
        out[g.key] = m
    return out


def dot_metrics(launches: list[LaunchTrace]) -> list[DotMetrics]:
    by_line: dict[tuple[str, int], DotMetrics] = {}
    for L in launches:
        d = L.dots
        for i, s in enumerate(d.sites):
            rows = np.flatnonzero(d.site == i)
            if rows.size == 0:
                continue
            key = (s.file, s.line)
            m = by_line.get(key)
            if m is None:
                r = int(rows[0])
                m = by_line[key] = DotMetrics(
                    s.file,
                    s.line,
                    0,
                    (int(d.m[r]), int(d.n[r]), int(d.k[r])),
                    s.a_dtype,
                    s.b_dtype,
                    precision(s.a_dtype, s.b_dtype, s.precision),
                    0,
                )
            m.executions += int(rows.size)
            m.flops += d.flops(rows)
            if L.index not in m.launches:
                m.launches.append(L.index)
    return sorted(by_line.values(), key=lambda m: (m.file, m.line))


def _sectors_of(t: TensorInfo, mask: np.ndarray) -> int:
    """Distinct 32-byte sectors holding the elements set in a mask over the tensor."""
    if _contiguous(t) and SECTOR % t.itemsize == 0:
        per = SECTOR // t.itemsize  # elements per sector: count the sectors with any element set
        pad = (-mask.size) % per
        m = np.ascontiguousarray(np.concatenate((mask, np.zeros(pad, dtype=bool))) if pad else mask)
        # A sector's flags read as one integer (8 one-byte flags: a uint64), nonzero when any is set: an
        # any() along a short axis walked them one by one (6 ms for 9.4 M elements, now under 1).
        if per in (1, 2, 4, 8):
            return int(np.count_nonzero(m.view(f"u{per}")))
        if per % 8 == 0:
            return int(np.count_nonzero(np.bitwise_or.reduce(m.view(np.uint64).reshape(-1, per // 8), axis=1)))
        return int(np.count_nonzero(m.reshape(-1, per).any(axis=1)))
    flat = np.flatnonzero(mask).astype(np.int64)
    if flat.size == 0:
        return 0
    return int(np.unique(storage_offsets(t, flat) * t.itemsize // SECTOR).size)


def launch_metrics(L: LaunchTrace) -> LaunchMetrics:
    requested = 0
    dram = 0
    for ti, t in enumerate(L.tensors):
        site_ids = [i for i, s in enumerate(L.sites) if s.arg == ti]
        if not site_ids:
            continue
        for kinds in (("load", "atomic"), ("store", "atomic")):  # reads, then writes (an atomic does both)
            ids = [i for i in site_ids if L.sites[i].kind in kinds]
            rows = np.flatnonzero(np.isin(L.ex_site, ids))
            if rows.size:
                dram += _sectors_of(t, L.touched.cover(rows, t.numel)) * SECTOR
        rows = np.flatnonzero(np.isin(L.ex_site, site_ids))
        requested += int((L.ex_active[rows].astype(np.int64) - L.ex_oob[rows]).sum()) * t.itemsize
    by_prec: dict[str, int] = {}
    for i, s in enumerate(L.dots.sites):
        rows = np.flatnonzero(L.dots.site == i)
        p = precision(s.a_dtype, s.b_dtype, s.precision)
        by_prec[p] = by_prec.get(p, 0) + L.dots.flops(rows)
    flops = sum(by_prec.values())
    m = LaunchMetrics(L.index, L.kernel, requested, dram, flops, by_prec)
    for key, g in GPUS.items():
        t_mem = dram / g.bandwidth
        t_cmp = sum(f / g.flops[p] for p, f in by_prec.items())
        m.roofline[key] = Roofline(key, max(t_mem, t_cmp), t_mem, t_cmp)
    return m


def performance(result: RunResult, lines: dict[Key, LineMetrics]) -> Performance:
    """`lines`: line_metrics of the run's groups."""
    return Performance(list(lines.values()), dot_metrics(result.launches), [launch_metrics(L) for L in result.launches])


from .text import format_bytes  # noqa: E402
from .text import format_seconds as format_seconds  # noqa: E402  (re-exported: the viewer's profiler client imports it from here)


def explain_stride(m: LineMetrics) -> str:
    """Why the sectors are mostly wasted, in storage terms: run length and the distance between runs."""
    run = f"contiguous runs of {format_bytes(m.run_bytes)}"
    if m.itemsize and m.run_bytes == m.itemsize:
        run = f"single {m.dtype} elements ({m.itemsize} B)"
    if m.gap_bytes and m.itemsize:
        stride = m.gap_bytes / m.itemsize
        return (
            f"{run} {format_bytes(m.gap_bytes)} apart (a stride of {stride:.0f} elements), so each 32-byte "
            f"sector fetched carries {format_bytes(m.run_bytes if m.run_bytes < SECTOR else SECTOR)} the program uses"
        )
    return f"{run}, each in its own 32-byte sector"


def sector_findings(perf: Performance) -> list[Finding]:
    """An information diagnostic on each access whose sector efficiency is below 25%, when its
    executions touch at least a sector's worth of elements each (a scalar load or store per program
    cannot do better, and there is nothing to fix)."""
    out = []
    for m in perf.lines:
        eff = m.sector_efficiency
        if eff is None or eff >= LOW_SECTOR_EFFICIENCY or not m.itemsize or not m.executions:
            continue
        if m.requested / m.executions < SECTOR:
            continue
        verb = {"load": "reads", "store": "writes", "atomic": "updates"}.get(m.kind, m.kind)
        msg = (
            f"{m.op} {verb} `{m.arg}` with {eff * 100:.1f}% sector efficiency: each execution touches "
            f"{explain_stride(m)}. Make the tensor's contiguous (stride-1) dimension the one that "
            f"neighbouring lanes walk along (index it with the tile's `tl.arange` over the last axis, or "
            f"pass a transposed/contiguous copy) so a 32-byte sector serves 32 bytes of lanes."
        )
        out.append(
            Finding.at(
                m,
                kind="uncoalesced",
                severity="information",
                message=msg,
                arg=m.arg,
                access=m.kind,
            )
        )
    return out
