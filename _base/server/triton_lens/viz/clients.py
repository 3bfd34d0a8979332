"""Clients: what runs while a traced kernel runs. `Client` is the public base class; "tracer",
"sanitizer" and "profiler" are the three Triton-Viz clients.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import TextIO

import numpy as np

from ..model import LaunchTrace, TensorInfo
from ..model import elements as _elements


@dataclass
class LaunchInfo:
    """A launch about to run its programs: what `Client.on_launch_start` receives."""

    kernel: str  # the kernel function's name
    def_file: str  # where the kernel is defined (1-based line of its `def`)
    def_line: int
    file: str  # where it was launched from (1-based line)
    line: int
    grid: tuple[int, int, int]
    tensors: list[TensorInfo]  # the tensor arguments, in order (TensorInfo.index is the position)

    @property
    def n_programs(self) -> int:
        return int(self.grid[0] * self.grid[1] * self.grid[2])


@dataclass
class Access:
    """One execution of a `tl.load`/`tl.store`/atomic by one program (a loop body makes many).

    `tensor` is the tensor argument the pointer was derived from (None when it came from no tensor
    argument). Element indices are flat row-major indices into that tensor; `oob_offsets()` are
    element offsets from its first element of the lanes that would have left it (they are never
    dereferenced: the run goes on as if those lanes were masked).
    """

    launch: LaunchInfo
    kind: str  # "load" | "store" | "atomic"
    op: str  # what the kernel wrote: "tl.load", "tl.atomic_add", "block_ptr load", ...
    file: str
    line: int
    program: tuple[int, int, int]
    tensor: TensorInfo | None
    lanes: int  # elements of the pointer block
    active: int  # lanes whose mask was true
    oob: int  # active lanes outside the tensor
    _sets: tuple = field(default=(), repr=False)

    def elements(self) -> np.ndarray:
        """Flat indices of the tensor elements touched by the active, in-bounds lanes (sorted)."""
        return _elements.decode(*self._sets[0]) if self._sets else np.empty(0, np.int64)

    def masked_offsets(self) -> np.ndarray:
        return _elements.decode(*self._sets[1]) if self._sets else np.empty(0, np.int64)

    def oob_offsets(self) -> np.ndarray:
        return _elements.decode(*self._sets[2]) if self._sets else np.empty(0, np.int64)

    @property
    def bytes(self) -> int:
        return (self.active - self.oob) * (self.tensor.itemsize if self.tensor is not None else 0)


class Client:
    """Base class of a client: the callbacks a traced kernel's launches make. Override what you need.

    Example: count the bytes each launch stores, and stop at the first store through `out_ptr`
    by a program other than 0::

        import triton_lens as triton_viz

        class StoreCounter(triton_viz.Client):
            name = "store-counter"

            def on_launch_start(self, launch):          # LaunchInfo: kernel, grid, tensors
                self.stored = 0

            def on_access(self, access):                 # Access: one load/store by one program
                if access.kind == "store":
                    self.stored += access.bytes
                    if access.tensor.name == "out_ptr" and access.program != (0, 0, 0):
                        raise RuntimeError(f"{access.file}:{access.line}: program {access.program} "
                                           f"stored elements {access.elements()[:4]}...")

            def on_launch_end(self, trace):              # LaunchTrace: everything the launch did
                print(f"{trace.kernel}: {self.stored} bytes stored by {trace.n_programs} programs")

        @triton_viz.trace(StoreCounter())                # or stack: @trace("tracer") on top
        @triton.jit
        def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr): ...

    - `on_access` is called for every execution of every memory access, so it is only called when
      a client overrides it; leave it out when `on_launch_end` is enough (it sees the same data,
      columnar, in `trace`).
    - An exception raised by `on_access` or `on_launch_start` stops the launch and reaches the
      caller; one raised by `on_launch_end` reaches the caller after the launch finished (its
      outputs are written).
    - Launches that an autotuner makes only to time its configs are not reported.
    """

    name = "client"

    def on_launch_start(self, launch: LaunchInfo) -> None:
        """Called once per launch, after its arguments and grid are known, before any program runs."""

    def on_access(self, access: Access) -> None:
        """Called for each execution of a load/store/atomic, in program order."""

    def on_launch_end(self, trace: LaunchTrace) -> None:
        """Called once per launch, after its last program, with everything it recorded."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def overrides_on_access(client: Client) -> bool:
    return type(client).on_access is not Client.on_access


# -- the launches recorded for the viewer ------------------------------------------------------

launches: list[LaunchTrace] = []  # every launch the "tracer" client recorded, oldest first
sources: dict[str, str] = {}  # file -> text, kept when a launch is recorded (the viewer's source panel)
listeners: list = []  # called with no argument when `launches` changes (a running viewer refreshes)


def _changed() -> None:
    for f in list(listeners):
        try:
            f()
        except Exception:
            pass


def _keep_source(path: str) -> None:
    if not path or path in sources:
        return
    import linecache

    lines = linecache.getlines(path)
    if lines:
        sources[path] = "".join(lines)


def clear() -> None:
    """Forget every recorded launch (the list `launches` is emptied in place)."""
    del launches[:]
    sources.clear()
    _changed()


class Tracer(Client):
    """Records every launch for the viewer (`launch()`): the list `triton_lens.launches`."""

    name = "tracer"

    def on_launch_end(self, trace: LaunchTrace) -> None:
        trace.index = len(launches)
        launches.append(trace)
        _keep_source(trace.def_file)
        for s in trace.sites:
            _keep_source(s.file)
        _changed()


# -- shared helpers ------------------------------------------------------------------------------


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path


def _format_program(p: tuple[int, int, int], grid: tuple[int, int, int]) -> str:
    x, y, z = p
    if grid[2] > 1:
        return f"({x}, {y}, {z})"
    if grid[1] > 1:
        return f"({x}, {y})"
    return f"({x},)"


def _ranges(idx: np.ndarray, limit: int = 3) -> str:
    """Sorted distinct ints as '1000..1023, 2000' (at most `limit` runs)."""
    if idx.size == 0:
        return "none"
    runs = _elements.indices_to_runs(idx)
    parts = []
    for k in range(0, min(runs.size, 2 * limit), 2):
        s, n = int(runs[k]), int(runs[k + 1])
        parts.append(str(s) if n == 1 else f"{s}..{s + n - 1}")
    if runs.size > 2 * limit:
        parts.append("...")
    return ", ".join(parts)


def _analyze_one(trace: LaunchTrace):
    from ..analysis import analyze
    from ..model import OK, RunResult

    return analyze(RunResult(file=trace.def_file, status=OK, launches=[trace]))


# -- sanitizer -----------------------------------------------------------------------------------


class SanitizerError(RuntimeError):
    """Raised at the end of a launch in which the sanitizer found out-of-bounds accesses or races.
    `findings` holds them (triton_lens.model.Finding)."""

    def __init__(self, message: str, findings: list):
        super().__init__(message)
        self.findings = findings


class Sanitizer(Client):
    """Checks every access of every program. Out-of-bounds lanes are reported as they are found
    (file, line, program id, tensor, element offsets) and never touch memory: the launch goes on as
    if they were masked, so its outputs are computed. At the end of the launch it reports races
    between programs and, with `abort=True` (the default), raises `SanitizerError` if anything was
    wrong. `abort=False` only reports (`abort_on_error` is Triton-Viz's name for it). `races=False`
    skips the race check. `out`: where reports go (default: stderr).
    """

    name = "sanitizer"

    def __init__(
        self, abort: bool = True, races: bool = True, out: TextIO | None = None, abort_on_error: bool | None = None
    ):
        self.abort = abort if abort_on_error is None else bool(abort_on_error)
        self.races = races
        self.out = out
        self.reports: list[str] = []  # every line printed, for tests and notebooks
        self._seen: set = set()

    def _print(self, text: str) -> None:
        self.reports.append(text)
        print(text, file=self.out if self.out is not None else sys.stderr, flush=True)

    def on_launch_start(self, launch: LaunchInfo) -> None:
        self._seen = set()

    def on_access(self, a: Access) -> None:
        if a.oob == 0:
            return
        key = (a.file, a.line, a.kind, a.tensor.index if a.tensor is not None else -1)
        first = key not in self._seen
        self._seen.add(key)
        if not first:
            return  # one line per access site as it is found; the end-of-launch report has the totals
        t = a.tensor
        offs = a.oob_offsets()
        size = f"{t.numel} elements" if t is not None else "?"
        self._print(
            f"{_short(a.file)}:{a.line}: out-of-bounds {a.kind} of {t.name if t else '?'} ({size}) "
            f"by program {_format_program(a.program, a.launch.grid)} of {a.launch.kernel}: "
            f"{a.oob} lane{'s' if a.oob != 1 else ''} at element offsets {_ranges(offs)} "
            f"(masked off; not read or written)"
        )

    def on_launch_end(self, trace: LaunchTrace) -> None:
        result = _analyze_one(trace)
        kinds = ("oob", "race") if self.races else ("oob",)
        findings = [f for f in result.findings if f.kind in kinds and f.severity in ("error", "warning")]
        if not findings:
            return
        lines = []
        for f in findings:
            where = f"{_short(f.file)}:{f.line}"
            elems = (
                f"; elements {', '.join(str(e) for e in f.example_elements)}"
                if f.example_elements and str(f.example_elements[0]) not in f.message
                else ""
            )
            lines.append(f"{where}: {f.kind}: {f.message}{elems}")
        head = (
            f"triton-lens sanitizer: {trace.kernel} (grid {tuple(trace.grid)}): "
            f"{len(findings)} problem{'s' if len(findings) != 1 else ''}"
        )
        text = head + "\n" + "\n".join("  " + s for s in lines)
        if self.abort:
            self.reports.append(text)
            raise SanitizerError(text, findings)
        self._print(text)


# -- profiler ------------------------------------------------------------------------------------


def _fmt_bytes(n: int) -> str:
    if n == 0:
        return "-"
    if n < 10 << 20:
        return f"{n:,} B"
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n:,} B"


class Profiler(Client):
    """Prints per-line memory statistics at the end of each launch: bytes loaded and stored, mask
    activity (active lanes / lanes), unique elements and reuse (active in-bounds lanes per unique
    element), from every program (no sampling). `stats` keeps the rows of the last launch."""

    name = "profiler"

    def __init__(self, out: TextIO | None = None):
        self.out = out
        self.stats: list = []  # triton_lens.model.AccessStats of the last launch
        self.reports: list[str] = []

    def on_launch_end(self, trace: LaunchTrace) -> None:
        result = _analyze_one(trace)
        self.stats = list(result.accesses)
        self.performance = result.performance
        self.reports.append(self.format(trace, result.records, result.performance.launches))
        print(self.reports[-1], file=self.out if self.out is not None else sys.stdout, flush=True)

    @staticmethod
    def format(trace: LaunchTrace, records: list, launches: list | None = None) -> str:
        """One row per access of the launch's analysis (`records`: analysis.records.AccessRecord, its totals and
        sector efficiency); `launches` (analysis.performance.LaunchMetrics) add the launch's FLOPs,
        arithmetic intensity and roofline estimate."""
        head = (
            f"triton-lens profiler: {trace.kernel} grid={tuple(trace.grid)} ({trace.n_programs} programs, "
            f"{trace.seconds * 1e3:.1f} ms) launched at {_short(trace.file)}:{trace.line}"
        )
        cols = ("line", "access", "tensor", "loaded", "stored", "mask active", "sectors", "unique", "reuse", "oob")
        rows = []
        tot_ld = tot_st = 0
        for r in records:
            s, m = r.totals, r.perf
            loaded = s.bytes if s.kind == "load" else 0
            stored = s.bytes if s.kind in ("store", "atomic") else 0
            tot_ld += loaded
            tot_st += stored
            pct = 100.0 * s.active / s.lanes if s.lanes else 0.0
            inb = s.active - s.oob
            reuse = f"{inb / s.unique:.2f}" if s.unique else "-"
            file = "" if s.file == trace.def_file else f"{os.path.basename(s.file)}:"
            eff = m.sector_efficiency if m is not None else None
            rows.append(
                (
                    f"{file}{s.line}",
                    s.op,
                    s.arg,
                    _fmt_bytes(loaded),
                    _fmt_bytes(stored),
                    f"{s.active}/{s.lanes} ({pct:.0f}%)",
                    "-" if eff is None else f"{100 * eff:.1f}%",
                    str(s.unique),
                    reuse,
                    str(s.oob) if s.oob else "-",
                )
            )
        rows.append(("total", "", "", _fmt_bytes(tot_ld), _fmt_bytes(tot_st), "", "", "", "", ""))
        widths = [max(len(c), *(len(r[i]) for r in rows)) for i, c in enumerate(cols)]
        left = {1, 2}

        def fmt(r):
            return "  ".join(v.ljust(w) if i in left else v.rjust(w) for i, (v, w) in enumerate(zip(r, widths)))

        tail = _roofline_lines(launches[-1]) if launches else []
        return "\n".join([head, fmt(cols)] + [fmt(r) for r in rows] + tail)


def _roofline_lines(L) -> list[str]:
    from ..analysis.gpus import GPUS
    from ..analysis.performance import format_seconds

    ai = f"{L.intensity:.2f} FLOP/B" if L.intensity is not None else "-"
    est = ", ".join(
        f"{g.name} {format_seconds(L.roofline[k].seconds)} ({L.roofline[k].bound})" for k, g in GPUS.items()
    )
    work = f"tl.dot FLOPs {L.flops:,}, arithmetic intensity {ai}" if L.flops else "no tl.dot"
    return [
        f"DRAM >= {_fmt_bytes(L.dram_bytes)} (each touched 32-byte sector once), {work}",
        f"roofline estimate (peak bandwidth and FLOP/s, no launch overhead): {est}",
    ]


BUILTIN = {"tracer": Tracer, "sanitizer": Sanitizer, "profiler": Profiler}


def make_client(spec) -> Client:
    if spec is None:
        return Tracer()
    if isinstance(spec, Client):
        return spec
    if isinstance(spec, type) and issubclass(spec, Client):
        return spec()
    if isinstance(spec, str):
        cls = BUILTIN.get(spec.lower())
        if cls is None:
            raise ValueError(
                f"unknown client {spec!r}: use one of {', '.join(map(repr, BUILTIN))}, "
                "a triton_lens.Client instance, or None (the tracer)"
            )
        return cls()
    raise TypeError(
        f"client must be a name ({', '.join(BUILTIN)}), a triton_lens.Client or None, not {type(spec).__name__}"
    )
