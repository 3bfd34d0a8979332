"""The recorder: hooks into the interpreter for one run and records every memory access.

For each execution of a load/store/atomic it keeps the program id, the lane counts and three
compact element sets (touched, masked-off, out of bounds). Out-of-bounds lanes are removed from
the mask before the interpreter sees it, so they never touch memory.

    with Recorder(on_launch=callback) as rec:   # hooks installed for the block, removed after
        kernel[grid](...)
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from types import CodeType, FrameType
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

import numpy as np

from ...model import (
    TILE_VALUES_LIMIT,
    AccessEvent,
    DotSite,
    DotTrace,
    LaunchStart,
    LaunchTrace,
    Site,
    TensorInfo,
    value_sample_steps,
)
from ...model.elements import RANGE, ElementSets, ElementSetsBuilder, encode
from ..interpreter import compat
from ..interpreter import fp8 as _fp8
from ..interpreter import tf32 as _tf32
from . import progressive as _progressive
from .dot_tiles import TileKeeper, tile_values
from .rows import row_crossings
from .tensors import TensorView, views_not_written, written_args

if TYPE_CHECKING:  # torch and the size check are imported only where a run uses them
    import torch

    from .host_writes import HostWrites
    from .size_model import TensorSpec
    from .size_probe import Budget, Overflow, SizeCheck

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_SKIP_DIRS = (compat.TRITON_DIR, _PACKAGE_DIR)

# Values of tensors are kept after each launch for the viewer, up to this many elements; a larger tensor
# keeps a sample of 1 in s rows x 1 in s columns (model.value_sample_steps) of at most this many.
DEFAULT_VALUE_LIMIT = 1 << 20
RUN_TILE_VALUES = 8 * TILE_VALUES_LIMIT  # tl.dot tile values a run keeps over all its launches (64 MB)

# A site's key: the user frame's (code, bytecode offset; None, 0 where there is none), the argument, kind, op.
SiteKey = tuple[CodeType | None, int, int, str, str]
DotKey = tuple[CodeType, int] | None  # a tl.dot site's (code, bytecode offset); None: no user frame
# An atomic's (sem, scope) as the builder gets them: triton's enums (or strings) on every release.
Order = tuple[object, object]


# triton's interpreter objects are untyped; these Protocols name the parts of them the recorder reads.
class Handle(Protocol):
    """An interpreter TensorHandle: a tile's lanes (pointers, mask or values) as a numpy array."""

    data: np.ndarray


class Builder(Protocol):
    """The interpreter's builder: the running program's (x, y, z), the same in every release."""

    grid_idx: tuple[int, int, int]


class _Tuning(TypedDict):
    """An autotuner run in progress: the (label, rank) of each config tried, and whether a launch kept one."""

    trials: list[tuple[str, int]]
    kept: bool


class _Probe(TypedDict):
    """A size-check re-launch in flight (size_probe.py): its virtual tensors, budget and overflows seen."""

    tensors: dict[str, TensorSpec]
    budget: Budget
    overflows: list[Overflow]


def _dtype_name(t: torch.Tensor) -> str:
    return str(t.dtype).replace("torch.", "")


def _add_empty(b: ElementSetsBuilder) -> None:
    b.kinds.append(0)
    b.los.append(0)
    b.counts.append(0)
    b.chunks.append(b"")


class _Context:
    __slots__ = ("kind", "op", "tag")

    def __init__(self, kind: str, op: str, tag: int | None) -> None:
        self.kind, self.op, self.tag = kind, op, tag


def _live_tensor_storage() -> np.ndarray:
    """[lo, hi) byte ranges of the storage of every torch tensor alive in the process: the memory a
    pointer made from an integer may legitimately reach. Built once per launch, only when such a
    pointer leaves every argument."""
    import gc

    torch = sys.modules.get("torch")
    out = []
    if torch is not None:
        for o in gc.get_objects():
            if isinstance(o, torch.Tensor):
                try:
                    st = o.untyped_storage()
                    lo = st.data_ptr()
                    if lo and st.nbytes():
                        out.append((lo, lo + st.nbytes()))
                except Exception:  # noqa: BLE001 - meta, sparse or otherwise storage-less tensors
                    continue
    return np.array(sorted(set(out)), dtype=np.int64).reshape(-1, 2)


class _Launch:
    """A launch being recorded (mutable, hot path); `finish()` freezes it into a LaunchTrace."""

    def __init__(self, index: int, fn: Any, file: str, line: int):  # fn: triton's (untyped) kernel object
        self.index = index
        self.kernel, self.def_file, self.def_line = compat.kernel_def(fn)
        self.file, self.line = file, line
        self.grid = (1, 1, 1)
        self.running = False  # the grid loop has begun (arguments are converted before it)
        self.scratch_site: dict[str, Any] | None = None  # an in-kernel descriptor with no allocator set
        self.views: list[TensorView] = []
        self.by_id: dict[int, int] = {}
        self.site_index: dict[SiteKey, int] = {}
        self.sites: list[Site] = []
        self.ex_site: list[int] = []
        self.ex_program: list[int] = []
        self.ex_lanes: list[int] = []
        self.ex_active: list[int] = []
        self.ex_oob: list[int] = []
        self.ex_vhash: list[int] = []
        self.ex_overrun: list[int] = []
        self.unwritten_before: dict[int, np.ndarray] = {}
        self.touched = ElementSetsBuilder()
        self.masked = ElementSetsBuilder()
        self.oob = ElementSetsBuilder()
        self.dot_sites: list[DotSite] = []
        self.dot_site_index: dict[DotKey, int] = {}
        self.dots: list[tuple[int, ...]] = []  # site, program, a_row, b_row, m, n, k
        self.dot_dev: list[tuple[float, float]] = []  # per dot: TF32 deviation, largest |product| (-1: n/a)
        self.tiles = TileKeeper()  # the tile values of the first programs' dots (dot_tiles.py)
        self.values_before: dict[int, np.ndarray] = {}
        self.value_steps: dict[int, tuple[int, int]] = {}  # tensors whose values are a sample: its steps
        self.t0 = time.perf_counter()
        self.live: np.ndarray | None = None  # (n, 2) storage [lo, hi) of the script's live tensors
        self.flushed = False  # sent already, cut short at the time limit
        self.frame: FrameType | None = None  # the launch statement's frame (the size check reads its grid)
        self.trace: LaunchTrace | None = None  # what finish() made of it
        self.autotune: dict[str, Any] | None = None  # an autotuner's trial, or the launch it kept

    def finish(self, complete: bool, value_limit: int) -> LaunchTrace:
        ex_site = np.asarray(self.ex_site, dtype=np.int32)
        ex_active = np.asarray(self.ex_active, dtype=np.int32)
        unwritten = views_not_written(self.views, written_args(self.sites, ex_site, ex_active))
        values: dict[int, np.ndarray] = {}
        for v in self.views:
            t = v.tensor
            if t is None or v.numel == 0 or value_limit <= 0:
                continue
            before = self.values_before.get(v.info.index)
            if before is not None and v.info.index in unwritten:  # its values before are its values after
                values[v.info.index] = before
                continue
            try:
                values[v.info.index] = _host_values(t, value_limit, self.value_steps, v.info.index)
            except Exception:  # values are a convenience for the viewer; never fail a launch on them
                pass
        return LaunchTrace(
            index=self.index,
            kernel=self.kernel,
            def_file=self.def_file,
            def_line=self.def_line,
            file=self.file,
            line=self.line,
            grid=self.grid,
            tensors=[v.info for v in self.views],
            sites=self.sites,
            ex_site=ex_site,
            ex_program=np.asarray(self.ex_program, dtype=np.int32),
            ex_lanes=np.asarray(self.ex_lanes, dtype=np.int32),
            ex_active=ex_active,
            ex_oob=np.asarray(self.ex_oob, dtype=np.int32),
            ex_vhash=np.asarray(self.ex_vhash, dtype=np.int64),
            ex_overrun=np.asarray(self.ex_overrun, dtype=np.int32),
            unwritten_before=self.unwritten_before,
            touched=self.touched.finish(),
            masked=self.masked.finish(),
            oob=self.oob.finish(),
            values=values,
            seconds=time.perf_counter() - self.t0,
            complete=complete,
            dots=self._dot_trace(),
            values_before=self.values_before,
            value_steps={i: st for i, st in self.value_steps.items() if i in values or i in self.values_before},
            scratch_site=self.scratch_site,
            autotune=self.autotune,
        )

    def _dot_trace(self) -> DotTrace:
        cols = np.asarray(self.dots, dtype=np.int32).reshape(-1, 7)
        dev = np.asarray(self.dot_dev, dtype=np.float64).reshape(-1, 2)
        columns = {c: np.ascontiguousarray(cols[:, i]) for i, c in enumerate(DotTrace.COLUMNS[:7])}
        tile_row, tile_start, tile_data = self.tiles.arrays()
        return DotTrace(
            self.dot_sites,
            **columns,
            tf32_dev=np.ascontiguousarray(dev[:, 0]),
            magnitude=np.ascontiguousarray(dev[:, 1]),
            tile_row=tile_row,
            tile_start=tile_start,
            tile_data=tile_data,
        )


def tf32_deviation(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(largest |TF32 product - IEEE float32 product|, largest |IEEE product|) of one tl.dot's
    operands, over the finite entries: how far the run's (and the GPU's) TF32 values are from IEEE."""
    with np.errstate(all="ignore"):
        exact = np.matmul(a, b, dtype=np.float32)
        diff = np.abs(np.matmul(_tf32.truncate(a), _tf32.truncate(b), dtype=np.float32) - exact)
        finite = np.isfinite(diff)
        if not finite.any():
            return 0.0, 0.0
        return float(diff[finite].max()), float(np.abs(exact[finite]).max())


def _host_values(
    t: torch.Tensor, limit: int, steps: dict[int, tuple[int, int]] | None = None, index: int = -1
) -> np.ndarray:
    """The tensor's values in flat order; over `limit` elements, only the sample of 1 in rs rows x 1 in
    cs columns (its last dimension the columns, the others folded into rows), flat in the sample's own
    row-major order, recorded in `steps`. Only the sample is copied, never the whole tensor."""
    t = t.detach()
    n = t.numel()
    if n > limit:
        cols = int(t.shape[-1]) if t.dim() else 1
        rs, cs = value_sample_steps(n // max(1, cols), cols, limit)
        t = _rows(t, cols, rs)[:, ::cs]
        if steps is not None:
            steps[index] = (rs, cs)
    return _flat_copy(t)


def _flat_copy(t: torch.Tensor) -> np.ndarray:
    """t's values as a new flat array in its logical (row-major) order, copied by numpy. A torch copy of a
    strided sample this large runs an OpenMP parallel region whose threads then spin on every core for tens
    of ms (libgomp waits busy before it sleeps): on a 16-core machine 15 threads beside the children of a
    split launch, forked right after the launch's values are kept."""
    if t.device.type != "cpu":
        t = t.cpu()
    dt = str(t.dtype)
    if dt in ("torch.bfloat16", "torch.float8_e4m3fn", "torch.float8_e5m2"):  # no numpy type: widen the bits
        import torch

        if dt == "torch.bfloat16":  # a bfloat16 is the high half of a float32
            bits = t.view(torch.int16).numpy().view(np.uint16)
            wide: np.ndarray = bits.astype(np.uint32, order="C") << np.uint32(16)
            return wide.view(np.float32).reshape(-1)
        table = _fp8.decode_table("e4m3" if "e4m3" in dt else "e5m2")
        fp8: np.ndarray = table[np.array(t.view(torch.uint8).numpy(), order="C")]
        return fp8.reshape(-1)
    out: np.ndarray = np.array(t.numpy(), order="C", copy=True).reshape(-1)  # torch types numpy() as Any
    return out


def _rows(t: torch.Tensor, cols: int, rs: int) -> torch.Tensor:
    """1 in rs rows of t as a 2-D (rows, cols) tensor, the dimensions before the last folded into rows:
    a view where strides allow, else a copy of those rows only (never the whole tensor)."""
    if t.dim() <= 2:
        return t.reshape(1, -1) if t.dim() <= 1 else t[::rs]
    try:
        return t.view(-1, cols)[::rs]
    except RuntimeError:  # a layout the rows cannot be folded over without a copy
        import torch

        rows = np.arange(0, t.numel() // max(1, cols), rs)
        lead = np.unravel_index(rows, tuple(t.shape[:-1]))
        return t[tuple(torch.from_numpy(np.ascontiguousarray(i)) for i in lead)]


def _keep_before(L: _Launch, index: int, t: torch.Tensor, limit: int) -> None:
    """The tensor's values before the launch (the viewer's "before" colouring); a sample over the limit."""
    try:
        if t.numel() > 0 and limit > 0:
            L.values_before[index] = _host_values(t, limit, L.value_steps, index)
    except Exception:  # values are a convenience for the viewer; never fail a launch on them
        pass


def _prefix(t: LaunchTrace, k: int) -> LaunchTrace:
    """The trace of its first k executions."""

    def sets(s: ElementSets) -> ElementSets:
        return ElementSets(s.kind[:k], s.lo[:k], s.count[:k], s.start[: k + 1], s.data[: int(s.start[k])])

    for c in ("ex_site", "ex_program", "ex_lanes", "ex_active", "ex_oob", "ex_vhash", "ex_overrun"):
        setattr(t, c, getattr(t, c)[:k])
    t.touched, t.masked, t.oob = sets(t.touched), sets(t.masked), sets(t.oob)
    return t


def _fingerprint(lo: int, elements: int | np.ndarray, values: np.ndarray) -> int:
    """A store's (elements, values) as one nonzero int: equal for executions that wrote the same values
    to the same elements in the same lane order (compared within one run only)."""
    head = (lo, elements) if lo >= 0 else (-1, np.ascontiguousarray(elements).tobytes())
    h = hash((head, values.dtype.str, np.ascontiguousarray(values).tobytes()))
    return h or 1


def _order_names(order: Order | None) -> tuple[str, str]:
    """An atomic's (sem, scope) as the user writes them: ("acq_rel", "gpu")."""
    if order is None:
        return "", ""
    sem, scope = (str(getattr(x, "name", x)).split(".")[-1].lower() for x in order)
    sem = {"acquire_release": "acq_rel", "system": "sys"}.get(sem, sem)
    scope = {"system": "sys"}.get(scope, scope)
    return sem, scope


def _skipped(code: CodeType) -> bool:
    return code.co_filename.startswith(_SKIP_DIRS)


def _user_frame(depth: int) -> FrameType | None:
    """The first frame outside triton and this package: the kernel line (or a @jit helper's line)."""
    f: FrameType | None = sys._getframe(depth)
    while f is not None:
        if not _skipped(f.f_code):
            return f
        f = f.f_back
    return None


# How many frames above the hook the user's frame sits, per call path. sys._getframe(n) jumps there
# without building the frame objects in between, which a walk through f_back would (most of a walk's
# cost on CPython 3.11). One first frame above the hook (the key) starts several paths of different
# lengths: a tl.load without a mask passes two more frames (create_load and its wrapper) than one with
# a mask, exactly as many as a @jit helper's call adds (the interpreter's __call__ and the helper). So
# a depth alone, checked only for "a user frame with a triton frame below it", can land on the
# helper's caller; each path is kept as (depth, code of the frame just below the user's) and taken
# only where that frame runs the same code (the builtin's wrapper, not the helper call's __call__).
_depth_cache: dict[CodeType, tuple[tuple[int, CodeType], ...]] = {}


def forget_call_paths() -> None:
    """Drops the paths learnt so far (the worker's warm-up launch, whose kernel is this package's own code,
    so that its user frame is no kernel's: its paths must not serve a user's launch)."""
    _depth_cache.clear()


def _call_position(f: FrameType | None) -> tuple[str, int, int, int, int]:
    """(file, line, col, end line, end col) of the call a frame is executing: the exact range of a
    tl.load(...) or tl.dot(...) inside a longer line; -1 columns where the code has no positions."""
    if f is None:
        return ("", 0, -1, 0, -1)
    line, end_line, col, end_col = f.f_lineno, f.f_lineno, None, None
    try:
        code: Any = f.f_code  # co_positions: Python 3.11+ (mypy checks for the oldest supported)
        p = list(code.co_positions())[f.f_lasti // 2]
        if p[0] is not None:
            line, end_line, col, end_col = p
    except Exception:
        pass
    return (
        os.path.abspath(f.f_code.co_filename),
        int(line),
        -1 if col is None else int(col),
        int(end_line or line),
        -1 if end_col is None else int(end_col),
    )


def _user_frame_fast(depth: int) -> FrameType | None:
    try:
        head = sys._getframe(depth + 1)
    except ValueError:
        return None
    paths = _depth_cache.get(head.f_code, ())
    for extra, below_code in paths:
        try:
            below = sys._getframe(depth + extra)
            if below.f_code is below_code:
                user = below.f_back
                if user is not None and not _skipped(user.f_code):
                    return user
        except ValueError:
            pass
    f: FrameType | None = head
    below_f: FrameType | None = None
    extra = 0
    while f is not None and _skipped(f.f_code):
        below_f = f
        f = f.f_back
        extra += 1
    if f is not None and below_f is not None and len(paths) < 8:
        _depth_cache[head.f_code] = paths + ((extra, below_f.f_code),)
    return f


class Recorder(compat.Hooks):
    def __init__(
        self,
        on_launch: Callable[[LaunchTrace], None] | None = None,
        on_progress: Callable[[str, int, int, int], None] | None = None,
        value_limit: int = DEFAULT_VALUE_LIMIT,
        skip_dead_work: bool = True,
        memory: HostWrites | None = None,
        on_sizes: Callable[[LaunchTrace], None] | None = None,
        size_check_gpu: str | None = None,
        size_cache: dict[str, Any] | None = None,  # size_cache.py's entries: key -> {"findings", "checked"}
        on_trial: Callable[[LaunchTrace], None] | None = None,
        record_trials: bool = True,
        on_partial: Callable[[LaunchTrace, int, int], None] | None = None,
        partial_min_programs: float | None = None,
        partial_min_seconds: float | None = None,
        on_launch_start: Callable[[LaunchStart], None] | None = None,
        on_access: Callable[[AccessEvent], None] | None = None,
    ):
        self.on_launch = on_launch
        # A launch's start and each execution as it is recorded, for a caller that composes the recorder
        # (the Triton-Viz API's clients: viz/tracing.py); not called for an autotuner's timing runs.
        self.on_launch_start = on_launch_start
        self.on_access = on_access
        # Progressive results (progressive.py): a long launch's sample of programs, run first in a fork,
        # handed to on_partial(trace, programs done, programs in all) before the launch completes.
        self.on_partial = on_partial
        o = _progressive.options(partial_min_programs, partial_min_seconds)
        self.partial_min_programs, self.partial_min_seconds = o["partial_min_programs"], o["partial_min_seconds"]
        self.partial_probe_seconds, self.sample_fraction = o["partial_probe_seconds"], o["sample_fraction"]
        self.sample_min, self.sample_max, self.sample_seconds = o["sample_min"], o["sample_max"], o["sample_seconds"]
        self._sampler: _progressive.Sampler | None = None
        self.in_sample_child = False
        # An autotuner's trial launches (one per config it tries), kept for their findings: handed to
        # on_trial after each, or (without one) kept in `trials`; not both, so that the worker, which
        # streams them, does not hold every trial of a long run. record_trials=False runs them
        # unrecorded (the benchmark's baseline, bench/autotune_configs.py).
        self.on_trial = on_trial
        self.record_trials = record_trials
        self.trials: list[LaunchTrace] = []
        self._tunings: list[_Tuning] = []  # the autotuner runs in progress: their trials so far
        self._trial: tuple[str, int] | None = None  # the config being tried now: (label, rank)
        # The size check (size_probe.py), after each launch, on the named GPU's memory; None: off.
        self.on_sizes = on_sizes
        self._sizes: SizeCheck | None = None
        if size_check_gpu is not None:
            from ..standin.gpu_profiles import profile
            from .size_probe import SizeCheck

            gpu = profile(size_check_gpu)
            self._sizes = SizeCheck(self, gpu.total_memory, gpu.key, cache=size_cache)
        # The last check's entry for the runner's cache across runs ({"key", "value"} or {"key", "hit"}).
        self.size_cache_entry: dict[str, Any] | None = None
        self._probe: _Probe | None = None  # a size-check re-launch in flight
        self._probe_trace: LaunchTrace | None = None
        self.probe_overflow_at: dict[int, int] = {}  # (a size-check re-launch's)
        self._last: _Launch | None = None  # the launch that ended last, until `launched` checks its sizes
        # host_writes.HostWrites (the worker's), or None: which elements nothing has written yet.
        self.memory = memory
        self.unmasked = 0  # compat.Hooks: > 0 inside a load/store written without a mask
        self._flush = False  # set from a signal handler: send the launch in flight at the next access
        self.skip_dead_work = skip_dead_work
        self.on_progress = on_progress
        self.value_limit = value_limit
        self.launches: list[LaunchTrace] = []
        self._launch: _Launch | None = None
        self._stack: list[_Launch | None] = []
        self._ctx: list[_Context] = []
        self._count = 0
        self._benchmarking = 0
        self._tiles_left = RUN_TILE_VALUES  # tl.dot tile values the run's later launches may keep
        self._positions: dict[tuple[CodeType | None, int], tuple[str, int, int, int, int]] = {}
        self._patches: compat.PatchScope | None = None
        self._next_progress = 0.0

    # -- lifetime ---------------------------------------------------------------------------
    def __enter__(self) -> Recorder:
        self._patches = compat.install(self, self.skip_dead_work)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._patches is not None:
            self._patches.restore()
            self._patches = None

    # -- launches ---------------------------------------------------------------------------
    # executor, fn, a launch's arguments: triton's (untyped) grid executor, kernel and argument values.
    def launch_begin(self, executor: Any, fn: Any) -> _Launch:
        f = _user_frame(2)
        file, line = (f.f_code.co_filename, f.f_lineno) if f is not None else ("", 0)
        self._stack.append(self._launch)
        self._launch = _Launch(self._count, fn, file, line)
        self._launch.tiles.limit = min(self._launch.tiles.limit, self._tiles_left)
        self._mark_autotune(self._launch)
        if self._sizes is not None:  # the size check reads the launch statement's grid from it
            self._launch.frame = f
        if self.memory is not None:
            self.memory.paused += 1  # the interpreter's own copies in and out are not the script's writes
        return self._launch

    def launch_args(
        self,
        arg_names: Sequence[str],
        args_dev: Sequence[Any],
        kwargs_dev: dict[str, Any],
        args_hst: Sequence[Any],
        kwargs_hst: dict[str, Any],
    ) -> None:
        L = self._launch
        if L is None:
            return
        named_hst = list(zip(arg_names, args_hst)) + list(kwargs_hst.items())
        named_dev = list(zip(arg_names, args_dev)) + list(kwargs_dev.items())
        if self._probe is not None:
            self._probe_args(L, named_hst)
            return
        for (name, host), (_, dev) in zip(named_hst, named_dev):
            devices = [str(t.device) for _, _, t in compat.iter_tensor_args(name, dev)]
            for k, (label, obj, t) in enumerate(compat.iter_tensor_args(name, host)):
                info = TensorInfo(
                    index=len(L.views),
                    name=label,
                    shape=tuple(int(s) for s in t.shape),
                    strides=tuple(int(s) for s in t.stride()),
                    dtype=_dtype_name(t),
                    itemsize=int(t.element_size()),
                    device=devices[k] if k < len(devices) else "cpu",
                )
                try:
                    storage = t.untyped_storage()
                    extent = (storage.data_ptr(), storage.data_ptr() + storage.nbytes())
                except Exception:
                    extent = None
                L.by_id[id(obj)] = info.index
                L.views.append(TensorView(info, t.data_ptr(), t, extent))
                if not self._benchmarking:  # autotune's timing launches are not kept
                    _keep_before(L, info.index, t, self.value_limit)
                if self.memory is not None:
                    try:
                        runs = self.memory.unwritten_runs(t)
                    except Exception:  # a finding's input, never a reason to fail the launch
                        runs = None
                    if runs is not None:
                        L.unwritten_before[info.index] = runs

    def grid(self, nx: int, ny: int, nz: int) -> None:
        if self._launch is not None:
            L = self._launch
            L.grid = (int(nx), int(ny), int(nz))
            L.running = True
            # the launch has begun: a run stopped now was inside it (a size-check re-launch is not the run's)
            if self.on_progress is not None and self._probe is None:
                self.on_progress(L.kernel, L.index, 0, L.grid[0] * L.grid[1] * L.grid[2])
                self._next_progress = time.monotonic() + 0.2
            if (
                self.on_partial is not None
                and self._sampler is None
                and self._probe is None
                and not self._benchmarking
                and not self.in_sample_child
                and not getattr(self, "in_child", False)  # a parallel split's child (parallel.py)
                and L.grid[0] * L.grid[1] * L.grid[2] >= max(2, self.partial_min_programs)
            ):
                self._sampler = _progressive.Sampler(self, L, L.grid)
            if self.on_launch_start is not None and not self._benchmarking:
                self.on_launch_start(
                    LaunchStart(L.kernel, L.def_file, L.def_line, L.file, L.line, L.grid, [v.info for v in L.views])
                )

    def program(self, x: int, y: int, z: int) -> tuple[int, int, int] | None:
        """Before each program (compat: set_grid_idx); coordinates returned replace the loop's (the
        sample child's loop visits only the sample, progressive.py)."""
        s = self._sampler
        return None if s is None else s.before_program(x, y, z)

    def begin_sample_child(self) -> None:
        """In the forked sample child: it reports nothing but its partial, and samples nothing more."""
        self.in_sample_child = True
        self.on_launch = self.on_progress = self.on_sizes = self.on_trial = None
        self.on_launch_start = self.on_access = None
        self._sizes = None
        self.memory = None

    def launch_end(self, token: object, error: BaseException | None) -> None:
        L = self._launch
        s = self._sampler
        if s is not None and s.L is L:
            self._sampler = None
            if s.phase is _progressive.CHILD:  # the sample child's loop ended: send, or exit quietly
                if error is None:
                    s.child_send()
                s.child_failed()
            s.end()  # the partial (if any) handed on before the launch
        self._launch = self._stack.pop() if self._stack else None
        if L is None:
            return
        if self.memory is not None:
            self.memory.paused -= 1
        if L.flushed:
            return  # sent already (the time limit)
        if self._probe is not None:  # a size-check re-launch: its trace is the check's, not the run's
            self._probe_trace = L.finish(error is None, 0)
            return
        # a trial's values are the viewer's, and the viewer shows the launch kept
        if self._benchmarking:
            L.tiles.clear()
        self._tiles_left -= L.tiles.size
        trace = L.finish(error is None, 0 if self._benchmarking else self.value_limit)
        if self._sizes is not None:  # for `launched`, which the launch's wrapper calls next
            L.trace, self._last = trace, L
        if self.memory is not None:
            try:
                self._mark_stores(L, trace, self.memory)
            except Exception:  # a finding's input, never a reason to fail the launch
                pass
        if self._benchmarking:  # a launch made only to try an autotune config: not one of the run's
            if L.autotune is not None and L.autotune.get("trial"):
                if self.on_trial is not None:
                    self.on_trial(trace)
                else:
                    self.trials.append(trace)
            return
        self._count += 1
        self.launches.append(trace)
        if self.on_launch is not None:
            self.on_launch(trace)

    # -- the size check (size_probe.py) ------------------------------------------------------
    def launched(self, executor: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """After a launch returned: check its kernel at the other sizes it admits, then send the findings
        (the launch itself was sent already, so its hints never wait for the check)."""
        L, self._last = self._last, None
        if L is None:
            return
        frame, trace = L.frame, L.trace
        L.frame = L.trace = None  # the script's frame (and its locals) is not kept past its launch
        if self._sizes is None or self._probe is not None or self._benchmarking or trace is None:
            return
        from .size_probe import read_launch

        self.size_cache_entry = None
        try:
            la = read_launch(executor, args, kwargs, frame)
            found = self._sizes.check(la, trace) if la is not None else []
            checked = self._sizes.last_checked if la is not None else []
            self.size_cache_entry = self._sizes.take_entry()
        except Exception:  # a check's failure is never the run's
            found, checked = [], []
        if found or checked or self.size_cache_entry is not None:
            trace.size_findings, trace.size_checked = found, checked
            if self.on_sizes is not None:
                self.on_sizes(trace)

    def begin_probe(self, tensors: dict[str, TensorSpec], budget: Budget, overflows: list[Overflow]) -> None:
        self._probe = {"tensors": tensors, "budget": budget, "overflows": overflows}
        self.probe_overflow_at = {}  # site -> the overflow last before its out-of-bounds lanes
        self._probe_trace = None
        if self.memory is not None:
            self.memory.paused += 1

    def end_probe(self) -> LaunchTrace | None:
        self._probe = None
        if self.memory is not None:
            self.memory.paused -= 1
        return self._probe_trace

    def _probe_args(self, L: _Launch, named_hst: list[tuple[str, Any]]) -> None:
        """A re-launch's tensors: one real element each, seen with the shape and strides of the size."""
        specs = self._probe["tensors"] if self._probe is not None else {}
        for name, host in named_hst:
            spec = specs.get(name)
            if spec is None or not hasattr(host, "data_ptr"):
                continue
            info = TensorInfo(
                index=len(L.views),
                name=name,
                shape=spec.shape,
                strides=spec.strides,
                dtype=_dtype_name(host),
                itemsize=spec.itemsize,
                device="cpu",
            )
            base = int(host.data_ptr())
            L.by_id[id(host)] = info.index
            L.views.append(TensorView(info, base, None, (base, base + max(spec.span_bytes, spec.itemsize))))

    def request_flush(self) -> None:
        """Safe from a signal handler: at its next access, the launch in flight is sent as it stands
        (the programs that finished, complete=False), before the runner stops the worker."""
        self._flush = self._launch is not None

    def _flush_in_flight(self, L: _Launch, running: int) -> None:
        self._flush = False
        if L.flushed or self._benchmarking:
            return
        # Programs run one after another: the running program's executions are the last rows.
        k = len(L.ex_program)
        while k > 0 and L.ex_program[k - 1] == running:
            k -= 1
        trace = _prefix(L.finish(False, self.value_limit), k)
        L.flushed = True
        self.launches.append(trace)
        if self.on_launch is not None:
            self.on_launch(trace)

    def _mark_stores(self, L: _Launch, trace: LaunchTrace, memory: HostWrites) -> None:
        """What the launch's stores and atomics wrote counts as written for later launches; a torch.empty
        buffer the launch took is watched for host reads from now on (host_writes.HostWrites.used)."""
        for v in L.views:
            if v.tensor is None or v.numel == 0:
                continue
            if not self._benchmarking:  # an autotune trial is not one of the run's launches
                memory.used(v.tensor, trace.index, v.info.index)
            sites = [i for i, s in enumerate(trace.sites) if s.arg == v.info.index and s.kind != "load"]
            if not sites:
                continue
            rows = np.flatnonzero(np.isin(trace.ex_site, sites))
            if rows.size:
                memory.mark(v.tensor, trace.touched.cover(rows, v.numel))

    # -- autotuning (compat._patch_autotuner) -------------------------------------------------
    def tuning(self) -> None:
        self._tunings.append({"trials": [], "kept": False})

    def tuned(self) -> None:
        if self._tunings:
            self._tunings.pop()

    def trial(self, label: str | None, rank: int = 0) -> None:
        self._trial = None if label is None else (label, rank)

    def _mark_autotune(self, L: _Launch) -> None:
        """A trial launch carries its config; the first launch of the run after its trials (the config
        the autotuner kept) carries every config tried, in the order tried."""
        if not self._tunings or self._probe is not None:
            return
        t = self._tunings[-1]
        if self._benchmarking:
            if self._trial is not None and self.record_trials:
                label, rank = self._trial
                L.autotune = {"trial": True, "config": label, "rank": rank}
                t["trials"].append((label, rank))
            elif self._trial is not None:
                t["trials"].append(self._trial)
        elif t["trials"] and not t["kept"]:
            t["kept"] = True
            label, rank = min(t["trials"], key=lambda lr: lr[1])  # the autotuner's min(): lowest rank, first
            L.autotune = {"trial": False, "config": label, "rank": rank, "configs": [lb for lb, _ in t["trials"]]}

    def benchmark(self, kernel_call: Callable[[], Any]) -> float:
        self._benchmarking += 1
        try:
            t0 = time.perf_counter()
            kernel_call()
            return (time.perf_counter() - t0) * 1e3
        finally:
            self._benchmarking -= 1

    # -- provenance -------------------------------------------------------------------------
    def tag(self, host_value: object, converted: Any) -> None:  # converted: the interpreter's tensor
        L = self._launch
        if L is None:
            return
        idx = L.by_id.get(id(host_value))
        if idx is not None:
            handle = getattr(converted, "handle", None)
            if handle is not None:
                base = getattr(handle, "base", None)  # a descriptor: its base pointer was tagged already
                if base is None or not hasattr(handle, "block_shape"):
                    handle._tl_arg = idx

    def may_take_turns(self) -> bool:
        """Programs that wait on each other run by turns only where the whole launch runs here: not in a
        progressive sample's child, a parallel split's child or a size check's re-launch."""
        return not (self.in_sample_child or getattr(self, "in_child", False) or self._probe is not None)

    def program_state(self, state: list[_Context] | None = None) -> list[_Context]:
        """The running program's access contexts (a block pointer load in progress), swapped at a turn."""
        old, self._ctx = self._ctx, ([] if state is None else state)
        return old

    def push_context(self, kind: str, op: str, operand: Any) -> None:  # operand: the interpreter's
        self._ctx.append(_Context(kind, op, compat.operand_tag(operand)))

    def pop_context(self) -> None:
        self._ctx.pop()

    # -- accesses (hot path) ----------------------------------------------------------------
    def _site(self, L: _Launch, kind: str, op: str, tag: int, order: Order | None = None) -> int:
        f = _user_frame_fast(3)
        key: SiteKey
        if f is None:
            key = (None, 0, tag, kind, op)
        else:
            key = (f.f_code, f.f_lasti, tag, kind, op)
        i = L.site_index.get(key)
        if i is not None:
            return i
        pos_key = key[:2]
        pos = self._positions.get(pos_key)
        if pos is None:
            pos = self._positions[pos_key] = _call_position(f)
        i = len(L.sites)
        sem, scope = _order_names(order)
        L.sites.append(
            Site(
                pos[0],
                pos[1],
                pos[2],
                pos[3],
                pos[4],
                -1 if tag is None else tag,
                kind,
                op,
                sem,
                scope,
                self.unmasked > 0 and kind in ("load", "store"),
            )
        )
        L.site_index[key] = i
        return i

    def _view_by_address(self, L: _Launch, flat: np.ndarray, m: np.ndarray | None) -> int | None:
        """The argument whose storage holds the first active lane (pointers with no provenance)."""
        if flat.size == 0:
            return None
        if m is not None:
            nz = np.flatnonzero(m)
            if nz.size == 0:
                return None
            addr = int(flat[nz[0]])
        else:
            addr = int(flat[0])
        for v in L.views:
            if v.in_storage(addr):
                return v.info.index
        return None

    def access(
        self,
        kind: str,
        op: str,
        builder: Builder,
        ptrs: Handle,
        mask: np.ndarray | None,
        value: Handle | None = None,
        order: Order | None = None,
    ) -> np.ndarray | None:
        """One execution of a load/store/atomic: its site, program and lane counts, then its element
        sets by one of three paths: a pointer no argument holds (`_record_unattributed`), a
        contiguous in-bounds prefix tile (`_record_range`), any other lanes (`_record_elements`).
        Returns the mask without the out-of-bounds lanes, or None when the mask stands."""
        L = self._launch
        if L is None:
            return None
        s = self._sampler
        if s is not None and s.phase is _progressive.FORKED:
            s.poll()  # (a sample done mid-program is handed on now, not at the program's end)
        tag = getattr(ptrs, "_tl_arg", None)
        if self._ctx:
            ctx = self._ctx[-1]
            kind, op = ctx.kind, ctx.op
            if tag is None:
                tag = ctx.tag
        data = ptrs.data
        flat = data.reshape(-1)
        m = None
        if mask is not None:
            if mask.shape != data.shape:
                mask = np.broadcast_to(mask, data.shape)
            m = mask.reshape(-1)
        if tag == compat.MIXED:
            owner = self._lane_owners(L, ptrs, flat)
            on = owner if m is None else owner[m]
            found = np.unique(on[on >= 0])
            if found.size > 1:
                n = len(L.ex_site)
                split = self._split_access(L, kind, op, builder, owner, found, flat, m, data.shape, value, order)
                if self.on_access is not None and not self._benchmarking:
                    self._emit_accesses(L, n, builder)
                return split
            tag = int(found[0]) if found.size == 1 else None
        elif tag is None or tag < 0:
            tag = self._view_by_address(L, flat, m)
        if self.on_access is None or self._benchmarking:
            return self._access_of(L, kind, op, builder, tag, flat, m, data.shape, value, order)
        n = len(L.ex_site)
        got = self._access_of(L, kind, op, builder, tag, flat, m, data.shape, value, order)
        self._emit_accesses(L, n, builder)
        return got

    def _emit_accesses(self, L: _Launch, first: int, builder: Builder) -> None:
        """on_access for the executions recorded from row `first` on (one, or one per argument of a pointer
        block picked lane by lane)."""
        assert self.on_access is not None
        x, y, z = builder.grid_idx
        for row in range(first, len(L.ex_site)):
            site = L.sites[L.ex_site[row]]
            sets = tuple((b.kinds[row], b.los[row], b.counts[row], b.chunks[row]) for b in (L.touched, L.masked, L.oob))
            self.on_access(
                AccessEvent(
                    site,
                    (int(x), int(y), int(z)),
                    L.views[site.arg].info if site.arg >= 0 else None,
                    int(L.ex_lanes[row]),
                    int(L.ex_active[row]),
                    int(L.ex_oob[row]),
                    sets,
                )
            )

    def _lane_owners(self, L: _Launch, ptrs: Handle, flat: np.ndarray) -> np.ndarray:
        """Each lane's argument in a MIXED block (tl.where of two arguments' pointers): its provenance
        where the interpreter carried it, else the argument one of whose elements it addresses (views of
        one storage told apart), else the argument whose storage holds it; -1: none."""
        lanes = compat.lane_tags(ptrs)
        if lanes is not None and lanes.size == flat.size:
            known: np.ndarray = np.asarray(lanes, dtype=np.int64).reshape(-1)
            return known
        owner = np.full(flat.shape, -1, dtype=np.int64)
        addr = flat.view(np.int64)
        for v in L.views:
            inb, _ = v.classify(addr - v.base)
            owner[(owner < 0) & inb] = v.info.index
        for v in L.views:
            owner[(owner < 0) & (addr >= v.storage_lo) & (addr < v.storage_hi)] = v.info.index
        return owner

    def _split_access(
        self,
        L: _Launch,
        kind: str,
        op: str,
        builder: Builder,
        owner: np.ndarray,
        found: np.ndarray,
        flat: np.ndarray,
        m: np.ndarray | None,
        shape: tuple[int, ...],
        value: Handle | None,
        order: Order | None,
    ) -> np.ndarray | None:
        """A MIXED block whose active lanes point into several arguments: one execution per argument,
        of that argument's lanes only (each checked against its own tensor, as the GPU reads each lane
        from its own pointer); a lane of no argument goes with the first. The mask returned is the
        block's, without every part's out-of-bounds lanes."""
        owner = np.where(owner < 0, int(found[0]), owner)
        out = np.ones(flat.shape, dtype=bool) if m is None else m.copy()
        changed = False
        values = None if value is None else value.data.reshape(-1)
        for t in found.tolist():
            idx = np.flatnonzero(owner == t)
            lanes = None if values is None else _Lanes(values[idx])
            got = self._access_of(
                L, kind, op, builder, t, flat[idx], None if m is None else m[idx], (idx.size,), lanes, order, True
            )
            if got is not None:
                out[idx] = got.reshape(-1)
                changed = True
        if self._probe is not None:
            return np.zeros(shape, dtype=bool)
        whole: np.ndarray = out.reshape(shape)
        return whole if changed else None

    def _access_of(
        self,
        L: _Launch,
        kind: str,
        op: str,
        builder: Builder,
        tag: int | None,
        flat: np.ndarray,
        m: np.ndarray | None,
        shape: tuple[int, ...],
        value: Handle | None,
        order: Order | None,
        part: bool = False,
    ) -> np.ndarray | None:
        """`access` of lanes that belong to one argument (`tag`; None: to none)."""
        lanes = flat.size
        site = self._site(L, kind, op, -1 if tag is None else tag, order)
        gx, gy, _ = L.grid
        x, y, z = builder.grid_idx
        if self._flush and self._probe is not None:  # the time limit, inside the size check: stop it
            from .size_probe import ProbeTimeout

            self._flush = False
            raise ProbeTimeout("the run's time limit")  # with a reason: the whole check stops, not one size
        if self._flush:
            self._flush_in_flight(L, x + gx * (y + gy * z))
        L.ex_site.append(site)
        L.ex_program.append(x + gx * (y + gy * z))
        L.ex_lanes.append(lanes)

        if m is None:
            active = lanes
        else:
            active = int(np.count_nonzero(m))
            if active == lanes:
                m = None
        L.ex_active.append(active)
        self._maybe_progress(L, x, y, z)

        if self._probe is not None:
            return self._probe_access(L, tag, flat, m, active, shape)
        if tag is None:  # a pointer made from an integer (int_to_ptr) that no argument holds
            L.ex_overrun.append(0)
            return self._record_unattributed(L, flat, m, shape)
        v = L.views[tag]
        # (a part of a MIXED block is its lanes in a row, not the block's shape: no rows to cross)
        L.ex_overrun.append(row_crossings(v, flat, m, shape) if v.rows and not part else 0)
        if v.contiguous and v.shift >= 0 and _record_range(L, v, flat, m, lanes, active, value):
            return None
        return _record_elements(L, v, flat, m, active, value, shape)

    def _probe_access(
        self, L: _Launch, tag: int | None, flat: np.ndarray, m: np.ndarray | None, active: int, shape: tuple[int, ...]
    ) -> np.ndarray:
        """An access of a size-check re-launch: its out-of-bounds lanes counted against the size's
        shape, then every lane masked off (address-only memory: nothing is read or written)."""
        assert self._probe is not None
        self._probe["budget"].spend()  # raises ProbeTimeout when the check has spent its budget
        L.ex_overrun.append(0)
        L.ex_vhash.append(0)
        _add_empty(L.touched)
        _add_empty(L.masked)
        if tag is None or active == 0:
            L.ex_oob.append(0)
            _add_empty(L.oob)
        else:
            v = L.views[tag]
            d = flat.view(np.int64) - v.base
            inb, _ = v.classify(d)
            bad = ~inb if m is None else (m & ~inb)
            n_bad = int(np.count_nonzero(bad))
            L.ex_oob.append(n_bad)
            if n_bad:
                L.oob.add(v.elements(d[bad]))
                self.probe_overflow_at.setdefault(L.ex_site[-1], len(self._probe["overflows"]) - 1)
            else:
                _add_empty(L.oob)
        return np.zeros(shape, dtype=bool)

    def loaded(self, value: Any) -> None:  # value: the interpreter's tensor, which takes a new attribute
        """Mark a load's value with its execution row, so a tl.dot fed by it can name the load."""
        L = self._launch
        if L is not None and L.ex_site:
            try:
                value._tl_row = (L.index, len(L.ex_site) - 1)
            except AttributeError:
                pass

    def dot(
        self,
        builder: Builder,
        a: Handle,
        b: Handle,
        a_dtype: str,
        b_dtype: str,
        acc_dtype: str,
        precision: str = "",
        result: Handle | None = None,
    ) -> None:
        L = self._launch
        a_shape, b_shape = a.data.shape, b.data.shape
        if L is None or len(a_shape) < 2 or len(b_shape) < 2:
            return
        f = _user_frame_fast(2)
        key = (f.f_code, f.f_lasti) if f is not None else None
        i = L.dot_site_index.get(key)
        if i is None:
            file, line, col, end_line, end_col = _call_position(f)
            i = L.dot_site_index[key] = len(L.dot_sites)
            L.dot_sites.append(DotSite(file, line, col, end_line, end_col, a_dtype, b_dtype, acc_dtype, precision))
        batch = 1
        for s in a_shape[:-2]:
            batch *= int(s)
        gx, gy, _ = L.grid
        x, y, z = builder.grid_idx
        rows = []
        for v in (a, b):
            tag = getattr(v, "_tl_row", None)
            rows.append(tag[1] if tag is not None and tag[0] == L.index else -1)
        program = x + gx * (y + gy * z)
        L.dots.append((i, program, rows[0], rows[1], batch * int(a_shape[-2]), int(b_shape[-1]), int(a_shape[-1])))
        L.dot_dev.append(tf32_deviation(a.data, b.data) if L.dot_sites[i].runs_in_tf32 else (-1.0, -1.0))
        if result is not None:
            L.tiles.offer(
                len(L.dots) - 1, program, tile_values(a.data, a_dtype), tile_values(b.data, b_dtype), result.data
            )

    def device_descriptor(self) -> None:
        """An in-kernel tl.make_tensor_descriptor: compiled, it needs scratch memory from the allocator
        the script sets with triton.set_allocator; the interpreter needs none, so note where it is
        missing (the first such call of the launch)."""
        L = self._launch
        if L is None or not L.running or L.scratch_site is not None or compat.allocator_is_set():
            return
        f = _user_frame_fast(2)
        if f is None:
            return
        file, line, col, end_line, end_col = _call_position(f)
        L.scratch_site = {"file": file, "line": line, "col": col, "end_line": end_line, "end_col": end_col}

    def _record_unattributed(
        self, L: _Launch, flat: np.ndarray, m: np.ndarray | None, shape: tuple[int, ...]
    ) -> np.ndarray | None:
        """Path 1 of `access`: a pointer with no argument behind it. Lanes in the storage of an
        argument or of another tensor the script holds (a table of pointers, as grouped GEMM uses) go
        ahead; any other address is out of bounds like any other lane: counted, recorded by byte
        address, and masked off, so a stray store never reaches memory (a SIGSEGV, or another
        object's bytes). Nothing is recorded as touched or masked (no element of an argument)."""
        L.ex_vhash.append(0)
        _add_empty(L.touched)
        _add_empty(L.masked)
        addr = flat.view(np.int64)
        ok = np.zeros(addr.shape, dtype=bool)
        for v in L.views:
            ok |= (addr >= v.storage_lo) & (addr < v.storage_hi)
        active = np.ones(addr.shape, dtype=bool) if m is None else m
        if not bool((ok | ~active).all()):
            if L.live is None:
                L.live = _live_tensor_storage()
            for lo, hi in L.live:
                ok |= (addr >= lo) & (addr < hi)
        bad = active & ~ok
        n_bad = int(np.count_nonzero(bad))
        L.ex_oob.append(n_bad)
        if not n_bad:
            _add_empty(L.oob)
            return None
        L.oob.add(addr[bad])
        return (active & ok).reshape(shape)

    def _maybe_progress(self, L: _Launch, x: int, y: int, z: int) -> None:
        if self.on_progress is None:
            return
        now = time.monotonic()
        if now < self._next_progress:
            return
        self._next_progress = now + 0.2
        gx, gy, gz = L.grid
        done = x * gy * gz + y * gz + z  # the interpreter walks x, then y, then z (innermost)
        self.on_progress(L.kernel, L.index, done, gx * gy * gz)


class _Lanes:
    """Some lanes of a stored value, shaped as `_record_range` / `_record_elements` read a value."""

    __slots__ = ("data",)

    def __init__(self, data: np.ndarray):
        self.data = data


def _record_range(
    L: _Launch, v: TensorView, flat: np.ndarray, m: np.ndarray | None, lanes: int, active: int, value: Handle | None
) -> bool:
    """Path 2 of `access`, the fast one: a contiguous ascending tile of a contiguous argument whose
    active lanes are a prefix (no mask, or the usual `offs < n` tail) is two ranges, touched and
    masked off, when it is in bounds. False (nothing recorded) when the tile is not that."""
    first = int(flat[0]) - v.base
    if not (lanes == 1 or bool(((flat[1:] - flat[:-1]) == v.itemsize).all())) or not (
        m is None or bool(m[:active].all())
    ):
        return False
    lo = first >> v.shift
    if not (lo >= 0 and lo + active <= v.numel and not (first & (v.itemsize - 1))):
        return False
    t = L.touched
    t.kinds.append(RANGE if active else 0)
    t.los.append(lo if active else 0)
    t.counts.append(active)
    t.chunks.append(b"")
    L.ex_oob.append(0)
    L.ex_vhash.append(0 if value is None else _fingerprint(lo, active, value.data.reshape(-1)[:active]))
    _add_empty(L.oob)
    if active == lanes:
        _add_empty(L.masked)
    else:
        k = L.masked
        k.kinds.append(RANGE)
        k.los.append(lo + active)
        k.counts.append(lanes - active)
        k.chunks.append(b"")
    return True


def _record_elements(
    L: _Launch,
    v: TensorView,
    flat: np.ndarray,
    m: np.ndarray | None,
    active: int,
    value: Handle | None,
    shape: tuple[int, ...],
) -> np.ndarray | None:
    """Path 3 of `access`, the general one: the element of every active lane (any layout, gathers,
    strided or broadcast tiles). A contiguous argument whose active lanes all fall inside it is
    encoded in one pass; otherwise each lane is classified, and the out-of-bounds ones are recorded
    and returned as the mask without them (None: the mask stands)."""
    d = flat.view(np.int64) - v.base
    new_mask = None
    if active == 0:
        L.ex_vhash.append(0)
        L.ex_oob.append(0)
        _add_empty(L.touched)
        _add_empty(L.oob)
    else:
        ad = d if m is None else d[m]
        done = False
        if v.contiguous:
            e = v.elements(ad)
            kind_, lo, count, payload = encode(e)
            hi = lo + count - 1 if kind_ == RANGE else int(e.max())
            if lo >= 0 and hi < v.numel and (v.shift < 0 or not (ad[0] & (v.itemsize - 1))):
                t = L.touched
                t.kinds.append(kind_)
                t.los.append(lo)
                t.counts.append(count)
                t.chunks.append(payload)
                L.ex_oob.append(0)
                L.ex_vhash.append(
                    0
                    if value is None
                    else _fingerprint(-1, e, value.data.reshape(-1) if m is None else value.data.reshape(-1)[m])
                )
                _add_empty(L.oob)
                done = True
        if not done:
            inb, flat_idx = v.classify(d)  # flat indices of the in-bounds lanes
            good = inb if m is None else (inb & m)
            bad = ~inb if m is None else (m & ~inb)
            n_bad = int(np.count_nonzero(bad))
            L.touched.add(flat_idx if m is None else flat_idx[m[inb]])
            L.ex_vhash.append(
                0
                if value is None
                else _fingerprint(
                    -1, flat_idx if m is None else flat_idx[m[inb]], value.data.reshape(-1)[good.reshape(-1)]
                )
            )
            L.ex_oob.append(n_bad)
            if n_bad:
                L.oob.add(v.elements(d[bad]))
                new_mask = good.reshape(shape)
            else:
                _add_empty(L.oob)
    if m is None:
        _add_empty(L.masked)
    else:
        L.masked.add(v.elements(d[~m]))
    return new_mask
