"""The project's own types: what a traced run produced and what the analysis found.

Everything above the trace layer (analysis, server, CLI, viewer) speaks these types only; none of
them know a triton release. Element sets are kept compact (see `elements.py`), never one int per lane.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

from .elements import ElementSets
from .remedies import PLAIN, Remedies, with_remedy

# Access kinds, as the user thinks of them.
LOAD, STORE, ATOMIC = "load", "store", "atomic"
KINDS = (LOAD, STORE, ATOMIC)

# Run statuses (RunResult.status) and finding kinds.
OK, EXCEPTION, TIMEOUT, CRASHED, NO_LAUNCH, ERROR = "ok", "exception", "timeout", "crashed", "no-launch", "error"


@dataclass
class TensorInfo:
    """One tensor argument of a launch, as the kernel saw it."""

    index: int  # position among the launch's tensor arguments
    name: str  # kernel parameter name, e.g. "x_ptr" (a tuple member is "t[1]", a descriptor "desc.base")
    shape: tuple[int, ...]
    strides: tuple[int, ...]  # in elements
    dtype: str  # torch-style short name, e.g. "float32"
    itemsize: int
    device: str = "cpu"

    @property
    def numel(self) -> int:
        n = 1
        for s in self.shape:
            n *= int(s)
        return n

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "name": self.name,
            "shape": list(self.shape),
            "strides": list(self.strides),
            "dtype": self.dtype,
            "itemsize": self.itemsize,
            "numel": self.numel,
            "device": self.device,
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> TensorInfo:
        return TensorInfo(
            d["index"],
            d["name"],
            tuple(d["shape"]),
            tuple(d["strides"]),
            d["dtype"],
            d["itemsize"],
            d.get("device", "cpu"),
        )


RANGE_FIELDS = ("file", "line", "col", "end_line", "end_col")


def call_range(where: Any) -> dict[str, Any]:
    """A call's range as a Finding's fields (file, line, col, end_line, end_col), of anything that has them:
    a Site, a DotSite, performance's LineMetrics, or a recorded site's JSON (a mapping)."""
    if isinstance(where, Mapping):
        return {k: where[k] for k in RANGE_FIELDS}
    return {k: getattr(where, k) for k in RANGE_FIELDS}


@dataclass(frozen=True)
class Site:
    """One memory-access call in the source: a `tl.load`/`tl.store`/atomic through one tensor argument."""

    file: str
    line: int  # 1-based, first line of the statement
    col: int  # 0-based column range of the call where Python gives it, else -1
    end_line: int
    end_col: int
    arg: int  # TensorInfo.index, or -1 when the pointer came from no tensor argument
    kind: str  # load | store | atomic
    op: str  # what the user wrote: "tl.load", "tl.atomic_add", "block_ptr load", "descriptor store", ...
    sem: str = ""  # an atomic's memory semantics: acq_rel | acquire | release | relaxed ("" for plain accesses)
    scope: str = ""  # an atomic's scope: gpu | cta | sys
    unmasked: bool = False  # the call has no mask argument

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "end_line": self.end_line,
            "end_col": self.end_col,
            "arg": self.arg,
            "kind": self.kind,
            "op": self.op,
            "sem": self.sem,
            "scope": self.scope,
            "unmasked": self.unmasked,
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> Site:
        return Site(
            d["file"],
            d["line"],
            d["col"],
            d["end_line"],
            d["end_col"],
            d["arg"],
            d["kind"],
            d["op"],
            d.get("sem", ""),
            d.get("scope", ""),
            d.get("unmasked", False),
        )


@dataclass(frozen=True)
class DotSite:
    """One `tl.dot` call in the source, with its operand and accumulator dtypes."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int
    a_dtype: str  # triton names: "fp32", "fp16", "bf16", "fp8e4nv", ...
    b_dtype: str
    acc_dtype: str
    precision: str = ""  # input_precision as compiled: "tf32" (the default for fp32), "tf32x3", "ieee", ...

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "end_line": self.end_line,
            "end_col": self.end_col,
            "a_dtype": self.a_dtype,
            "b_dtype": self.b_dtype,
            "acc_dtype": self.acc_dtype,
            "precision": self.precision,
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> DotSite:
        return DotSite(
            d["file"],
            d["line"],
            d["col"],
            d["end_line"],
            d["end_col"],
            d["a_dtype"],
            d["b_dtype"],
            d["acc_dtype"],
            d.get("precision", ""),
        )

    @property
    def runs_in_tf32(self) -> bool:
        """Compiled for an NVIDIA GPU, float32 operands enter the tensor cores as TF32: 10 of their 23
        mantissa bits are kept, the rest dropped (measured on an H200: tests/gpu/tf32_probe.py)."""
        return self.precision == "tf32" and self.a_dtype == "fp32" and self.b_dtype == "fp32"


TILE_VALUES_LIMIT = 1 << 21  # float32 values of tl.dot tiles a launch keeps (8 MB), for the viewer


def value_sample_steps(rows: int, cols: int, limit: int) -> tuple[int, int]:
    """(rs, cs): the smallest step s, in rows and in columns alike, whose sample of 1 in s rows x 1 in s
    columns has at most `limit` elements; one row (a 1-D tensor) steps its columns only."""
    if rows * cols <= limit:
        return 1, 1
    if rows <= 1:
        return 1, -(-cols // max(1, limit))
    s = 2
    while -(-rows // s) * -(-cols // s) > limit:
        s += 1
    return s, s


def _empty_i32() -> np.ndarray:
    return np.empty(0, dtype=np.int32)


@dataclass
class DotTrace:
    """Every execution of a `tl.dot`, columnar: which site, which program, the product's M x N x K,
    and the execution rows of the loads that produced its A and B operands (-1: the operand was
    computed in the kernel, or converted after its load)."""

    sites: list[DotSite] = field(default_factory=list)
    site: np.ndarray = field(default_factory=_empty_i32)
    program: np.ndarray = field(default_factory=_empty_i32)
    a_row: np.ndarray = field(default_factory=_empty_i32)
    b_row: np.ndarray = field(default_factory=_empty_i32)
    m: np.ndarray = field(default_factory=_empty_i32)
    n: np.ndarray = field(default_factory=_empty_i32)
    k: np.ndarray = field(default_factory=_empty_i32)
    # For a call whose operands run in TF32 (DotSite.runs_in_tf32): the largest |difference| between
    # the product with TF32 operands (the one this run computed, as the GPU does) and the IEEE float32
    # product, and the largest |product|; -1 for other calls.
    tf32_dev: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.float64))
    magnitude: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.float64))
    # The values of the A, B and C tiles (C: the dot's result, acc + A @ B as the run computed it) of
    # the executions that kept them (a 2-D dot of one of the launch's first programs, within
    # TILE_VALUES_LIMIT; recorder.py says which): tile_row the execution rows, ascending; tile_data
    # float32, each kept row's m*k + k*n + m*n values row-major, from tile_start[j].
    tile_row: np.ndarray = field(default_factory=_empty_i32)
    tile_start: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))
    tile_data: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.float32))

    COLUMNS = ("site", "program", "a_row", "b_row", "m", "n", "k", "tf32_dev", "magnitude")
    TILE_COLUMNS = ("tile_row", "tile_start", "tile_data")

    def __len__(self) -> int:
        return int(self.site.size)

    def tiles(self, row: int) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The (A, B, C) tile values of execution `row`, shaped (m, k), (k, n), (m, n); None when its
        values were not kept."""
        j = int(np.searchsorted(self.tile_row, row))
        if j >= self.tile_row.size or int(self.tile_row[j]) != row:
            return None
        m, n, k = int(self.m[row]), int(self.n[row]), int(self.k[row])
        flat = self.tile_data[int(self.tile_start[j]) : int(self.tile_start[j + 1])]
        a, b = flat[: m * k].reshape(m, k), flat[m * k : m * k + k * n].reshape(k, n)
        return a, b, flat[m * k + k * n :].reshape(m, n)

    def flops(self, rows: np.ndarray | None = None) -> int:
        """2 * M * N * K per execution (a multiply and an add per term), summed."""
        m, n, k = (getattr(self, c).astype(np.int64) for c in ("m", "n", "k"))
        if rows is not None:
            m, n, k = m[rows], n[rows], k[rows]
        return int((2 * m * n * k).sum())


@dataclass(frozen=True)
class LaunchStart:
    """A launch about to run its programs (its arguments converted, its grid known): what a recorder's
    `on_launch_start` gets (the Triton-Viz API's `Client.on_launch_start` is built from it)."""

    kernel: str
    def_file: str
    def_line: int
    file: str
    line: int
    grid: tuple[int, int, int]
    tensors: list[TensorInfo]


@dataclass(frozen=True)
class AccessEvent:
    """One execution of a load/store/atomic just recorded: what a recorder's `on_access` gets, in the
    order the program ran them. `sets`: its touched, masked and out-of-bounds element sets, each as
    model.elements encodes one execution (kind, lo, count, payload)."""

    site: Site
    program: tuple[int, int, int]
    tensor: TensorInfo | None
    lanes: int
    active: int
    oob: int
    sets: tuple[tuple[int, int, int, bytes], ...]


@dataclass
class LaunchTrace:
    """Everything one kernel launch did, one row per execution of an access (columnar arrays).

    An execution is one call of a load/store/atomic by one program (a loop body runs it many times).
    `touched` holds, per execution, the flat row-major indices of the tensor elements its active,
    in-bounds lanes touched. `masked` and `oob` hold element offsets from the tensor's first element
    (signed, may fall outside it) of its masked-off lanes and of its active out-of-bounds lanes.
    """

    index: int  # 0-based across the run
    kernel: str
    def_file: str
    def_line: int
    file: str  # where the launch was made (first frame outside triton), 1-based line
    line: int
    grid: tuple[int, int, int]
    tensors: list[TensorInfo]
    sites: list[Site]
    ex_site: np.ndarray  # int32[n]
    ex_program: np.ndarray  # int32[n], linear program id: x + gx*(y + gy*z)
    ex_lanes: np.ndarray  # int32[n]
    ex_active: np.ndarray  # int32[n], mask true (in bounds or not)
    ex_oob: np.ndarray  # int32[n], active lanes outside the tensor
    touched: ElementSets
    masked: ElementSets
    oob: ElementSets
    values: dict[int, np.ndarray] = field(default_factory=dict)  # tensor index -> values after the launch
    # int64[n]: per store execution a fingerprint of (elements, stored values) of its active in-bounds
    # lanes, 0 for other executions; two executions with one fingerprint wrote the same values to the same
    # elements. Empty when not recorded.
    ex_vhash: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # int32[n]: per execution on a tensor of 2 or more dimensions, the active in-bounds lanes of a line of
    # the pointer block that started inside a row and ran on into a later row (trace_engine/recording/rows.py);
    # -1 when a line did not start on the block grid of its row (the kernel walks flat memory, not rows).
    # Empty when not recorded.
    ex_overrun: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))
    # tensor index -> [start, len, ...] runs of its flat elements that nothing had written before the
    # launch (memory from torch.empty & co.); a tensor not listed was fully written, or is not tracked.
    unwritten_before: dict[int, np.ndarray] = field(default_factory=dict)
    seconds: float = 0.0
    complete: bool = True  # False when the launch was cut short (exception, timeout, crash)
    dots: DotTrace = field(default_factory=DotTrace)
    values_before: dict[int, np.ndarray] = field(default_factory=dict)  # inputs' values before the launch
    # tensor index -> (rs, cs) when its `values` / `values_before` are a sample (a tensor over the value
    # limit): 1 in rs rows x 1 in cs columns (the last dimension the columns, the others folded into rows),
    # flat in the sample's row-major order; a tensor not listed has all its values
    value_steps: dict[int, tuple[int, int]] = field(default_factory=dict)
    # where an in-kernel tl.make_tensor_descriptor ran with no triton.set_allocator (file, line, col, ...)
    scratch_site: dict[str, Any] | None = None
    # the size check's confirmed findings at other sizes (trace_engine/recording/size_probe.py: oob-sizes, wrap),
    # as JSON objects; analysis/sizes.py makes them Findings
    size_findings: list[dict[str, Any]] = field(default_factory=list)
    # what the size check ran at, per size it moved: {"script": "n = 4096", "tail": "n = 4097" or None
    # (the grid's corner programs), "largest": "n = ..." or None (the last program, at the largest size the
    # GPU holds), "gpu": that GPU's name, "stopped": True when its budget ran out before it finished,
    # "grid_limit": {"axis", "most"} where CUDA's grid limit, not memory, bounded "largest"}
    size_checked: list[dict[str, Any]] = field(default_factory=list)
    # An autotuned launch: {"config": its config's label (`BLOCK=64, num_warps=8`), "rank": its place in
    # the user's list of configs, "trial": True for a launch made only to try a config (kept for its
    # findings, RunResult.autotune_trials), and on the launch kept, "configs": the labels of every config
    # tried, in the order tried}. None for a launch no autotuner tuned.
    autotune: dict[str, Any] | None = None

    @property
    def n_programs(self) -> int:
        return int(self.grid[0] * self.grid[1] * self.grid[2])

    @overload
    def program_coords(self, linear: int) -> tuple[int, int, int]: ...
    @overload
    def program_coords(self, linear: NDArray[np.integer]) -> tuple[NDArray[np.integer], ...]: ...

    def program_coords(self, linear: int | NDArray[np.integer]) -> tuple[Any, ...]:
        """(x, y, z) of a linear program id (x fastest), or of an array of them."""
        gx, gy, _ = self.grid
        x = linear % gx
        y = (linear // gx) % gy
        z = linear // (gx * gy)
        return x, y, z


@dataclass
class ScriptError:
    """The user's script raised, timed out, crashed or exited badly."""

    kind: str  # exception | timeout | crashed | error
    type: str  # exception class name, "SIGSEGV", "MemoryError", ...
    message: str
    file: str | None = None  # innermost frame in the analysed file (or the script), 1-based line
    line: int | None = None
    traceback: str = ""
    # An error triton's compiler raises at one expression of a kernel (semantics.WouldNotCompile): the
    # expression's 0-based columns (as a Finding's) and end line; the script would stop there on a GPU too.
    col: int | None = None
    end_line: int | None = None
    end_col: int | None = None
    would_not_compile: bool = False
    # What the user can do about it, as a kind of model/remedies.py: each front end phrases it (`text`).
    remedy: str | None = None

    def text(self, words: Remedies = PLAIN) -> str:
        """The message with the remedy in a front end's words."""
        return with_remedy(self.message, self.remedy, words)

    def to_json(self) -> dict[str, Any]:
        out = {
            "kind": self.kind,
            "type": self.type,
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "traceback": self.traceback,
        }
        if self.would_not_compile:
            out.update(col=self.col, end_line=self.end_line, end_col=self.end_col, would_not_compile=True)
        if self.remedy is not None:
            out["remedy"] = self.remedy
        return out


@dataclass
class KernelDef:
    """A @triton.jit function the run saw defined (launched or not)."""

    name: str
    file: str
    line: int  # line of the `def`


@dataclass
class BenchTiming:
    """A benchmark call (triton.testing.do_bench) that timed the CPU interpreter instead of a GPU."""

    file: str
    line: int
    ms: float
    what: str  # "triton.testing.do_bench"

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "ms": round(self.ms, 3), "what": self.what}


@dataclass
class CudaStandIn:
    """The run stood in CPU tensors for CUDA ones: the script asked for CUDA and no GPU ran anything."""

    gpu: str  # the GPU the script was told it has, e.g. "NVIDIA H100 80GB HBM3"
    reason: str  # "no CUDA device on this machine" | "asked for (--cpu / tritonLens.device)"
    used: list[str] = field(
        default_factory=list
    )  # what of CUDA the script used: "cuda tensors", "torch.cuda.synchronize"
    timed: list[BenchTiming] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "gpu": self.gpu,
            "reason": self.reason,
            "used": list(self.used),
            "timed": [t.to_json() for t in self.timed],
        }

    @staticmethod
    def from_json(d: dict[str, Any]) -> CudaStandIn:
        return CudaStandIn(
            d["gpu"],
            d["reason"],
            list(d.get("used", [])),
            [BenchTiming(t["file"], t["line"], t["ms"], t["what"]) for t in d.get("timed", [])],
        )


@dataclass
class RunResult:
    file: str
    status: str  # ok | exception | timeout | crashed | no-launch | error
    launches: list[LaunchTrace] = field(default_factory=list)
    kernels: list[KernelDef] = field(default_factory=list)
    error: ScriptError | None = None
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0
    triton_version: str = ""
    worker_pid: int = 0
    cuda_standin: CudaStandIn | None = None  # set when CPU tensors stood in for CUDA ones
    # The launch in progress when the run was stopped (a kernel that hung inside its launch):
    # {"kernel", "launch", "done", "total"} from its last progress report, else None.
    in_launch: dict[str, Any] | None = None
    # The launches an autotuner made to try its configs (LaunchTrace.autotune["trial"]): each one's index
    # is that of the launch it tuned (the one kept). Read for their findings only (analysis/autotune.py).
    autotune_trials: list[LaunchTrace] = field(default_factory=list)
    # The torch.empty buffers launches took (trace_engine/recording/host_writes.py, sent at the end of the run):
    # {"uses": [[launch, tensor index], ...], "host_read_after": how many uses came before the host first
    # read an element nothing had written, or None}. None when the run did not report them.
    scratch_buffers: list[dict[str, Any]] | None = None
    # Modules of this tool, triton, numpy and z3 that the run's worker imported after it started (each one
    # every run pays for; the worker imports them before its forks: process/worker.py). Empty as a rule.
    late_imports: list[str] = field(default_factory=list)


@dataclass
class AccessStats:
    """Per (file, line, arg, kind), summed over launches."""

    file: str
    line: int
    col: int
    end_line: int
    end_col: int
    arg: str
    kind: str
    op: str
    launches: int
    programs: int
    lanes: int
    active: int
    unique: int
    oob: int
    bytes: int
    executions: int
    # A readable summary of the elements touched, e.g. "x[0:1000]" or "a[0:48, 0:72]".
    extent: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "end_line": self.end_line,
            "end_col": self.end_col,
            "arg": self.arg,
            "kind": self.kind,
            "op": self.op,
            "launches": self.launches,
            "programs": self.programs,
            "lanes": self.lanes,
            "active": self.active,
            "unique": self.unique,
            "oob": self.oob,
            "bytes": self.bytes,
            "executions": self.executions,
            "extent": self.extent,
        }


@dataclass
class Related:
    file: str
    line: int
    col: int
    end_line: int
    end_col: int
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "end_line": self.end_line,
            "end_col": self.end_col,
            "message": self.message,
        }


@dataclass
class Finding:
    kind: str  # oob | oob-sizes | wrap | overrun | race | dead | unwritten | uninit | exception | timeout | crashed | no-launch
    severity: str  # error | warning | information
    file: str
    line: int
    message: str
    col: int = -1
    end_line: int = 0
    end_col: int = -1
    arg: str = ""
    access: str = ""  # load | store | atomic
    lanes: int = 0
    programs: int = 0
    elements: int = 0
    example_programs: list[tuple[int, ...]] = field(default_factory=list)  # as the user writes them: (7,), (1, 2)
    example_elements: list[int] = field(default_factory=list)
    related: list[Related] = field(default_factory=list)
    detail: str = ""  # longer text: a traceback, the lists behind the counts
    # oob-sizes and wrap: the size that showed it (size, size_value, grid, assumed readings, the operation)
    witness: dict[str, Any] = field(default_factory=dict)
    # a stopped run's remedy (model/remedies.py), phrased into `message` by analyze(result, remedies)
    remedy: str | None = None

    @classmethod
    def at(cls, where: Any, *, kind: str, severity: str, message: str, **fields: Any) -> Finding:
        """A finding at a call's range (`call_range`: a Site, DotSite, LineMetrics or a site's JSON), so
        that it points at the exact tl.load(...) / tl.store(...) / tl.dot(...) call, the range copied once."""
        return cls(kind=kind, severity=severity, message=message, **call_range(where), **fields)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "severity": self.severity,
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "end_line": self.end_line or self.line,
            "end_col": self.end_col,
            "arg": self.arg,
            "access": self.access,
            "lanes": self.lanes,
            "programs": self.programs,
            "elements": self.elements,
            "message": self.message,
            "example_programs": [list(p) for p in self.example_programs],
            "example_elements": list(self.example_elements),
            "related": [r.to_json() for r in self.related],
            "detail": self.detail,
            **({"witness": self.witness} if self.witness else {}),
            **({"remedy": self.remedy} if self.remedy else {}),
        }
