"""The size check: after a launch, the same kernel at other sizes it admits, confirmed by running it.

For each size of the launch (size_model.py: an integer argument or a tensor dimension, and everything
equal to it), two questions, each answered by re-launching the kernel at that size:
- `oob-sizes`: at the size just above the script's (n + 1, the ragged neighbour of a size that was a
  multiple of the block), do the corner programs of the new grid send active lanes out of a tensor?
- `wrap`: as the size grows to the largest the target GPU's memory holds (int32 arguments staying
  int32, the grid within CUDA's limits: size_model.GRID_LIMITS), does a signed 32-bit add, sub, mul or
  shift in the last program overflow? The smallest size where it does (found by bisection) is run, and
  the accesses whose lanes then leave their tensor are the finding, with the operation that overflowed.
A re-launch runs only the programs it needs (compat.relaunch), on address-only memory: every tensor is
one real element, its shape and strides are the size's (the recorder checks bounds against them), and
every lane is masked off after it is recorded, so no size allocates and nothing is read or written.
Loads then return zeros: offsets computed from loaded values (gathers) are not checked beyond the run.

The grid follows a size only where the launch says how: a grid function (called again with the new
arguments, its closure and globals read at the new size), or a grid written in the launch statement
(its expression evaluated again with the new sizes). A grid passed as numbers is held. A re-launch that
raises (a `tl.assume`, `tl.static_assert`, `tl.device_assert` or a scalar's `tl.multiple_of` the size breaks)
is a size the kernel does not admit: no finding; nor is one the kernel's `# triton-lens: sizes` conditions
refuse (source/size_conditions.py). Nor is one whose grid CUDA cannot launch (y or z past 65535, x past
2**31 - 1): no size past those limits is run, from any of the paths. Nothing here changes the script's
state: new tensors, the script's own values untouched, every patch removed after each re-launch.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import os
import textwrap
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

import numpy as np

from ...source.size_conditions import SizeConditions, conditions_for
from ..interpreter import compat
from .size_model import (
    GRID_LIMITS,
    GRID_META,
    INT32_MAX,
    Resize,
    TensorSpec,
    candidate_sizes,
    describe_size,
    grid_excess,
    grid_fits,
    largest_fitting,
    per_program_blocks,
    resize,
    spec_of,
)

if TYPE_CHECKING:
    from ...model import LaunchTrace
    from .size_symbolic import Work

Grid = tuple[int, int, int]
# An access of a launch by source position: (file, line, col, tensor argument index, kind).
SitePos = tuple[str, int, int, int, str]
# A finding or a record of what a check tried, as the `sizes` frame and the cache across runs carry it (JSON).
JsonDict = dict[str, Any]


class OobSite(TypedDict):
    """What went out of bounds at one access of a launch (`_oob_sites`)."""

    site: JsonDict  # Site.to_json()
    arg: str  # the tensor argument's name, "?" when the pointer came from none
    lanes: int
    programs: list[list[int]]  # [x], [x, y] or [x, y, z], as many axes as the grid has
    first: int  # the first element offset out of bounds
    overflow: int  # index into ProbeRun.overflows of the overflow last before it, -1 when none


class ProbeRecorder(Protocol):
    """What the size check needs of the recorder (recorder.Recorder) for its re-launches."""

    probe_overflow_at: dict[int, int]

    def begin_probe(self, tensors: dict[str, TensorSpec], budget: Budget, overflows: list[Overflow]) -> None: ...

    def end_probe(self) -> LaunchTrace | None: ...


class GridAt(Protocol):
    """How a launch's grid follows a size: Resize -> the new grid, None where it cannot be worked out."""

    def __call__(self, r: Resize, la: LaunchArgs, /) -> Grid | None: ...


# The size check of one launch stops after this many recorded accesses of its re-launches (what it found
# stands). Counted in accesses, not seconds, so that the same file gives the same findings on an idle
# laptop and on a loaded CI runner. The corpus's costliest launch (attention_4d, whose sequence loop grows
# with S) spends 1457, under 1 s in-process on an idle 2-core VM (420 before each access got its own
# wrap search; bench/results/size_check_2026-12-02.txt). SAFETY_S only stops a check whose
# re-launches compute for long between accesses (then what it found depends on the machine).
ACCESS_BUDGET = 2_000
SAFETY_S = 30.0
# How far from a size the check looks for one the kernel's `# triton-lens: sizes` conditions admit (the next
# multiple of 16 above n + 1, the largest below what memory holds): conditions are evaluated, not run.
SNAP = 4096


class ProbeTimeout(BaseException):
    """Raised from the recorder's access hook when a re-launch runs past its budget (the size's share, or
    the launch's whole budget); with an argument (the reason) when the whole check must stop."""


class Budget:
    """What one launch's size check may still spend: accesses, and a wall-clock guard."""

    def __init__(self, accesses: int = ACCESS_BUDGET, seconds: float = SAFETY_S):
        self.left = accesses
        self.spent = 0
        self.cap = accesses  # what the size being checked may spend up to (SizeCheck.check shares the budget)
        self.deadline = time.monotonic() + seconds

    def spend(self) -> None:
        self.spent += 1
        if self.spent > self.cap or (self.spent & 63 == 0 and self._past_deadline()):
            raise ProbeTimeout()

    def _past_deadline(self) -> bool:
        if time.monotonic() > self.deadline:
            self.timed_out = True
        return self.timed_out

    timed_out = False  # the wall-clock guard stopped the check (its result is then the machine's)

    @property
    def exhausted(self) -> bool:
        return self.spent >= self.left or self._past_deadline()


@dataclass
class Overflow:
    op: str  # "create_mul"
    text: str  # the expression as written: "row * stride"
    file: str
    line: int
    col: int
    end_col: int
    operands: tuple[int, int]  # the first overflowing lane's operands


@dataclass
class ProbeRun:
    admitted: bool
    oob: dict[SitePos, OobSite] = field(default_factory=dict)  # site position key -> what went out of bounds
    overflows: list[Overflow] = field(default_factory=list)


@dataclass
class LaunchArgs:
    """One launch, as the size check reads it."""

    executor: Any  # triton's interpreter GridExecutor (untyped)
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    names: list[str]  # every parameter, in order
    constexprs: set[str]
    ints: dict[str, int]
    tensors: dict[str, TensorSpec]
    devices: dict[str, Any]  # tensor name -> (dtype, device) of the real argument
    grid: Grid
    grid_at: GridAt | None  # None when the grid is held
    # (meta-parameter, fn of the arguments) of @triton.heuristics
    heuristics: list[tuple[str, Callable[[dict[str, Any]], Any]]] = field(default_factory=list)


def _grid3(g: Any) -> Grid | None:
    """A grid as three ints (1 for a missing axis), or None when `g` is no grid of 1 to 3 positive ints."""
    try:
        t = tuple(int(x) for x in g)
    except Exception:
        return None
    if not 1 <= len(t) <= 3 or any(x < 1 for x in t):
        return None
    t = t + (1,) * (3 - len(t))
    return (t[0], t[1], t[2])


_ast_cache: dict[tuple[str, int], ast.AST | None] = {}


def _launch_call(frame: types.FrameType) -> ast.Call | None:
    """The `kernel[grid](...)` call the frame is executing, from its source."""
    file = frame.f_code.co_filename
    lines = linecache.getlines(file, frame.f_globals)
    key = (file, hash("".join(lines)))
    tree = _ast_cache.get(key)
    if key not in _ast_cache:
        try:
            tree = ast.parse("".join(lines))
        except (SyntaxError, ValueError):
            tree = None
        _ast_cache[key] = tree
    if tree is None:
        return None
    try:
        code: Any = frame.f_code  # co_positions: Python 3.11+ (mypy checks for the oldest supported)
        pos: tuple[int | None, ...] = list(code.co_positions())[frame.f_lasti // 2]
    except Exception:
        pos = (frame.f_lineno, frame.f_lineno, None, None)
    line = pos[0]
    if line is None:
        return None
    best = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript):
            if node.lineno <= line <= (node.end_lineno or node.lineno):
                if best is None or node.lineno >= best.lineno:
                    best = node
    return best


def _substituted(ns: dict[str, Any], r: Resize, by_id: dict[int, str], meta: dict[str, Any]) -> dict[str, Any]:
    """A copy of a namespace with the size's ints changed and the launch's tensors (and any tensor with a
    dimension of that size) replaced by meta tensors of their new shape."""
    import torch

    out = dict(ns)
    for k, v in ns.items():
        if type(v) is int and v == r.old:
            out[k] = r.new
        elif isinstance(v, torch.Tensor):
            name = by_id.get(id(v))
            if name is not None:
                out[k] = meta[name]
            elif r.old in v.shape:
                out[k] = torch.empty(tuple(r.new if d == r.old else d for d in v.shape), dtype=v.dtype, device="meta")
    return out


def _meta_tensors(la: LaunchArgs, r: Resize) -> dict[str, Any]:
    import torch

    return {
        n: torch.empty_strided(s.shape, s.strides, dtype=la.devices[n][0], device="meta") for n, s in r.tensors.items()
    }


def grid_function(executor: Any, frame: types.FrameType | None, by_id: dict[int, str]) -> GridAt | None:
    """How the launch's grid follows a size: a function Resize -> grid, or None (held)."""
    grid = executor.grid
    if callable(grid):
        fn = inspect.unwrap(grid)  # the user's function under the engine's list-grid wrapper

        def at_callable(r: Resize, la: LaunchArgs) -> Grid | None:
            meta = _meta_tensors(la, r)
            g = getattr(fn, "__globals__", None)
            code = getattr(fn, "__code__", None)
            if g is None or code is None:
                return None
            cells = fn.__closure__ or ()
            new_cells = tuple(types.CellType(_substituted({"v": c.cell_contents}, r, by_id, meta)["v"]) for c in cells)
            f2 = types.FunctionType(code, _substituted(g, r, by_id, meta), fn.__name__, fn.__defaults__, new_cells)
            named = {n: la.kwargs.get(n, a) for n, a in zip(la.names, la.args)}
            named.update(la.kwargs)
            named.update(r.ints)
            named.update(meta)
            return _grid3(f2(named))

        # Its returned expression, where its source says it (a lambda or a one-return function), for z3
        # (SizeCheck._symbolic): read, never run (at_callable above runs it).
        at_callable.expression = _callable_expression(fn, by_id)  # type: ignore[attr-defined]
        return at_callable
    if frame is None:
        return None
    call = _launch_call(frame)
    if call is None:
        return None
    assert isinstance(call.func, ast.Subscript)
    node = call.func.slice
    if not isinstance(node, (ast.Tuple, ast.List)):
        return None  # a name: numbers computed before the launch statement are held
    code_obj = compile(ast.Expression(body=node), frame.f_code.co_filename, "eval", dont_inherit=True)
    f_globals, f_locals = frame.f_globals, dict(frame.f_locals)

    def at_expression(r: Resize, la: LaunchArgs) -> Grid | None:
        meta = _meta_tensors(la, r)
        return _grid3(eval(code_obj, _substituted(f_globals, r, by_id, meta), _substituted(f_locals, r, by_id, meta)))

    # What the expression reads, for the key of the check's result across runs (size_cache.launch_key):
    # its text, and each name it loads with its value (a launch's tensor by its argument's name).
    scope: dict[str, Any] = {}
    for n in sorted({x.id for x in ast.walk(node) if isinstance(x, ast.Name)}):
        v = f_locals[n] if n in f_locals else f_globals[n] if n in f_globals else None
        scope[n] = (v, by_id.get(id(v)))
    # An attribute of the function (GridAt has none: a held grid or a grid function has no expression),
    # read back with getattr by size_cache.launch_key and SizeCheck._symbolic.
    at_expression.expression = (ast.unparse(node), scope)  # type: ignore[attr-defined]
    return at_expression


def _callable_expression(fn: Any, by_id: dict[int, str]) -> tuple[str, dict[str, tuple[Any, str | None]]] | None:
    """A grid function's returned expression as text, with the values of the names it reads: the source of
    a lambda's body (its code's positions), or of a function whose body is one `return`. None otherwise."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_argcount != 1 or code.co_kwonlyargcount or code.co_flags & 0x0C:
        return None
    param = code.co_varnames[0]
    node: ast.expr | None = None
    if fn.__name__ == "<lambda>":
        # every instruction's source span but empty ones (the function's start and return point at column 0)
        spans = [p for p in code.co_positions() if None not in p and (p[0], p[2]) != (p[1], p[3])]
        lines = linecache.getlines(code.co_filename)
        if not spans or not lines:
            return None
        (l0, c0), (l1, c1) = min((p[0], p[2]) for p in spans), max((p[1], p[3]) for p in spans)
        text = "".join(lines[l0 - 1 : l1])
        # the body's text: from its first column on its first line to its last column on its last line
        end = len("".join(lines[l0 - 1 : l1 - 1])) + c1
        try:
            node = ast.parse(text[c0:end].strip(), mode="eval").body
        except SyntaxError:
            return None
    else:
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        except (OSError, TypeError, SyntaxError):
            return None
        f = tree.body[0] if tree.body else None
        body = f.body if isinstance(f, ast.FunctionDef) else []
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]  # a docstring
        if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
            node = body[0].value
    if node is None:
        return None
    free = dict(zip(code.co_freevars, (c.cell_contents for c in (fn.__closure__ or ()))))
    scope: dict[str, tuple[Any, str | None]] = {}
    for n in sorted({x.id for x in ast.walk(node) if isinstance(x, ast.Name)}):
        if n == param:
            scope[n] = (GRID_META, None)
            continue
        v = free[n] if n in free else fn.__globals__.get(n)
        scope[n] = (v, by_id.get(id(v)))
    return ast.unparse(node), scope


def _heuristics_again(la: LaunchArgs, r: Resize, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """The launch's @triton.heuristics values worked out again at the new size, as the host would
    (cut-cross-entropy's EVEN_D = D % BLOCK_D == 0 picks the unmasked loads at D = 64, not at 65).
    Tensors reach a heuristic as meta tensors of their new shape; one that raises keeps its value."""
    if not la.heuristics:
        return
    import torch

    named: dict[str, Any] = dict(zip(la.names, args))
    named.update(kwargs)
    for name, spec in r.tensors.items():
        if name in named and name in la.devices:
            named[name] = torch.empty_strided(spec.shape, spec.strides, dtype=la.devices[name][0], device="meta")
    for name, fn in la.heuristics:
        if name not in kwargs:
            continue
        try:
            kwargs[name] = named[name] = fn(named)
        except Exception:
            pass


def read_launch(
    executor: Any, args: tuple[Any, ...], kwargs: dict[str, Any], frame: types.FrameType | None
) -> LaunchArgs | None:
    """The launch's integer and tensor arguments, or None when it has arguments the check does not
    model (tuples, descriptors, block pointers made on the host)."""
    import torch

    names = list(executor.arg_names)
    constexprs = set(getattr(executor, "constexprs", ()) or ())
    bound: dict[str, Any] = dict(zip(names, args))
    bound.update({k: v for k, v in kwargs.items() if k in names})
    ints: dict[str, int] = {}
    tensors: dict[str, TensorSpec] = {}
    devices: dict[str, Any] = {}
    by_id: dict[int, str] = {}
    for name, v in bound.items():
        if name in constexprs:
            continue
        if isinstance(v, torch.Tensor):
            tensors[name] = spec_of(v)
            devices[name] = (v.dtype, v.device)
            by_id[id(v)] = name
        elif type(v) is int:
            ints[name] = v
        elif v is None or isinstance(v, (float, bool, str)):
            continue
        elif hasattr(v, "data_ptr") or isinstance(v, (tuple, list)):
            return None
    grid = executor.grid
    try:
        g0 = _grid3(grid(bound) if callable(grid) else grid)
    except Exception:
        g0 = None
    if g0 is None:
        return None
    try:
        at = grid_function(executor, frame, by_id)
    except Exception:
        at = None
    return LaunchArgs(
        executor, args, kwargs, names, constexprs, ints, tensors, devices, g0, at, compat.heuristics_in_flight()
    )


def _last_programs(grid: Grid, launched: Grid) -> list[Grid]:
    """The programs a wrap is looked for in: the last along every axis, and the one that is last along the
    axes that grew with the size and first along those that did not. A wrapped offset is negative; in
    the last batch of a tensor it can land inside an earlier batch (wrong data, no fault), in the first
    it leaves the tensor, where address-only memory sees it."""
    last = (grid[0] - 1, grid[1] - 1, grid[2] - 1)
    first_held = (
        grid[0] - 1 if grid[0] != launched[0] else 0,
        grid[1] - 1 if grid[1] != launched[1] else 0,
        grid[2] - 1 if grid[2] != launched[2] else 0,
    )
    return [last] if first_held == last else [last, first_held]


def _corners(grid: Grid) -> list[Grid]:
    out: list[Grid] = []
    for x in sorted({0, grid[0] - 1}):
        for y in sorted({0, grid[1] - 1}):
            for z in sorted({0, grid[2] - 1}):
                out.append((x, y, z))
    return out


class SizeCheck:
    """The size check of one run's launches (the recorder owns one and calls `check` after a launch)."""

    def __init__(
        self, recorder: ProbeRecorder, memory_bytes: int, gpu_name: str, cache: dict[str, JsonDict] | None = None
    ) -> None:
        self.rec = recorder
        # Results of earlier runs (size_cache.py: key -> {"findings", "checked"}); None: no cache across runs.
        self.cache = cache
        self._entry: JsonDict | None = None  # the last check's, for the runner: {"key", "value"} or {"key", "hit"}
        from .size_symbolic import version

        self.symbolic = version()  # z3's version when the extra is importable (size_symbolic.py), else None
        self.memory_bytes = memory_bytes
        self.gpu_name = gpu_name
        self._done: dict[
            tuple[Any, ...], tuple[list[JsonDict], list[JsonDict]]
        ] = {}  # per configuration and sizes: (found, checked)
        # What the last check tried, per size it moved (for the hover: "checked at n = 4097 and n = ..."):
        # {"script": "n = 4096", "tail": "n = 4097" or None, "largest": "n = ..." or None, "stopped": bool}
        self.last_checked: list[JsonDict] = []
        self._budget = Budget()
        self._blocks: frozenset[tuple[int, int]] = frozenset()  # size_model.per_program_blocks of the size
        self.spent: list[int] = []  # accesses each check spent (bench/size_check.py reads it)
        self._z3_work: Work | None = None  # z3's resource count left to the launch being checked
        self._conds = SizeConditions()  # the launch being checked's `# triton-lens: sizes` (source/size_conditions.py)
        self._fixed: dict[str, int] = {}  # its integer constexprs, which the conditions may name

    # -- one re-launch ---------------------------------------------------------------------------
    def probe(self, la: LaunchArgs, r: Resize, grid: Grid, programs: list[Grid], watch_overflow: bool) -> ProbeRun:
        import torch

        small = {}
        for name, (dtype, device) in la.devices.items():
            small[name] = torch.zeros(1, dtype=dtype, device=device)
        args = tuple(
            small[n] if n in small else r.ints.get(n, a) if n in r.ints else a for n, a in zip(la.names, la.args)
        )
        kwargs = {k: small[k] if k in small else r.ints.get(k, v) for k, v in la.kwargs.items()}
        if not self._admits(r):
            return ProbeRun(admitted=False)  # the kernel's `# triton-lens: sizes` refuses it, as a tl.assume would
        _heuristics_again(la, r, args, kwargs)
        run = ProbeRun(admitted=True)

        def on_overflow(op: str, lhs: np.ndarray, rhs: np.ndarray, lanes: np.ndarray) -> None:
            from .recorder import _call_position, _user_frame

            f = _user_frame(3)
            file, line, col, _, end_col = _call_position(f)
            text = ""
            if f is not None and col >= 0:
                src = linecache.getline(f.f_code.co_filename, line)
                text = src[col:end_col] if end_col > col else ""
            k = int(np.flatnonzero(lanes.reshape(-1))[0])
            run.overflows.append(
                Overflow(op, text, file, line, col, end_col, (int(lhs.reshape(-1)[k]), int(rhs.reshape(-1)[k])))
            )

        self.rec.begin_probe({n: r.tensors[n] for n in small}, self._budget, run.overflows)
        try:
            # a tl.multiple_of the size breaks raises, as a broken tl.assume does: not a size the kernel admits
            with np.errstate(all="ignore"), compat.claims_checked(set(r.ints.values())):
                if watch_overflow:
                    with compat.int32_overflows(on_overflow):
                        compat.relaunch(la.executor, programs, grid, args, kwargs)
                else:
                    compat.relaunch(la.executor, programs, grid, args, kwargs)
        except ProbeTimeout:
            raise
        except Exception:
            run.admitted = False
        finally:
            trace = self.rec.end_probe()
        if trace is not None and run.admitted:
            run.oob = _oob_sites(trace, self.rec.probe_overflow_at)
        return run

    # -- the author's conditions on sizes (source/size_conditions.py) ---------------------------------
    def _admits(self, r: Resize) -> bool:
        return self._conds.holds({**self._fixed, **r.ints})

    def _admits_value(self, v: int, n: int, la: LaunchArgs) -> bool:
        """The conditions at size n, read from the integer arguments alone (no Resize built: cheap)."""
        if not self._conds.conditions:
            return True
        return self._conds.holds({**self._fixed, **{a: n if x == v else x for a, x in la.ints.items()}})

    def _admitted_from(self, v: int, n: int, la: LaunchArgs, step: int) -> int | None:
        """The first size from n on (step +1: up, -1: down) that the conditions admit, within SNAP sizes."""
        for k in range(SNAP):
            if self._admits_value(v, n + step * k, la):
                return n + step * k
        return None

    def _read_conditions(self, la: LaunchArgs, trace: LaunchTrace) -> list[JsonDict]:
        """The kernel's `# triton-lens: sizes` conditions, and a finding for each that cannot be used."""
        read = conditions_for(linecache.getlines(trace.def_file), trace.def_line)  # shared: not changed here
        named = dict(zip(la.names, la.args))
        named.update(la.kwargs)
        self._fixed = {n: x for n, x in named.items() if n in la.constexprs and type(x) is int}
        known = set(la.ints) | set(self._fixed)
        problems = list(read.errors)
        for c, names in read.unknown_names(known):
            what = [f"`{n}` (a tensor)" if n in la.tensors else f"`{n}`" for n in names]
            ints = ", ".join(sorted(known)) or "none"
            problems.append(
                (
                    c.line,
                    f"the size condition `{c.text}` names {' and '.join(what)}, which is no integer argument of "
                    f"`{trace.kernel}` (its integer arguments and constexprs: {ints}); the size check ignores it",
                )
            )
        self._conds = SizeConditions([c for c in read.conditions if c.names <= known])
        return [
            {"kind": "sizes-comment", "file": trace.def_file, "line": line, "kernel": trace.kernel, "message": m}
            for line, m in problems
        ]

    # -- the questions ------------------------------------------------------------------------------
    def check(self, la: LaunchArgs, trace: LaunchTrace) -> list[JsonDict]:
        comment_findings = self._read_conditions(la, trace)
        stated = tuple(c.text for c in self._conds.conditions) + tuple(f["message"] for f in comment_findings)
        key: tuple[Any, ...] = (
            stated,
            trace.kernel,
            trace.def_file,
            trace.def_line,
            tuple(sorted((k, repr(v)) for k, v in la.kwargs.items() if k in la.constexprs)),
            tuple(sorted(la.ints.items())),
            tuple(sorted((n, t.shape, t.strides, t.itemsize) for n, t in la.tensors.items())),
            la.grid,
            la.grid_at is None,
        )
        self._entry = None
        if key in self._done:
            out, self.last_checked = self._done[key]
            return out
        already = _oob_sites(trace)
        across = None
        if self.cache is not None:
            from .size_cache import launch_key

            budget = (ACCESS_BUDGET, SAFETY_S, self.symbolic)
            across = launch_key(la, trace, already, self.gpu_name, self.memory_bytes, budget, stated)
            hit = self.cache.get(across) if across is not None else None
            if hit is not None:
                out, self.last_checked = list(hit["findings"]), list(hit["checked"])
                self._done[key] = (out, self.last_checked)
                self._entry = {"key": across, "hit": True}
                return out
        found: dict[tuple[SitePos, str], JsonDict] = {}
        checked: list[JsonDict] = []
        self._budget = Budget()
        if self.symbolic:
            from .size_symbolic import Work

            self._z3_work = Work()  # z3's resource count for this launch's queries
        constants = {v for k, v in la.kwargs.items() if k in la.constexprs and type(v) is int}
        constants |= {a for n, a in zip(la.names, la.args) if n in la.constexprs and type(a) is int}
        sizes = candidate_sizes(la.ints, la.tensors, constants)
        for i, v in enumerate(sizes):
            # Each size may spend an equal share of what is left, so that one whose re-launches are costly (a
            # loop whose trip count grows with it) stops at its share and leaves the others theirs.
            b = self._budget
            b.cap = b.spent + (b.left - b.spent) // (len(sizes) - i)
            self._blocks = per_program_blocks(v, constants, la.grid)
            at = resize(v, v, la.ints, la.tensors, self._blocks)
            entry: JsonDict = {"script": describe_size(at, old=True) if at else None, "tail": None, "largest": None}
            entry["stopped"], entry["gpu"] = True, self.gpu_name
            checked.append(entry)
            try:
                entry["tail"] = self._ragged(la, v, already, found)
                if self.symbolic:  # the z3 extra: the sizes n + 1 did not ask (size_symbolic.py)
                    entry["proved"] = self._symbolic(la, trace, v, already, found)
                entry["largest"] = self._wrap(la, v, already, found, entry)
                entry["stopped"] = False
            except ProbeTimeout as stop:
                if b.exhausted or stop.args:
                    break
        self.spent.append(self._budget.spent)
        out = comment_findings + list(found.values())
        for e in checked:
            e["proved"] = _standing(e.get("proved") or [], out)
        self.last_checked = [e for e in checked if e["tail"] or e["largest"] or e["proved"]]
        self._done[key] = (out, self.last_checked)
        # Kept across runs unless the wall-clock guard stopped it (what it found then depends on the machine).
        if across is not None and not self._budget.timed_out:
            self._entry = {"key": across, "value": {"findings": out, "checked": self.last_checked}}
        return out

    def take_entry(self) -> JsonDict | None:
        """The last check's entry for the cache across runs (then forgotten here)."""
        entry, self._entry = self._entry, None
        return entry

    def _grid_at(self, la: LaunchArgs, r: Resize) -> Grid | None:
        if la.grid_at is None:
            return la.grid
        try:
            return la.grid_at(r, la)
        except Exception:
            return None

    def _largest(self, la: LaunchArgs, v: int) -> tuple[Resize | None, int | None]:
        """The largest size the GPU holds whose grid CUDA can launch, and the grid axis that bounded it
        below what memory holds (None: memory, or int32, bounded it). A grid the function cannot work out
        at a size is left to the caller (no re-launch runs there)."""
        near = None  # with `# triton-lens: sizes` conditions: a size they admit at most SNAP below
        if self._conds.conditions:
            near = lambda r: self._admitted_from(v, r.new, la, -1) is not None  # noqa: E731
        top = largest_fitting(v, la.ints, la.tensors, self.memory_bytes, INT32_MAX, self._blocks, near)
        if top is None or la.grid_at is None:
            return self._snapped(la, v, top), None  # a held grid is the launched one, which ran
        g = self._grid_at(la, top)
        axis = grid_excess(g) if g is not None else None
        if axis is None:
            return self._snapped(la, v, top), None

        def launchable(r: Resize) -> bool:
            g = self._grid_at(la, r)
            return (g is None or grid_fits(g)) and (near is None or near(r))

        top = largest_fitting(v, la.ints, la.tensors, self.memory_bytes, top.new, self._blocks, launchable)
        return self._snapped(la, v, top), axis

    def _snapped(self, la: LaunchArgs, v: int, r: Resize | None) -> Resize | None:
        """r, or the largest size below it that the kernel's conditions admit (None: none within SNAP)."""
        if r is None or self._admits(r):
            return r
        m = self._admitted_from(v, r.new, la, -1)
        return resize(v, m, la.ints, la.tensors, self._blocks) if m is not None else None

    def _ragged(
        self, la: LaunchArgs, v: int, already: dict[SitePos, OobSite], found: dict[tuple[SitePos, str], JsonDict]
    ) -> str | None:
        """The n+1 re-run of the grid's corner programs (the next size above n that the kernel's `# triton-lens:
        sizes` conditions admit, where it has some); returns the size it ran at (None: not run)."""
        up = self._admitted_from(v, v + 1, la, +1)
        r = resize(v, up, la.ints, la.tensors, self._blocks) if up is not None else None
        if r is None or r.bytes > self.memory_bytes:
            return None
        grid = self._grid_at(la, r)
        if grid is None or not grid_fits(grid):
            return None
        run = self.probe(la, r, grid, _corners(grid), watch_overflow=False)
        if not run.admitted:
            return None
        for pos, o in run.oob.items():
            if pos in already or (pos, "oob-sizes") in found:
                continue
            found[(pos, "oob-sizes")] = _finding("oob-sizes", o, r, grid, None, self.gpu_name)
        return describe_size(r)

    def _symbolic(
        self,
        la: LaunchArgs,
        trace: LaunchTrace,
        v: int,
        already: dict[SitePos, OobSite],
        found: dict[tuple[SitePos, str], JsonDict],
    ) -> list[JsonDict]:
        """With z3: for each access the cheap path left in bounds, the smallest size in 1 .. the largest the
        GPU holds where an active lane leaves its tensor, then a re-launch of that program there; only what
        the run shows is a finding (size_symbolic.py). Where there is none, a proof that every active lane
        stays in bounds up to a size (the hover's "in bounds for every n ≤ …"): returned, as JSON."""
        from . import size_symbolic as sym
        from .size_model import _dense

        z3 = sym.z3_module()
        fn = sym.kernel_def(trace.def_file, trace.def_line) if z3 is not None else None
        r1 = resize(v, v + 1, la.ints, la.tensors, self._blocks)
        r2 = resize(v, v + 2, la.ints, la.tensors, self._blocks)
        if z3 is None or fn is None or r1 is None or r2 is None:
            return []
        # An integer argument equal at the launch to an extent that moves, but not moved with it (`n =
        # x.numel()` while the size is x's row count): the relation is not known, and far from the script's
        # size (where the solver looks) the re-launch would pair a new tensor with the old count. No query.
        moving = {x for name, t in la.tensors.items() if t != r1.tensors[name] for x in (t.numel, *t.shape) if x > 1}
        if any(val in moving and r1.ints[a] == val for a, val in la.ints.items()):
            return []
        top, grid_axis = self._largest(la, v)
        hi = top.new if top is not None else v + 1
        # Below the script's size only when no other size of the launch is an integer argument held at its
        # value: shrinking x while `n` stays (an `out` of 2n moved as a size of its own) pairs a small tensor
        # with the old count, which no host would launch. Growing keeps such a count inside the tensor.
        sizes = set(candidate_sizes(la.ints, la.tensors))
        lo = v + 1 if any(val in sizes and r1.ints[a] == val for a, val in la.ints.items()) else 1
        # Below it only when the kernel sees the size move too (an integer argument, or the grid): a kernel
        # that takes no size has constant bounds (`r < 5`), and a smaller tensor is its host's bug, not a
        # size it admits. Growing past the script's size keeps such bounds inside the tensor anyway.
        if all(r1.ints[a] == val for a, val in la.ints.items()) and self._grid_at(la, r1) == la.grid:
            lo = v + 1

        def dims(name: str | None, axis: int | None) -> tuple[int, int] | None:
            if name is None or name not in la.tensors:
                return None
            at = [la.tensors[name], r1.tensors[name], r2.tensors[name]]
            if len({len(t.shape) for t in at}) != 1 or (axis is not None and axis >= len(at[0].shape)):
                return None
            vals = [t.numel if axis is None else t.shape[axis] for t in at]
            return sym.linear([(v + k, x) for k, x in enumerate(vals)])

        params: dict[str, Any] = {}
        constexprs = dict(zip(la.names, la.args))
        constexprs.update(la.kwargs)
        n = z3.Int("n")
        for name in la.names:
            if name in la.constexprs:
                c = constexprs.get(name)
                params[name] = z3.IntVal(c) if type(c) is int else None
            elif name in la.tensors:
                params[name] = (name, z3.IntVal(0))
            elif name in la.ints:
                was, now = la.ints[name], r1.ints[name]
                params[name] = z3.IntVal(was) if was == now else n if (was, now) == (v, v + 1) else None
        expression = getattr(la.grid_at, "expression", None) if la.grid_at is not None else None
        grid = sym.grid_terms(z3, n, expression, la.grid if la.grid_at is None else None, v, dims, constexprs)
        if grid is None:
            return []
        model = sym.Model(z3, params, grid)
        for c in self._conds.conditions:  # the author's conditions, as the kernel's tl.assume's are
            model.state(c.node, f"`# triton-lens: sizes {c.text}`")
        model.walk(fn.body)
        proofs: list[JsonDict] = []
        taken = {(pos[1], o["arg"]) for pos, o in already.items()}
        taken |= {(k[0][1], x["arg"]) for k, x in found.items() if k[1] == "oob-sizes"}
        for acc in model.accesses:
            numel = dims(acc.tensor, None)
            if numel is None or (acc.line, acc.tensor) in taken or not _dense(la.tensors[acc.tensor]):
                continue
            assert self._z3_work is not None  # check() sets it when the extra is there
            confirmed = False
            for w in sym.witnesses(model, acc, numel, lo, hi, {v}, self._z3_work):
                r = resize(v, w.size, la.ints, la.tensors, self._blocks)
                g = self._grid_at(la, r) if r is not None and r.bytes <= self.memory_bytes else None
                if r is None or g is None or not grid_fits(g) or any(p >= e for p, e in zip(w.program, g)):
                    continue
                run = self.probe(la, r, g, [w.program], watch_overflow=False)
                hits = [
                    (pos, o)
                    for pos, o in run.oob.items()
                    if run.admitted and pos[1] == acc.line and o["arg"] == acc.tensor and pos not in already
                ]
                for pos, o in hits:
                    found.setdefault((pos, "oob-sizes"), _finding("oob-sizes", o, r, g, None, self.gpu_name, "z3"))
                if hits:
                    taken.add((acc.line, acc.tensor))
                    confirmed = True
                    break
            # A proof only where the grid follows the size as the launch wrote it (a held grid would prove
            # the kernel right for a grid no host launches) and up to the largest size the GPU holds.
            if confirmed or expression is None or top is None:
                continue
            pr = sym.proof(model, acc, numel, min(lo, v), hi, self._z3_work)
            if pr is not None:
                # what stopped the proof where it stops: an operation that leaves int32 past it, the author's
                # conditions (no size they admit just above), CUDA's grid limits, int32 sizes (an integer
                # argument past 2**31 - 1 is int64: another kernel), memory
                above = self._admitted_from(v, pr.upto + 1, la, +1)
                why = (
                    "wrap"
                    if pr.inexact_from is not None
                    else "stated"
                    if above is None
                    else "grid"
                    if grid_axis is not None
                    else "int32"
                    if above > INT32_MAX
                    else "memory"
                )
                name = _size_name(r1, v)
                assuming = [f"`{acc.tensor}` holds {_linear_text(numel, name)} elements", f"the grid `{expression[0]}`"]
                assuming += r1.assumed + model.assumed_text
                held = [f"{a} = {x}" for a, x in la.ints.items() if r1.ints[a] == x]
                if held:
                    assuming.append(", ".join(held[:4]) + (" …" if len(held) > 4 else "") + " as launched")
                proofs.append(
                    {
                        "line": acc.line,
                        "tensor": acc.tensor,
                        "kind": acc.kind,
                        "size": name,
                        "from": min(lo, v),
                        "upto": pr.upto,
                        "limit": why,
                        "inexact_from": pr.inexact_from,
                        "assuming": assuming,
                    }
                )
        return proofs

    def _wrap(
        self,
        la: LaunchArgs,
        v: int,
        already: dict[SitePos, OobSite],
        found: dict[tuple[SitePos, str], JsonDict],
        entry: JsonDict,
    ) -> str | None:
        """The last program at the largest size the GPU holds and CUDA can launch, then the bisection to the
        smallest size that overflows; returns the largest size it ran at (None: not run), and notes in
        `entry` (the hover's record) the grid axis whose limit bounded it, where one did."""
        if la.grid_at is None:
            return None  # the programs' ids do not grow with the size: nothing to overflow that the run did not
        top, axis = self._largest(la, v)
        if top is None or top.new <= v:
            return None
        # Whether the grid follows this size, asked at the largest size, not at v + 1: a grid of
        # cdiv(n, BLOCK) is the same at n + 1 unless n was a multiple of BLOCK (40 and 41 rows in blocks of
        # 16 are both 3 programs), and yet it grows with n.
        if self._grid_at(la, top) in (None, la.grid):
            return None  # the grid does not follow this size

        seen: dict[int, tuple[ProbeRun, Resize, Grid] | None] = {}
        admitted: set[int] = set()  # sizes whose re-launch ran (the kernel admits them)

        def overflows(n: int) -> tuple[ProbeRun, Resize, Grid] | None:
            if n not in seen:
                seen[n] = _overflow_run(n)
            return seen[n]

        def _overflow_run(n: int) -> tuple[ProbeRun, Resize, Grid] | None:
            m = self._admitted_from(v, n, la, -1)  # the kernel's conditions: the nearest size below they admit
            if m is None:
                return None
            r = resize(v, m, la.ints, la.tensors, self._blocks)
            if r is None:
                return None
            grid = self._grid_at(la, r)
            if grid is None or not grid_fits(grid):
                return None  # not a size the kernel admits: CUDA would refuse the launch
            run = self.probe(la, r, grid, _last_programs(grid, la.grid), watch_overflow=True)
            if run.admitted:
                admitted.add(n)
            return (run, r, grid) if run.admitted and run.overflows else None

        largest = describe_size(top)
        if axis is not None:
            # What the GPU holds has a grid CUDA cannot launch on this axis (the hover says so).
            entry["grid_limit"] = {"axis": axis, "most": GRID_LIMITS[axis]}
        got = overflows(top.new)
        if got is None:
            return largest if top.new in admitted else None

        def wrapped(run: ProbeRun) -> set[SitePos]:
            """The accesses a wrap sends out of their tensor in this run (active lanes only)."""
            return {pos for pos in run.oob if pos not in already and (pos, "wrap") not in found}

        # The smallest size where anything overflows (what overflows only grows with the size).
        lo, hi = v, top.new
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if overflows(mid) is None:
                lo = mid
            else:
                hi = mid
        first = hi
        # Each access that leaves its tensor at some size tried gets a failing size of its own: the first
        # overflow can be in masked-off lanes only (the last block's rows past n: out of bounds a few sizes
        # later), and two products of one kernel wrap at different sizes (a fix that widens one leaves the
        # other). A wrapped offset is negative, so out of bounds, from its first overflow until it reaches
        # 2**32 (about twice the size, for a product that grows with it), and may land back inside the
        # tensor past that. So for each access: the smallest size tried where it fails, the largest below
        # that where it does not; where those are more than 1.5 times apart, a step up by 1.5 times from the
        # lower (the first step that fails lies in its first band); then a bisection between the two.

        def fails(n: int, pos: SitePos) -> bool:
            at = overflows(n)
            return at is not None and pos in wrapped(at[0])

        def bracket(pos: SitePos) -> tuple[int, int]:
            tried = sorted(n for n in seen if seen[n] is not None or n in admitted)
            hi = min(n for n in tried if fails(n, pos))
            lo = max([n for n in tried if n < hi and not fails(n, pos)], default=first - 1)
            return lo, hi

        while True:
            pending = {pos for x in seen.values() if x is not None for pos in wrapped(x[0])}
            if not pending:
                break
            pos = min(pending, key=lambda q: bracket(q)[1])
            lo, hi = bracket(pos)
            step = min(hi, lo + max(lo // 2, 1))
            while step < hi and not fails(step, pos):
                lo, step = step, min(hi, step + max(step // 2, 1))
            hi = step
            while hi - lo > 1:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if fails(mid, pos) else (mid, hi)
            at = overflows(hi)
            assert at is not None
            run, r, grid = at
            for q in wrapped(run) & pending:  # every access that fails there too, with that size
                o = run.oob[q]
                ov = run.overflows[o["overflow"]] if o["overflow"] >= 0 else run.overflows[0]
                found[(q, "wrap")] = _finding("wrap", o, r, grid, ov, self.gpu_name)
        return largest


def _oob_sites(trace: LaunchTrace, overflow_at: dict[int, int] | None = None) -> dict[SitePos, OobSite]:
    """Accesses of a launch trace with active out-of-bounds lanes, by source position (with the index of
    the overflow that came last before each, in a re-launch that watched them)."""
    out: dict[SitePos, OobSite] = {}
    for i, s in enumerate(trace.sites):
        rows = np.flatnonzero(trace.ex_site == i)
        bad = rows[trace.ex_oob[rows] > 0]
        if bad.size == 0:
            continue
        pos: SitePos = (s.file, s.line, s.col, s.arg, s.kind)
        st, en = trace.oob.merged_runs(bad)
        o = out.setdefault(
            pos,
            {
                "site": s.to_json(),
                "arg": trace.tensors[s.arg].name if s.arg >= 0 else "?",
                "lanes": 0,
                "programs": [],
                "first": int(st[0]) if st.size else 0,
                "overflow": (overflow_at or {}).get(i, -1),
            },
        )
        o["lanes"] += int(trace.ex_oob[bad].sum(dtype=np.int64))
        for p in np.unique(trace.ex_program[bad]).tolist():
            x, y, z = (int(c) for c in trace.program_coords(int(p)))
            o["programs"].append([x, y, z][: 3 if trace.grid[2] > 1 else 2 if trace.grid[1] > 1 else 1])
    return out


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"


def _finding(kind: str, o: OobSite, r: Resize, grid: Grid, ov: Overflow | None, gpu: str, how: str = "") -> JsonDict:
    arg = o["arg"]
    spec = r.tensors.get(arg)
    shape = (
        ("×".join(str(d) for d in spec.shape) if len(spec.shape) > 1 else f"{spec.shape[0]} elements") if spec else "?"
    )
    size = describe_size(r, prefer=arg)
    prog = ", ".join(str(tuple(p)) if len(p) > 1 else f"({p[0]},)" for p in o["programs"][:3])
    g = tuple(x for x in grid[: 3 if grid[2] > 1 else 2 if grid[1] > 1 else 1])
    site = o["site"]
    verb = {"load": "read", "store": "write", "atomic": "update"}.get(site["kind"], "access")
    grid_text = f"a grid of {g}" if len(g) > 1 else f"{g[0]} programs"
    why = f" (assuming {'; '.join(r.assumed)})" if r.assumed else ""
    found_by = "the smallest such size z3 finds over every size the GPU holds, " if how == "z3" else ""
    if kind == "oob-sizes":
        message = (
            f"{arg}: in bounds at the script's {describe_size(r, old=True)}, but at {size} ({grid_text}) "
            f"{o['lanes']} active lanes of program {prog} would {verb} outside {arg}'s tensor ({shape}), from "
            f"element offset {o['first']} — {found_by}confirmed by running those programs at that size{why}. The "
            f"script's size was in bounds only because of its value: mask the {site['kind']} against the size "
            "(e.g. mask=offs < n)."
        )
    else:
        assert ov is not None
        what = f"`{ov.text}`" if ov.text else "an int32 " + ov.op.replace("create_", "")
        names = _operand_names(ov.text)
        if names:
            # A literal operand is its own value ("with 64", not "with 64 = 64": generated kernels bake sizes in).
            a, b = (n if n.lstrip("-").isdigit() else f"{n} = {v}" for n, v in zip(names, ov.operands))
            at = f"from {a} with {b}"
        else:
            at = f"with operands {ov.operands[0]} and {ov.operands[1]}"
        where = "" if ov.line == site["line"] else f" (line {ov.line})"
        message = (
            f"{arg}: at {size}, {what}{where} overflows int32 {at}: with {grid_text} and {arg} {shape} "
            f"({_gib(spec.span_bytes if spec else 0)}, which an {gpu} holds), the compiled kernel wraps it and "
            f"program {prog} would {verb} outside the tensor, at element offset {o['first']} — confirmed by running "
            f"that program at that size on address-only memory{why}. Widen before the arithmetic: "
            f"`{_widen_hint(ov.text)}`."
        )
    return {
        "kind": kind,
        "site": site,
        "arg": arg,
        "lanes": o["lanes"],
        "programs": len(o["programs"]),
        "example_programs": o["programs"][:3],
        "size": size,
        "size_value": r.new,
        "grid": list(g),
        "assumed": r.assumed,
        **({"found_by": how} if how else {}),
        "op": None
        if ov is None
        else {"text": ov.text, "file": os.path.abspath(ov.file), "line": ov.line, "col": ov.col, "end_col": ov.end_col},
        "message": message,
    }


def _operand_names(text: str) -> tuple[str, str] | None:
    """('row', 'stride') of 'row * stride' (a binary operation on two plain names or attributes), else None."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if isinstance(node, ast.BinOp):
        return ast.unparse(node.left), ast.unparse(node.right)
    return None


def _widen_hint(text: str) -> str:
    if " * " in text:
        a, b = text.split(" * ", 1)
        return f"{a.strip()}.to(tl.int64) * {b.strip()}"
    return "x.to(tl.int64)"


def _size_name(r: Resize, v: int) -> str:
    """The size as the user reads it: `n` (an integer argument) or `x.shape[0]`."""
    name, _, value = describe_size(r).partition(" = ")
    if value.startswith("(") and name.endswith(".shape"):
        dims = [int(d) for d in value.strip("(,)").split(",") if d.strip()]
        if v + 1 in dims:
            return f"{name}[{dims.index(v + 1)}]"
    return name


def _linear_text(numel: tuple[int, int], name: str) -> str:
    """a·n + b as text: `n`, `2·n`, `n + 1`, `4·n - 3`."""
    a, b = numel
    head = name if a == 1 else f"{a}·{name}"
    return head if b == 0 else f"{head} + {b}" if b > 0 else f"{head} - {-b}"


def _standing(proofs: list[JsonDict], findings: list[JsonDict]) -> list[JsonDict]:
    """The proofs no finding of the check contradicts: none at an access that has a finding, but a `wrap`
    from a size past the proof's (the proof stops below the first operation that leaves int32)."""

    def against(p: JsonDict, f: JsonDict) -> bool:
        if "site" not in f or f["site"]["line"] != p["line"] or f["arg"] != p["tensor"]:
            return False
        return not (f["kind"] == "wrap" and f["size_value"] > p["upto"])

    return [p for p in proofs if not any(against(p, f) for f in findings)]
