"""Everything that depends on the triton release (3.2 - 3.9): the only module that knows the
interpreter's class names, builder method names and their signatures.

`install(hooks)` puts class-level wrappers that call a `Hooks` object (the recorder) in our own terms
in place, inside a `PatchScope` (patches.py) that removes them all when the run leaves it. Facts behind the choices: shared/notes/interpreter.md.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import triton
import triton.runtime.interpreter as _interp
from triton.runtime.jit import JITFunction

from . import cooperative as _cooperative
from . import device_calls as _device_calls
from . import jit_api as _jit_api
from . import pointer_args as _pointer_args
from . import semantics as _semantics
from .patches import PatchScope as PatchScope  # (re-exported for the recorder's annotation: compat.PatchScope)

# triton's interpreter internals are untyped (triton ships no annotations mypy reads): a TensorHandle, a
# tl.tensor, the InterpreterBuilder (`self` of its methods), a GridExecutor, an Autotuner and its configs,
# a JIT or interpreted function, and an original method that a patch wraps are Any here, this module's
# boundary with them. What we compute on is typed (numpy arrays, our tags, our hooks).
Triton = Any
Method = Callable[..., Any]  # a method or function of triton's that a patch wraps, and the wrapper
Grid = tuple[int, int, int]

TRITON_VERSION: str = triton.__version__
TRITON_DIR: str = os.path.dirname(triton.__file__)

TensorHandle = _interp.TensorHandle
GridExecutor = _interp.GridExecutor
InterpreterBuilder = _interp.InterpreterBuilder

# Builder methods whose result is derived from their pointer operands: provenance flows through them.
_PROPAGATING = (
    "create_addptr",
    "create_splat",
    "create_unsplat",
    "create_broadcast",
    "create_expand_dims",
    "create_reshape",
    "create_trans",
    "create_permute",
    "create_cat",
    "create_join",
    "create_split",
    "create_select",
    "create_bitcast",
    "create_make_block_ptr",
    "create_advance",
    "create_make_tensor_descriptor",
)

# Builder methods that compute pointers themselves, then call create_masked_load/store: the
# operand's provenance and the op's name are passed down as context.
# name -> (position of the pointer-like operand after self, kind, op)
_CONTEXT = {
    "create_tensor_pointer_load": (0, "load", "block_ptr load"),
    "create_tensor_pointer_store": (0, "store", "block_ptr store"),
    "create_descriptor_load": (0, "load", "descriptor load"),
    "create_descriptor_store": (0, "store", "descriptor store"),
    "create_descriptor_gather": (0, "load", "descriptor gather"),
    "create_descriptor_scatter": (0, "store", "descriptor scatter"),
    "create_atomic_load": (0, "atomic", "tl.atomic_load"),
    "create_atomic_store": (0, "atomic", "tl.atomic_store"),
    "create_atomic_poll": (0, "atomic", "tl.atomic_poll"),
}

# 3.2 filters only its own reserved keywords out of a launch's kwargs.
_DROPS_UNKNOWN_KWARGS_LATE = hasattr(_interp, "RESERVED_KWS")

MIXED = -2  # a pointer block whose lanes come from different arguments (tl.where of two pointers)
# A MIXED block's argument per lane, where it is known (`lane_tags`): tl.where's condition picks each lane's
# argument, and ops that keep each lane where it is (addptr, splat, broadcast, reshape, expand_dims) carry it.
# Where it is lost (a transpose, a cat of mixed blocks), the recorder places each lane by its address.
_LANES = "_tl_lanes"
_LANE_KEEPING = {"create_addptr", "create_broadcast", "create_reshape", "create_expand_dims", "create_splat"}

_RMW_NAMES: dict[Any, str] = {}  # rmw op -> "tl.atomic_add", ...


def lane_tags(value: object) -> np.ndarray | None:
    """The argument of each lane of a MIXED pointer block (int64, the block's shape), or None where unknown."""
    try:
        lanes: np.ndarray | None = getattr(value, _LANES, None)
        return lanes
    except ValueError:  # 3.3's tl.tuple, as in _tag_of
        return None


def _lanes_of(handle: Triton, shape: tuple[int, ...]) -> np.ndarray | None:
    """Each lane's argument of one operand, broadcast to `shape`: its own lanes, or its single tag."""
    lanes = lane_tags(handle)
    if lanes is None:
        tag = _tag_of(handle)
        if tag is None or tag < 0:
            return None
        return np.full(shape, tag, dtype=np.int64)
    try:
        return np.broadcast_to(lanes, shape)
    except ValueError:
        return None


def _carry_lanes(name: str, args: Sequence[Triton], out: Triton) -> None:
    """Carry a MIXED operand's lanes to `out` through an op that keeps every lane's argument."""
    data = getattr(out, "data", None)
    if name not in _LANE_KEEPING or data is None:
        return
    for a in args:
        lanes = lane_tags(a)
        if lanes is not None:
            if lanes.size == data.size:
                out._tl_lanes = lanes.reshape(data.shape)  # reshape, expand_dims, addptr: the same lanes
            else:
                try:
                    out._tl_lanes = np.broadcast_to(lanes, data.shape)  # broadcast, splat
                except ValueError:
                    pass
            return


def _tag_of(value: object) -> int | None:
    """The argument a handle was derived from. 3.3's tl.tuple answers a missing attribute with
    ValueError (its __getattr__ looks the name up among its fields), not AttributeError."""
    try:
        tag: int | None = getattr(value, "_tl_arg", None)
        return tag
    except ValueError:
        return None


def _rmw_name(op: Triton) -> str:
    name = _RMW_NAMES.get(op)
    if name is None:
        text = str(op).split(".")[-1].lower()
        name = _RMW_NAMES[op] = "tl.atomic_" + {"fadd": "add", "add": "add", "umax": "max", "umin": "min"}.get(
            text, text
        )
    return name


def mask_array(mask: Triton) -> np.ndarray | None:
    """A mask operand (TensorHandle, or a bare ndarray from block pointers on <=3.7) as a bool array."""
    if mask is None:
        return None
    if type(mask) is np.ndarray:
        return mask
    data: np.ndarray = mask.data
    return data


def _with_mask(mask: Triton, new: np.ndarray) -> Triton:
    if type(mask) is np.ndarray:
        return new
    return TensorHandle(new, mask.dtype)


def enable_interpreter() -> Callable[[], None]:
    """Make @triton.jit pick the interpreter for kernels decorated from now on. Returns what puts the
    setting back as it was (the pytest plugin, at the session's end; a worker's run just ends)."""
    scope = PatchScope()
    scope.set_item(os.environ, "TRITON_INTERPRET", "1")
    knobs = getattr(triton, "knobs", None)
    if knobs is not None:
        # 3.4+ reads the knob, not the environment, after import; its value set from Python is the
        # runtime knobs' own attribute (absent: the knob follows the environment again).
        scope.keep_item(vars(knobs.runtime), "interpret")
        knobs.runtime.interpret = True
    return scope.restore


class Hooks:
    """What the wrappers call. The recorder implements it. `access` gets the interpreter's builder,
    whose `grid_idx` (the running program's (x, y, z)) is the same in every release."""

    unmasked = 0  # > 0 while a load/store written without a mask runs

    def launch_begin(self, executor: Triton, fn: Triton) -> Any: ...
    def launch_args(
        self,
        arg_names: Sequence[str],
        args_dev: Sequence[Any],
        kwargs_dev: dict[str, Any],
        args_hst: Sequence[Any],
        kwargs_hst: dict[str, Any],
    ) -> None: ...
    def launch_end(self, token: Any, error: BaseException | None) -> None: ...
    def grid(self, nx: int, ny: int, nz: int) -> None: ...
    # Called before each program of a launch, in the grid loop's order (only where a subclass defines it);
    # coordinates it returns are run instead of (x, y, z) (a sample's loop, progressive.py), and END_LOOP
    # ends the loop there, as if it had visited the rest (a merged parallel split: parallel.py).
    def program(self, x: int, y: int, z: int) -> tuple[int, int, int] | None: ...
    def tag(self, host_value: object, converted: Triton) -> None: ...
    # value: a plain store's values; order: an atomic's (sem, scope) as the builder got them.
    def access(
        self,
        kind: str,
        op: str,
        builder: Triton,
        ptrs: Triton,
        mask: np.ndarray | None,
        value: Triton = None,
        order: tuple[object, object] | None = None,
    ) -> np.ndarray | None: ...
    def push_context(self, kind: str, op: str, operand: Triton) -> None: ...
    def pop_context(self) -> None: ...
    def benchmark(self, kernel_call: Callable[[], Any]) -> float:
        raise NotImplementedError

    # An autotuner's run (`tuning` begins it, `tuned` ends it) and, inside it, the launch made to try
    # one config (`trial` before it, `trial` with None after it): label as `config_label` writes it,
    # rank its place in the user's list of configs.
    def tuning(self) -> None: ...
    def tuned(self) -> None: ...
    def trial(self, label: str | None, rank: int = 0) -> None: ...

    def dot(
        self,
        builder: Triton,
        a: Triton,
        b: Triton,
        a_dtype: str,
        b_dtype: str,
        acc_dtype: str,
        precision: str,
        result: Triton,
    ) -> None: ...
    def loaded(self, value: Triton) -> None: ...
    def device_descriptor(self) -> None: ...
    # After a launch that returned: its executor and the arguments it was called with (the size check).
    def launched(self, executor: Triton, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None: ...
    # A launch whose programs wait on each other runs by turns (cooperative.py): may it here (not in a
    # process that runs only part of the launch)? And a program's own part of the hooks' state, swapped
    # at each turn: installs `state` (None: a program that starts) and returns the one it replaces.
    def may_take_turns(self) -> bool:
        return True

    def program_state(self, state: Any = None) -> Any:
        return None


_installs = 0  # how many install() scopes wrap the interpreter now (nested in-process recorders are allowed)


def install(hooks: Hooks, skip_dead_work: bool = True) -> PatchScope:
    """Wrap the interpreter for one run: `with install(hooks): ...` (or keep the scope and call its
    `restore()`) puts it back exactly. The order matters: later wrappers sit on top of earlier ones."""
    global _installs
    scope = PatchScope()
    _installs += 1

    def uninstalled() -> None:
        global _installs
        _installs -= 1

    scope.defer(uninstalled)
    try:
        # polls that can never see a change: programs waiting for a later one (then run by turns)
        waits = _cooperative.Waits()
        _patch_launches(scope, hooks, waits)
        _patch_grid_dim(scope, hooks, waits)
        # The compiler's semantics where the bare interpreter differs (and/or/not, scalar argument
        # types, libdevice, string annotations, list grids, fp8 rounding, numpy 2.4+): semantics.py.
        # Installed before the argument hook below, which then sees the converted scalars.
        _semantics.install(scope)
        # JITFunction's API on interpreted kernels, for library wrappers (isinstance, .params, .run's
        # compiled kernel): jit_api.py.
        _jit_api.install(scope.patch, compiled_kernel_takes_constexprs(), jit_module_may_name_the_shim())
        _patch_grid_idx(scope, hooks, waits)
        _patch_provenance(scope, hooks)
        _patch_accesses(scope, hooks, waits)
        _patch_dot(scope, hooks)
        _patch_device_descriptor(scope, hooks)
        _patch_autotuner(scope, hooks)
        _patch_heuristics(scope)
        if skip_dead_work:
            _skip_unused_overflow_checks(scope)
            # @jit helper calls re-scanning triton.language to patch what the launch patched.
            _device_calls.install(scope.patch)
        _serialize_launches(scope)  # last: the outermost wrapper
    except BaseException:
        scope.restore()
        raise
    return scope


_LAUNCH_LOCK = threading.RLock()  # re-entrant: a launch's hooks may launch (the size probe's relaunch)


def _serialize_launches(scope: PatchScope) -> None:
    """One launch at a time: the interpreter patches triton.language for a launch's length, and the
    recorder and device_calls keep one launch's state, so launches from the script's threads take
    turns (on a GPU they queue on the device as well). Around every other wrapper of the launch."""

    def make_call(orig: Method) -> Method:
        def __call__(self: Triton, *args: Any, **kwargs: Any) -> Any:
            with _LAUNCH_LOCK:
                return orig(self, *args, **kwargs)

        return __call__

    scope.patch(GridExecutor, "__call__", make_call)


def jit_module_may_name_the_shim() -> bool:
    """Whether triton.runtime.jit's own global `JITFunction` can be the jit_api shim (for libraries that
    `from triton.runtime.jit import JITFunction`, as FlagGems does): not where JITFunction's methods name
    their class (3.2-3.4: `super(JITFunction, self).__setattr__` would find the shim, which a real
    JITFunction is no instance of; `isinstance(func, JITFunction)` in its dependency finder). Read from
    the release's own JITFunction."""
    try:
        return "JITFunction" not in inspect.getsource(JITFunction.__setattr__)
    except (OSError, TypeError):
        return True  # no __setattr__ of its own (3.5+)


def compiled_kernel_takes_constexprs() -> bool:
    """Whether the compiled kernel that JITFunction.run returns is launched (`kernel[grid](*args)`) with
    every argument, constexprs too (3.3+; triton 3.6 on an H200 refuses the others: "function takes
    exactly 17 arguments (16 given)"), or only those that are not constexprs (3.2, whose run passes
    `*non_constexpr_vals`). Read from the release's own JITFunction.run."""
    try:
        return "non_constexpr_vals" not in inspect.getsource(JITFunction.run)
    except (OSError, TypeError):
        return True


def _patch_launches(scope: PatchScope, hooks: Hooks, waits: _cooperative.Waits) -> None:
    """A launch's begin and end (GridExecutor.__call__) and its arguments (_init_args_hst)."""

    def make_call(orig: Method) -> Method:
        def __call__(self: Triton, *args: Any, **kwargs: Any) -> Any:
            if _DROPS_UNKNOWN_KWARGS_LATE:
                # 3.2 passes autotune's config options (num_buffers_warp_spec, ...) on to the kernel;
                # later releases drop what the kernel does not take, as we do here.
                spec = inspect.getfullargspec(self.fn)
                kwargs = {k: v for k, v in kwargs.items() if k in spec.args or k in spec.kwonlyargs or k == "warmup"}
            # pointer arguments that are no torch tensors (FlagGems's StridedBuffer), as tensors
            args = tuple(_pointer_args.as_tensor(a) for a in args)
            kwargs = {k: _pointer_args.as_tensor(v) for k, v in kwargs.items()}
            token = hooks.launch_begin(self, self.fn)
            outer, waits.turns = waits.turns, None
            _kernel_fns.append((self, self.fn))
            try:
                try:
                    out = orig(self, *args, **kwargs)
                except _LoopEnded:  # (END_LOOP: the rest of the loop would have run nothing)
                    _end_loop(self)
                    out = None  # (what the interpreter's __call__ returns)
            except BaseException as e:
                _end_turns(waits, self, e)
                waits.turns = outer
                hooks.launch_end(token, e)
                raise
            finally:
                _kernel_fns.pop()
                _host_args.pop(id(self), None)
            _end_turns(waits, self, None)
            waits.turns = outer
            hooks.launch_end(token, None)
            hooks.launched(self, args, kwargs)
            return out

        return __call__

    scope.patch(GridExecutor, "__call__", make_call)

    def make_init_args(orig: Method) -> Method:
        def _init_args_hst(self: Triton, args_dev: Sequence[Any], kwargs: dict[str, Any]) -> Any:
            args_hst, kwargs_hst = orig(self, args_dev, kwargs)
            hooks.launch_args(self.arg_names, args_dev, kwargs, args_hst, kwargs_hst)
            _host_args[id(self)] = (args_dev, args_hst, kwargs, kwargs_hst)  # (for _end_loop)
            return args_hst, kwargs_hst

        return _init_args_hst

    scope.patch(GridExecutor, "_init_args_hst", make_init_args)


# -- launches by turns (cooperative.py) ---------------------------------------------------------------

_GRID_LOOP = GridExecutor.__call__.__code__  # the interpreter's own grid loop, before any patch
_kernel_fns: list[tuple[Any, Any]] = []  # (executor, its kernel function) of each launch in flight


def _ran_by_turns(**args: object) -> None:
    """executor.fn for the grid loop's visits after a launch went on by turns: those programs ran."""


def _begin_turns(hooks: Hooks, builder: Triton) -> _cooperative.Turns | None:
    """Turns for the launch in flight, from its running program on; None where they may not start: the
    hooks say no, the loop is not the interpreter's plain loop over every program (a re-launch of some
    programs, a sample's loop), its function was swapped (a parallel split's child), or no program
    comes after this one."""
    if not _kernel_fns or not hooks.may_take_turns():
        return None
    executor, kernel_fn = _kernel_fns[-1]
    frame = inspect.currentframe()
    while frame is not None and not (frame.f_code is _GRID_LOOP and frame.f_locals.get("self") is executor):
        frame = frame.f_back
    if frame is None or executor.fn is not kernel_fn:
        return None
    local = frame.f_locals
    x, y, z = (int(v) for v in builder.grid_idx)
    nx, ny, nz = (int(v) for v in builder.grid_dim)
    idx, grid = (x, y, z), (nx, ny, nz)
    if (local.get("x"), local.get("y"), local.get("z")) != idx or not isinstance(local.get("args"), dict):
        return None
    rest = _cooperative.later_programs(idx, grid)
    args = local["args"]
    del frame, local

    def save() -> tuple[Any, int, Any]:
        return (builder.grid_idx, hooks.unmasked, hooks.program_state(None))

    def load(state: tuple[Any, int, Any]) -> None:
        builder.grid_idx, hooks.unmasked = state[0], state[1]
        hooks.program_state(state[2])

    turns = _cooperative.Turns(
        idx, rest, grid, run=lambda _idx: kernel_fn(**args), save=save, load=load, fresh=lambda i: (i, 0, None)
    )
    if turns.done_before_start():
        return None
    turns.executor, turns.kernel_fn = executor, kernel_fn
    return turns


def _end_turns(waits: _cooperative.Waits, executor: Triton, error: BaseException | None) -> None:
    """After a launch: threads of programs that still wait are ended, the loop's function put back."""
    turns = waits.turns
    if turns is None or turns.executor is not executor:
        return
    if error is not None:
        turns.unwind()
    executor.fn = turns.kernel_fn


def _patch_grid_dim(scope: PatchScope, hooks: Hooks, spin: _cooperative.Waits) -> None:
    """The launch's grid, before its first program (a new grid also starts the spin watch afresh)."""

    def make_set_grid_dim(orig: Method) -> Method:
        def set_grid_dim(self: Triton, nx: int, ny: int, nz: int) -> Any:
            spin.reset()
            hooks.grid(nx, ny, nz)
            return orig(self, nx, ny, nz)

        return set_grid_dim

    scope.patch(InterpreterBuilder, "set_grid_dim", make_set_grid_dim)


# What a hook's `program` returns to end the launch's grid loop at this visit: every program still to come has
# run elsewhere (a merged parallel split), so the loop's remaining visits (1-2 us each, 16384 of them in a 16M
# vector add) would run nothing. (A tuple of ints, told apart by identity.)
END_LOOP: tuple[int, int, int] = (-1, -1, -1)


class _LoopEnded(BaseException):
    """Raised from set_grid_idx for END_LOOP: past the grid loop's `except Exception` (3.2-3.9: nothing but
    the copy back to the device arguments follows the loop, and 3.6+'s unpatching runs in a `finally`) to
    GridExecutor.__call__'s wrapper, which makes that copy itself (`_host_args`)."""


_host_args: dict[int, tuple[Any, Any, Any, Any]] = {}  # id(executor) -> (args_dev, args_hst, kwargs, kwargs_hst)


def _end_loop(executor: Triton) -> None:
    """What the interpreter's __call__ does after its grid loop (every release 3.2-3.9)."""
    host = _host_args.get(id(executor))
    if host is not None:
        executor._restore_args_dev(*host)


def _patch_grid_idx(scope: PatchScope, hooks: Hooks, waits: _cooperative.Waits) -> None:
    """Each program, before it runs: the hooks' `program` where they define it (the parallel grid loop
    of trace_engine/recording/parallel.py, the progressive sample of progressive.py); once a launch went on by
    turns, the loop's remaining visits run nothing (cooperative.py: their programs ran by turns)."""
    program = None if type(hooks).program is Hooks.program else hooks.program

    def make_set_grid_idx(orig: Method) -> Method:
        def set_grid_idx(self: Triton, x: int, y: int, z: int) -> Any:
            turns = waits.turns
            if turns is not None:
                turns.main_returned()
                turns.executor.fn = _ran_by_turns
                return orig(self, x, y, z)
            if program is not None:
                instead = program(x, y, z)
                if instead is END_LOOP:
                    raise _LoopEnded()
                if instead is not None:
                    x, y, z = instead
            return orig(self, x, y, z)

        return set_grid_idx

    scope.patch(InterpreterBuilder, "set_grid_idx", make_set_grid_idx)


def _patch_provenance(scope: PatchScope, hooks: Hooks) -> None:
    """Which argument each pointer came from: the tag set on an argument's pointer handle, carried
    through pointer arithmetic, reshapes, where, block pointers and descriptors, and passed down as
    context by the builder methods that compute pointers themselves."""

    def make_cvt(orig: Method) -> Method:
        def _implicit_cvt(arg: Any) -> Any:
            out = orig(arg)
            if out is not arg:
                hooks.tag(arg, out)
            return out

        return _implicit_cvt

    scope.patch(_interp, "_implicit_cvt", make_cvt)

    def make_propagating(orig: Method, name: str = "") -> Method:
        def wrapper(self: Triton, *args: Any, **kwargs: Any) -> Any:
            out = orig(self, *args, **kwargs)
            tag = None
            if name == "create_select" and len(args) == 3:
                # tl.where(c, p, q) whose condition is the same in every lane (a scalar: xformers' tiled
                # matmul picks a tile so) is the operand it picks, not a block of mixed provenance.
                cond = getattr(args[0], "data", None)
                if cond is not None and cond.size and (cond.all() or not cond.any()):
                    picked = _tag_of(args[1] if cond.all() else args[2])
                    if picked is not None and out is not None:
                        out._tl_arg = picked
                        lanes = lane_tags(args[1] if cond.all() else args[2])
                        if lanes is not None:
                            out._tl_lanes = lanes
                    return out
                # a per-lane condition over two pointers of different arguments: each lane's argument
                data = getattr(out, "data", None)
                t1, t2 = _tag_of(args[1]), _tag_of(args[2])
                if (
                    cond is not None
                    and data is not None
                    and t1 is not None
                    and t2 is not None
                    and (t1 != t2 or t1 == MIXED)
                ):
                    p, q = _lanes_of(args[1], data.shape), _lanes_of(args[2], data.shape)
                    if p is not None and q is not None:
                        out._tl_arg = MIXED
                        out._tl_lanes = np.where(np.broadcast_to(cond, data.shape), p, q)
                        return out
            for a in args:
                t = _tag_of(a)
                if t is not None:
                    if tag is None:
                        tag = t
                    elif t != tag:
                        tag = MIXED
            if tag is not None:
                if type(out) is tuple:
                    for o in out:
                        o._tl_arg = tag
                elif out is not None:
                    out._tl_arg = tag
                    if tag == MIXED:
                        _carry_lanes(name, args, out)
            return out

        return wrapper

    for name in _PROPAGATING:
        if hasattr(InterpreterBuilder, name):
            scope.patch(InterpreterBuilder, name, functools.partial(make_propagating, name=name))

    # A pointer turned into an integer and back (p.to(tl.int64) + delta, then .to(pointer)) is still
    # its argument's pointer, checked against its bounds: by address alone, a stray store landing in
    # a tensor the script holds (a canary beside x) went ahead unreported. The integer carries its own
    # tag (_tl_ptrint: integer arguments carry _tl_arg too, and mixing those would make an ordinary
    # pointer MIXED). A loaded integer (a table of pointers, grouped GEMM) has none: by address.
    def make_int_provenance(orig: Method, name: str) -> Method:
        def wrapper(self: Triton, *args: Any, **kwargs: Any) -> Any:
            out = orig(self, *args, **kwargs)
            if out is None:
                return out
            if name == "create_ptr_to_int":
                tag = _tag_of(args[0]) if args else None
            else:
                tags = {getattr(a, "_tl_ptrint", None) for a in args[:2]} - {None}
                tag = tags.pop() if len(tags) == 1 else None
                if (
                    name == "create_sub"
                    and tag is not None
                    and all(getattr(a, "_tl_ptrint", None) == tag for a in args[:2])
                ):
                    tag = None  # p - q of one argument: an offset, not a pointer
            if tag is None or tag == MIXED:
                return out
            try:
                if name == "create_int_to_ptr":
                    out._tl_arg = tag
                else:
                    out._tl_ptrint = tag
            except AttributeError:
                pass
            return out

        return wrapper

    for name in ("create_ptr_to_int", "create_int_cast", "create_add", "create_sub", "create_int_to_ptr"):
        if hasattr(InterpreterBuilder, name):
            scope.patch(InterpreterBuilder, name, functools.partial(make_int_provenance, name=name))

    def make_context(orig: Method, pos: int, kind: str, op: str) -> Method:
        def wrapper(self: Triton, *args: Any, **kwargs: Any) -> Any:
            hooks.push_context(kind, op, args[pos] if len(args) > pos else None)
            try:
                return orig(self, *args, **kwargs)
            finally:
                hooks.pop_context()

        return wrapper

    for name, (pos, kind, op) in _CONTEXT.items():
        if hasattr(InterpreterBuilder, name):
            scope.patch(InterpreterBuilder, name, functools.partial(make_context, pos=pos, kind=kind, op=op))


def _patch_accesses(scope: PatchScope, hooks: Hooks, waits: _cooperative.Waits) -> None:
    """Memory accesses: every load/store path of every release ends in create_masked_load/store,
    create_atomic_rmw or create_atomic_cas. The hook's answer (a mask without the out-of-bounds
    lanes) replaces the mask before the interpreter sees it."""
    access = hooks.access

    begin_turns = functools.partial(_begin_turns, hooks)

    def polled(op: str, builder: Triton, ptrs: Triton, result: Triton, changed: bool = False) -> Triton:
        turns = waits.turns
        if turns is not None and changed:
            turns.wrote()
        waits.observe(op, builder, ptrs.data.tobytes(), result.data.tobytes(), begin_turns)
        return result

    def make_load(orig: Method) -> Method:
        def create_masked_load(self: Triton, ptrs: Triton, mask: Triton, other: Triton, *a: Any, **k: Any) -> Any:
            new = access("load", "tl.load", self, ptrs, mask_array(mask))
            if new is not None:
                mask = _with_mask(mask, new)
            out = orig(self, ptrs, mask, other, *a, **k)
            if k.get("is_volatile", a[-1] if a else False) is True:
                polled("a volatile tl.load", self, ptrs, out)
            return out

        return create_masked_load

    def make_store(orig: Method) -> Method:
        def create_masked_store(self: Triton, ptrs: Triton, value: Triton, mask: Triton, *a: Any, **k: Any) -> Any:
            new = access("store", "tl.store", self, ptrs, mask_array(mask), value=value)
            if new is not None:
                mask = _with_mask(mask, new)
            if waits.turns is not None:
                waits.turns.wrote()
            return orig(self, ptrs, value, mask, *a, **k)

        return create_masked_store

    def make_rmw(orig: Method) -> Method:
        def create_atomic_rmw(
            self: Triton, rmwOp: Triton, ptr: Triton, val: Triton, mask: Triton, sem: Triton, scope: Triton
        ) -> Triton:
            name = _rmw_name(rmwOp)
            new = access("atomic", name, self, ptr, mask_array(mask), order=(sem, scope))
            if new is not None:
                mask = _with_mask(mask, new)
            out = orig(self, rmwOp, ptr, val, mask, sem, scope)
            if new is not None:
                # The lanes kept off memory (out of bounds; every lane of a size check's re-launch) return
                # 0, as a masked load's do: the interpreter leaves whatever was there in them, and an
                # offset computed from that (lmdeploy's MoE route sort stores at an atomic cursor's old
                # value) is garbage.
                kept_off = ~np.broadcast_to(np.asarray(new, dtype=bool), out.data.shape)
                if kept_off.any():
                    data = out.data.copy()
                    data[kept_off] = 0
                    out = TensorHandle(data, out.dtype)
            changed = waits.turns is not None and _cooperative.atomic_changes(
                name, out.data, val.data, mask_array(mask)
            )
            return polled(name, self, ptr, out, changed)

        return create_atomic_rmw

    def make_cas(orig: Method) -> Method:
        def create_atomic_cas(
            self: Triton, ptr: Triton, cmp: Triton, val: Triton, sem: Triton, scope: Triton
        ) -> Triton:
            new = access("atomic", "tl.atomic_cas", self, ptr, None, order=(sem, scope))
            if new is not None:
                # No mask operand: point the out-of-bounds lanes at a scratch buffer instead.
                scratch = np.zeros(ptr.data.size, dtype=np.uint64)
                lanes = scratch.ctypes.data + 8 * np.arange(ptr.data.size, dtype=np.uint64)
                data = np.where(new.reshape(ptr.data.shape), ptr.data, lanes.reshape(ptr.data.shape))
                out = orig(self, TensorHandle(data, ptr.dtype), cmp, val, sem, scope)
                del scratch
            else:
                out = orig(self, ptr, cmp, val, sem, scope)
            changed = waits.turns is not None and _cooperative.atomic_changes(
                "tl.atomic_cas", out.data, val.data, None, cmp.data
            )
            return polled("tl.atomic_cas", self, ptr, out, changed)

        return create_atomic_cas

    # tl.load/tl.store without a mask reach create_masked_* through these: tell the hooks, so a
    # message can say "add a mask" only to an access that has none.
    def make_unmasked(orig: Method) -> Method:
        def wrapper(self: Triton, *args: Any, **kwargs: Any) -> Any:
            hooks.unmasked += 1
            try:
                return orig(self, *args, **kwargs)
            finally:
                hooks.unmasked -= 1

        return wrapper

    scope.patch(InterpreterBuilder, "create_load", make_unmasked)
    scope.patch(InterpreterBuilder, "create_store", make_unmasked)
    scope.patch(InterpreterBuilder, "create_masked_load", make_load)
    scope.patch(InterpreterBuilder, "create_masked_store", make_store)
    scope.patch(InterpreterBuilder, "create_atomic_rmw", make_rmw)
    scope.patch(InterpreterBuilder, "create_atomic_cas", make_cas)


def _patch_device_descriptor(scope: PatchScope, hooks: Hooks) -> None:
    """tl.make_tensor_descriptor (3.3+): the builder call behind both an in-kernel descriptor and the
    interpreter's conversion of a host TensorDescriptor argument (the recorder tells them apart)."""

    def make(orig: Method) -> Method:
        def create_make_tensor_descriptor(self: Triton, *args: Any, **kwargs: Any) -> Any:
            hooks.device_descriptor()
            return orig(self, *args, **kwargs)

        return create_make_tensor_descriptor

    if hasattr(InterpreterBuilder, "create_make_tensor_descriptor"):
        scope.patch(InterpreterBuilder, "create_make_tensor_descriptor", make)


def allocator_is_set() -> bool:
    """Whether the script called triton.set_allocator (a compiled kernel that builds tensor descriptors
    needs one for its scratch memory); True where the release has no such thing."""
    try:
        from triton.runtime import _allocation
    except ImportError:
        return True
    current: Any = getattr(_allocation, "_allocator", None)
    if hasattr(current, "get"):  # 3.6+: a ContextVar
        current = current.get()
    null = getattr(_allocation, "NullAllocator", None)
    return current is not None and not (null is not None and isinstance(current, null))


def _patch_dot(scope: PatchScope, hooks: Hooks) -> None:
    """tl.dot: the operands (shapes, dtypes, and which load produced each, when one did) and the result
    for the FLOP count and the viewer's A/B/C tiles. Loads are wrapped once more, on top of the access hook, to
    hand the loaded value to the recorder (the same signatures in 3.2 - 3.9)."""

    def make_dot(orig: Method) -> Method:
        def create_dot(self: Triton, a: Triton, b: Triton, d: Triton, *rest: Any, **kw: Any) -> Any:
            p = rest[0] if rest else kw.get("input_precision")
            name = _semantics.dot_precision_name(p)
            out = orig(self, a, b, d, *rest, **kw)  # the result as the GPU computes it (semantics.py)
            hooks.dot(self, a, b, str(a.dtype.scalar), str(b.dtype.scalar), str(d.dtype.scalar), name, out)
            return out

        return create_dot

    def make_loaded(orig: Method) -> Method:
        def create_masked_load(self: Triton, *args: Any, **kwargs: Any) -> Any:
            out = orig(self, *args, **kwargs)
            hooks.loaded(out)
            return out

        return create_masked_load

    if hasattr(InterpreterBuilder, "create_dot"):
        scope.patch(InterpreterBuilder, "create_dot", make_dot)
        scope.patch(InterpreterBuilder, "create_masked_load", make_loaded)


_heuristics: list[Any] = []  # the triton.heuristics wrappers of the launches in flight, outermost first


def _patch_heuristics(scope: PatchScope) -> None:
    """Which @triton.heuristics a launch went through, so that the size check can work their values out
    again at another size (`EVEN_D = D % BLOCK_D == 0` is False at D + 1)."""
    from triton.runtime import autotuner as _autotuner

    heuristics = getattr(_autotuner, "Heuristics", None)
    if heuristics is None or not hasattr(heuristics, "run"):
        return

    def make_run(orig: Method) -> Method:
        def run(self: Triton, *args: Any, **kwargs: Any) -> Any:
            _heuristics.append(self)
            try:
                return orig(self, *args, **kwargs)
            finally:
                _heuristics.pop()

        return run

    scope.patch(heuristics, "run", make_run)


def heuristics_in_flight() -> list[tuple[str, Callable[[dict[str, Any]], Any]]]:
    """(meta-parameter, its function of the arguments by name) of every heuristic of the launch in
    flight, in the order triton applies them."""
    return [(name, fn) for h in _heuristics for name, fn in getattr(h, "values", {}).items()]


def _patch_autotuner(scope: PatchScope, hooks: Hooks) -> None:
    """Autotuning on a machine without a GPU: time the configs on the interpreter instead of asking
    a GPU driver (the bare interpreter fails with "0 active drivers")."""
    from triton.runtime import autotuner as _autotuner

    def _interpreter_bench(
        kernel_call: Callable[[], Any], quantiles: Sequence[float] | None = None, **_: object
    ) -> float | list[float]:
        t = hooks.benchmark(kernel_call)
        return [t] * len(quantiles) if quantiles else t

    # A marker on the function object (_bind_bench tells our benches from the user's by it): mypy
    # knows no attributes of a function but its own.
    _interpreter_bench._triton_lens = True  # type: ignore[attr-defined]
    scope.patch(_autotuner.Autotuner, "__init__", lambda orig: _init_with_bench(orig, _interpreter_bench))

    # Every config the autotuner tries (after its own pruning: early_config_prune, perf_model) is one a
    # GPU may pick, so each trial launch is recorded (hooks.trial), and the config kept is the one first in
    # the user's list, not the fastest on the interpreter: its timing is noise, and a pick that changes
    # from run to run would change the findings too. The library's own code still runs each trial
    # (pre_hook, reset_to_zero, restore_value, post_hook) and then the kept config, so the script sees
    # the result of a real config with its inputs restored between trials as on a GPU.
    def make_bench(orig: Method) -> Method:
        def _bench(self: Triton, *args: Any, config: Triton, **meta: Any) -> Any:
            rank = config_rank(self.configs, config)
            hooks.trial(config_label(self.configs, config), rank)
            try:
                timings = orig(self, *args, config=config, **meta)
            finally:
                hooks.trial(None)
            if isinstance(timings, (list, tuple)) and timings and timings[0] == float("inf"):
                return timings  # a config the library itself rejected (out of resources)
            return [float(rank)] * 3  # (median, 20%, 80%): the rank wins min() in every release

        return _bench

    def make_run(orig: Method) -> Method:
        def run(self: Triton, *args: Any, **kwargs: Any) -> Any:
            # An autotuner made outside this run's patches (a module the pytest plugin's session imported
            # at collection, or in an earlier test) times with the bench of this run's hooks, so that its
            # trial launches are this recorder's trials, not launches.
            _bind_bench(self, _interpreter_bench)
            hooks.tuning()
            try:
                return orig(self, *args, **kwargs)
            finally:
                hooks.tuned()

        return run

    scope.patch(_autotuner.Autotuner, "_bench", make_bench)
    scope.patch(_autotuner.Autotuner, "run", make_run)


def _init_with_bench(orig: Method, bench: Callable[..., Any]) -> Method:
    def __init__(self: Triton, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("do_bench") is None:
            kwargs["do_bench"] = bench
        return orig(self, *args, **kwargs)

    return __init__


def _bind_bench(autotuner: object, bench: Callable[..., Any]) -> None:
    """Time with `bench` where the autotuner has no timing function of the user's: none, or one of ours."""
    d = vars(autotuner)
    key = "_do_bench" if "_do_bench" in d else "do_bench"  # 3.4+: a cached_property over _do_bench
    cur = d.get(key)
    if cur is None or getattr(cur, "_triton_lens", False):
        setattr(autotuner, key, bench)
        if key == "_do_bench":
            d.pop("do_bench", None)  # the property's cached value


def _time_once(
    kernel_call: Callable[[], Any], quantiles: Sequence[float] | None = None, **_: object
) -> float | list[float]:
    """An autotuner made outside a run (the pytest plugin's collection): until a run binds its own, one
    call of each config timed here (3.2 and 3.3 ask the GPU driver for a benchmarker as they are made)."""
    t0 = time.perf_counter()
    kernel_call()
    t = (time.perf_counter() - t0) * 1e3
    return [t] * len(quantiles) if quantiles else t


_time_once._triton_lens = True  # type: ignore[attr-defined]  # (the same marker as _interpreter_bench's)


def autotuners_time_on_the_interpreter() -> Callable[[], None]:
    """From now on, an autotuner made without a timing function gets one of the interpreter's, not the
    GPU driver's (which fails with "0 active drivers" on a machine without one); returns the undo. For a
    process that makes kernels before any run's patches: the pytest plugin's session."""
    from triton.runtime import autotuner as _autotuner

    scope = PatchScope()
    scope.patch(_autotuner.Autotuner, "__init__", lambda orig: _init_with_bench(orig, _time_once))
    return scope.restore


_CONFIG_OPTIONS = ("num_warps", "num_stages", "num_ctas", "maxnreg")


def _config_items(config: Triton) -> list[tuple[str, Any]]:
    items = list(getattr(config, "kwargs", {}).items())
    return items + [(k, getattr(config, k)) for k in _CONFIG_OPTIONS if getattr(config, k, None) is not None]


def config_label(configs: Sequence[Triton], config: Triton) -> str:
    """A config as the user wrote it, by what sets it apart in the autotuner's list: `BLOCK_M=128,
    num_warps=8` (the options every config shares are left out; all of them when none differs)."""
    items = _config_items(config)
    lists = [dict(_config_items(c)) for c in configs]
    differ = [(k, v) for k, v in items if any(d.get(k, object()) != v for d in lists)]
    return ", ".join(f"{k}={v}" for k, v in (differ or items)) or "default config"


def config_rank(configs: Sequence[Triton], config: Triton) -> int:
    """The config's place in the user's list: the same object, else an equal one (a pruning function
    may hand back copies), else after every listed one."""
    for i, c in enumerate(configs):
        if c is config:
            return i
    items = _config_items(config)
    for i, c in enumerate(configs):
        if _config_items(c) == items:
            return i
    return len(configs)


def _skip_unused_overflow_checks(scope: PatchScope) -> None:
    """Dead work in the bare interpreter: every integer add/sub/mul builds an int64 overflow check
    (about a third of its time) whose only consumer, device_assert, returns at once unless the
    options have debug on, and the interpreter's never do. Skip building it in that case: the
    kernel's results and errors are the same, the run is faster."""
    from triton.language import semantic as _semantic

    if hasattr(_semantic, "TritonSemantic") and hasattr(_semantic.TritonSemantic, "binary_op_sanitize_overflow_impl"):

        def make_sanitize(orig: Method) -> Method:
            def binary_op_sanitize_overflow_impl(self: Triton, lhs: Triton, rhs: Triton, binary_op: Triton) -> Any:
                if not self.builder.options.debug:
                    return None
                return orig(self, lhs, rhs, binary_op)

            return binary_op_sanitize_overflow_impl

        scope.patch(_semantic.TritonSemantic, "binary_op_sanitize_overflow_impl", make_sanitize)
    elif hasattr(_semantic, "binary_op_sanitize_overflow_impl"):  # 3.2: module-level functions

        def make_sanitize_fn(orig: Method) -> Method:
            def binary_op_sanitize_overflow_impl(lhs: Triton, rhs: Triton, builder: Triton, binary_op: Triton) -> Any:
                if not builder.options.debug:
                    return None
                return orig(lhs, rhs, builder, binary_op)

            return binary_op_sanitize_overflow_impl

        scope.patch(_semantic, "binary_op_sanitize_overflow_impl", make_sanitize_fn)


def operand_tag(operand: object) -> int | None:
    """The argument a block pointer / descriptor / pointer operand was derived from."""
    if operand is None:
        return None
    return _tag_of(operand)


def kernel_def(fn: object) -> tuple[str, str, int]:
    """(name, file, def line) of a rewritten kernel function."""
    code = getattr(fn, "__code__", None)
    name: str = getattr(fn, "__name__", "kernel")
    if code is None:
        return name, "", 0
    return name, os.path.abspath(code.co_filename), code.co_firstlineno


try:  # 3.4+: host-side tensor descriptors
    from triton.tools.tensor_descriptor import TensorDescriptor as _TensorDescriptor
except ImportError:  # pragma: no cover - 3.2
    _TensorDescriptor = None

_TensorWrapper = getattr(triton.runtime.jit, "TensorWrapper", None)


def iter_tensor_args(name: str, value: object) -> Iterator[tuple[str, Any, Any]]:
    """(display name, object handed to _implicit_cvt, torch tensor) for each tensor inside an argument."""
    if isinstance(value, tuple):
        for i, v in enumerate(value):
            yield from iter_tensor_args(f"{name}[{i}]", v)
    elif _TensorDescriptor is not None and isinstance(value, _TensorDescriptor):
        yield from iter_tensor_args(name, value.base)
    elif hasattr(value, "data_ptr"):
        tensor = value.base if _TensorWrapper is not None and isinstance(value, _TensorWrapper) else value
        yield name, value, tensor


# ---- Kernels decorated while the interpreter was off (the Triton-Viz API's @trace) ---------------
# - `to_interpreted(kernel)`: the same chain (autotune, heuristics) over an InterpretedFunction.
# - `jit_calls_interpreted()`: while active, a plain @triton.jit function called from inside an
#   interpreted kernel (a user helper, or tl.cdiv/tl.zeros when triton was imported without
#   TRITON_INTERPRET) runs under the interpreter instead of failing with "Cannot call @triton.jit'd
#   outside of the scope of a kernel".
_lock = threading.Lock()
_interpreted: dict[int, Any] = {}  # id(JITFunction) -> InterpretedFunction
_depth = 0
_jit_call_patch: PatchScope | None = None  # the outermost one's (nested calls share it)


def _interpreted_for(jit: Triton) -> Triton:
    key = id(jit)
    f = _interpreted.get(key)
    if f is None or f.fn is not jit.fn:
        f = _interp.InterpretedFunction(jit.fn)
        _interpreted[key] = f
    return f


def to_interpreted(kernel: Triton, bench: Callable[..., Any] | None = None) -> Triton:
    """The object to launch instead of `kernel`: the same chain (autotune, heuristics) over an
    InterpretedFunction. The kernel object itself is changed in place only where it wraps others
    (an Autotuner's `fn`), so the user's references keep working."""
    if isinstance(kernel, _interp.InterpretedFunction):
        return kernel
    if isinstance(kernel, JITFunction):
        return _interpreted_for(kernel)
    inner = getattr(kernel, "fn", None)
    if inner is None:
        raise TypeError(
            f"triton_lens.trace: expected a @triton.jit kernel (or an autotuned / heuristics "
            f"kernel), got {type(kernel).__name__}"
        )
    new_inner = to_interpreted(inner, bench)
    if new_inner is not inner:
        kernel.fn = new_inner
    if bench is not None and hasattr(kernel, "configs"):  # an Autotuner
        set_autotune_bench(kernel, bench)
    return kernel


def set_autotune_bench(autotuner: Triton, bench: Callable[..., Any]) -> None:
    """Make an Autotuner time its configs with `bench(kernel_call, quantiles=None)` (the interpreter)."""
    # 3.4+: `do_bench` is a cached_property over `_do_bench`; 3.2/3.3 store `do_bench` on the instance.
    own: dict[str, Any] = autotuner.__dict__  # vars(autotuner), as the dict it is
    if "_do_bench" in own and own["_do_bench"] is None:
        autotuner._do_bench = bench
        own.pop("do_bench", None)
    elif "_do_bench" not in own:
        try:
            autotuner.do_bench = bench
        except AttributeError:
            pass


@contextlib.contextmanager
def jit_calls_interpreted() -> Iterator[None]:
    global _depth, _jit_call_patch
    with _lock:
        if _depth == 0:
            _jit_call_patch = PatchScope()

            def make(saved: Method) -> Method:
                def __call__(self: Triton, *args: Any, **kwargs: Any) -> Any:
                    # A plain JITFunction can only be called from inside a kernel, and while a traced
                    # launch runs that kernel is interpreted: run the callee under the interpreter too.
                    if _depth > 0:
                        return _interpreted_for(self)(*args, **kwargs)
                    return saved(self, *args, **kwargs)

                return __call__

            _jit_call_patch.patch(JITFunction, "__call__", make)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _jit_call_patch is not None:
                scope, _jit_call_patch = _jit_call_patch, None
                scope.restore()


def installed() -> bool:
    """True while a recorder's hooks wrap the interpreter (e.g. the worker of `check`/`view`)."""
    return _installs > 0


# ---- The CPU stand-in for CUDA (cuda_standin.py) --------------------------------------------------
def stand_in_driver(scope: PatchScope, driver: object) -> None:
    """Make `triton.runtime.driver.active` answer with `driver` until `scope` is left. (3.2 keeps `active`
    as an attribute, 3.3+ a property over `_active`: the undo puts back whichever the release has.)"""
    config = triton.runtime.driver
    scope.keep_dict(vars(config))
    config.set_active(driver)


def gpu_target(backend: str, arch: int, warp_size: int) -> Triton:
    """What a driver's get_current_target() returns (`.backend`, `.arch`, `.warp_size`)."""
    from triton.backends.compiler import GPUTarget

    return GPUTarget(backend, arch, warp_size)


# ---- The parallel grid loop (trace_engine/recording/parallel.py) ---------------------------------------------------
# A forked child records its programs and logs what they store; the parent replays the logs. Both
# go through the C functions every load and store path of every release ends in:
# `_interpreter.store(ptrs, values, mask)` and `_interpreter.load(ptrs, mask, other, dtype)`, with raw
# uint64 addresses, the values' own dtype and the final mask (the recorder has already cleared the
# out-of-bounds lanes). The atomics, the only other C functions that touch memory, never run in a child.


class _MemoryTap:
    """Stands in for the C module inside the interpreter: each store goes to `on_store`, which says whether
    to write it to this process's memory too, and each load first to `before_load` (its pointers and
    dtype)."""

    def __init__(
        self,
        real: Triton,
        on_store: Callable[[np.ndarray, np.ndarray, np.ndarray], bool],
        before_load: Callable[[np.ndarray, Any], None],
    ) -> None:
        self._real, self._on_store, self._before_load = real, on_store, before_load
        # The module's other functions (the atomics) as plain attributes: found at once, not through
        # __getattr__ after a failed lookup.
        for name in dir(real):
            if not name.startswith("_") and name not in ("store", "load"):
                self.__dict__[name] = getattr(real, name)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def store(self, ptrs: np.ndarray, values: np.ndarray, mask: np.ndarray) -> Any:
        if self._on_store(ptrs, values, mask):
            return self._real.store(ptrs, values, mask)
        return None

    def load(self, ptrs: np.ndarray, mask: np.ndarray, other: np.ndarray, dtype: Any) -> Any:
        self._before_load(ptrs, dtype)
        return self._real.load(ptrs, mask, other, dtype)


def tap_memory(
    on_store: Callable[[np.ndarray, np.ndarray, np.ndarray], bool], before_load: Callable[[np.ndarray, Any], None]
) -> None:
    """From now on every store the interpreter makes in this process goes to `on_store(ptrs, values,
    mask)`, and is written to memory only where it returns True; every load first calls
    `before_load(ptrs, dtype)`. Only a forked child calls this; it never returns to normal life."""
    _interp._interpreter = _MemoryTap(_interp._interpreter, on_store, before_load)


def raw_store(ptrs: np.ndarray, values: np.ndarray) -> None:
    """Write values (any dtype of the right itemsize) to absolute host addresses, in lane order."""
    real = _interp._interpreter
    real = getattr(real, "_real", real)
    # 3.2's C store takes only writeable arrays (the logs arrive as read-only views of a stream buffer).
    ptrs, values = np.require(ptrs, requirements=["C", "W"]), np.require(values, requirements=["C", "W"])
    real.store(ptrs, values, np.ones(ptrs.shape, dtype=bool))


# -- the size check's re-launches (trace_engine/recording/size_probe.py) ---------------------------------------


def relaunch(executor: Triton, programs: list[Grid], grid: Grid, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Run `programs` of a launch of `grid` programs, and no other: a launch of len(programs) programs
    whose builder reports each one's ids and the whole grid (tl.program_id, tl.num_programs). The
    launch goes through GridExecutor.__call__ as patched, so the hooks record it like any other."""
    again = copy.copy(executor)
    again.grid = (len(programs), 1, 1)
    with PatchScope() as scope:

        def make_dim(orig: Method) -> Method:
            def set_grid_dim(self: Triton, nx: int, ny: int, nz: int) -> Any:
                return orig(self, *grid)

            return set_grid_dim

        def make_idx(orig: Method) -> Method:
            def set_grid_idx(self: Triton, x: int, y: int, z: int) -> Any:
                return orig(self, *programs[x])

            return set_grid_idx

        scope.patch(InterpreterBuilder, "set_grid_dim", make_dim)
        scope.patch(InterpreterBuilder, "set_grid_idx", make_idx)
        type(executor).__call__(again, *args, **kwargs)


_INT_OPS = {"create_add": np.add, "create_sub": np.subtract, "create_mul": np.multiply, "create_shl": np.left_shift}


class BrokenClaim(Exception):
    """A `tl.multiple_of` whose claim is false for the value it is given (`claims_checked`)."""


@contextlib.contextmanager
def claims_checked(arguments: set[int]) -> Iterator[None]:
    """While inside: a `tl.multiple_of(n, d)` on a single value equal to one of the launch's integer
    `arguments` (the kernel's claim about what its host passes) that d does not divide raises BrokenClaim, as
    a broken `tl.assume` raises: the compiled kernel takes the claim as true (aligned, vectorized accesses),
    so a size that breaks it is no size the kernel admits. A claim on a value the kernel computed is not
    checked: where that value is wrong (an int32 product that wrapped, `tl.multiple_of(row * stride, 16)`)
    the bug is the wrap, which the size check must still see. On a block the claim is about the first element
    of each contiguous group (`tl.max_contiguous`), which the interpreter does not track: not checked either.
    Every release's interpreter lowers `tl.multiple_of` to TensorHandle.set_attr("tt.divisibility", values)
    (3.2 spells it "tt.divisiblity")."""
    with PatchScope() as scope:

        def make(orig: Method) -> Method:
            def set_attr(self: Triton, key: str, value: Any) -> Any:
                data: Any = getattr(self, "data", None)
                if key in ("tt.divisibility", "tt.divisiblity") and isinstance(data, np.ndarray) and data.size == 1:
                    d = value[0] if isinstance(value, (list, tuple)) and value else value
                    x = int(data.reshape(-1)[0]) if data.dtype.kind in "iu" else None
                    if x in arguments and isinstance(d, int) and d > 0 and x % d:
                        raise BrokenClaim(f"tl.multiple_of({x}, {d})")
                return orig(self, key, value)

            return set_attr

        scope.patch(_interp.TensorHandle, "set_attr", make)
        yield


@contextlib.contextmanager
def int32_overflows(on_overflow: Callable[[str, np.ndarray, np.ndarray, np.ndarray], None]) -> Iterator[None]:
    """While inside: on_overflow(op name, lhs, rhs, lanes) for each signed 32-bit add, sub, mul or shift
    whose exact result leaves int32 in some lanes (the GPU wraps them, as the interpreter does)."""
    with PatchScope() as scope:
        for name, op in _INT_OPS.items():

            def make(orig: Method, name: str = name, op: np.ufunc = op) -> Method:
                def wrapper(self: Triton, lhs: Triton, rhs: Triton) -> Any:
                    out = orig(self, lhs, rhs)
                    # Each operand's TensorHandle data, as triton made it (Any: its untyped internals).
                    a: Any = getattr(lhs, "data", None)
                    b: Any = getattr(rhs, "data", None)
                    if isinstance(a, np.ndarray) and a.dtype == np.int32 and getattr(b, "dtype", None) == np.int32:
                        exact = op(a.astype(np.int64), b.astype(np.int64))
                        bad = (exact > 2147483647) | (exact < -2147483648)
                        if bad.any():
                            on_overflow(name, np.broadcast_to(a, bad.shape), np.broadcast_to(b, bad.shape), bad)
                    return out

                return wrapper

            if hasattr(InterpreterBuilder, name):
                scope.patch(InterpreterBuilder, name, make)
        yield
