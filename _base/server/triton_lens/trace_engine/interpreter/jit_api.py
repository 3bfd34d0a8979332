"""A kernel under the interpreter answers as a @triton.jit kernel does on a GPU, for library wrappers.

With TRITON_INTERPRET=1, `@triton.jit` makes an InterpretedFunction, which has little of JITFunction's
API. Library code around kernels (FlagGems' libentry, kernel caches, launch helpers) relies on it:
`isinstance(fn, triton.runtime.JITFunction)` to find the kernel under an Autotuner or Heuristics (walking
`.fn`), the kernel's `params`, `signature`, `src`, `cache_key`, and `JITFunction.run(...)`, whose return
value (the compiled kernel) it keeps and launches later with `kernel[grid](*args)`. Triton's own
Autotuner walks `.fn` the same way (its disk cache and listener). For one run (`install(patch)`):

- `triton.JITFunction`, `triton.runtime.JITFunction` and the autotuner module's name for it are a
  subclass whose isinstance also admits InterpretedFunction (a real JITFunction still is one), and so is
  `triton.runtime.jit.JITFunction` where the release allows it (compat.jit_module_may_name_the_shim:
  3.5+; on 3.2-3.4 JITFunction's methods name it).
- an InterpretedFunction answers JITFunction's attributes (`params`, `signature`, `src`, `cache_key`,
  `constexprs`, ...) from a JITFunction built from the same Python function, without compiling;
- `run(...)` (and `warmup(...)`) return a `CompiledKernelStandIn`: `kernel[grid](*args)` launches the
  interpreted kernel again, with the constexprs of the call that made it, taking the arguments the
  release's compiled kernel takes (compat.compiled_kernel_takes_constexprs: every argument, constexprs
  too, as triton 3.6 does, seen on an H200; only those that are not constexprs on 3.2). Other counts fail
  as the compiled kernel's launch does ("function takes exactly 17 arguments (16 given)").
"""

from __future__ import annotations

import hashlib
import inspect
import types
from collections.abc import Callable
from typing import Any, TypeVar

import triton
import triton.runtime.interpreter as _interp
from triton.runtime.jit import JITFunction

# JITFunction's attributes a library reads that an InterpretedFunction lacks; others stay missing (code
# that probes with hasattr must keep seeing an interpreted kernel where it does today).
_DELEGATED = frozenset(
    {
        "params",
        "signature",
        "src",
        "raw_src",
        "cache_key",
        "constexprs",
        "do_not_specialize",
        "do_not_specialize_on_alignment",
        "starting_line_number",
        "repr",
        "module",
        "hash",
        "debug",
        "noinline",
        "launch_metadata",
        "get_capture_scope",
        "__globals__",
        "_unsafe_update_src",
    }
)


class _JITType(type):
    # Only the shim itself admits interpreted kernels: a class that subclasses it while it is installed
    # (triton's GluonJITFunction(JITFunction[T]), imported lazily) keeps isinstance as it was.
    def __instancecheck__(cls, obj: Any) -> bool:
        if cls is _JIT:
            return isinstance(obj, (JITFunction, _interp.InterpretedFunction))
        return type.__instancecheck__(cls, obj)

    def __subclasscheck__(cls, sub: type) -> bool:
        if cls is _JIT:
            return issubclass(sub, (JITFunction, _interp.InterpretedFunction))
        return type.__subclasscheck__(cls, sub)


def _jit_type() -> type:
    """JITFunction's subclass whose isinstance admits an interpreted kernel (made once: types created for
    each run would leave each run's kernels instances of a different class)."""
    global _JIT
    if _JIT is None:
        meta = type(JITFunction)
        if meta is not type:  # a release with a metaclass of its own: combine them
            mcls: type = type("_JITType", (_JITType, meta), {})
        else:
            mcls = _JITType
        T = TypeVar("T")

        def body(ns: dict[str, Any]) -> None:
            ns.update(__module__=JITFunction.__module__, __doc__=JITFunction.__doc__)

        # generic like JITFunction, so `JITFunction[T]` still subscripts (triton's GluonJITFunction does)
        _JIT = types.new_class("JITFunction", (JITFunction[T],), {"metaclass": mcls}, body)
    return _JIT


_JIT: type | None = None


def _jit_of(self: Any) -> Any:
    """The JITFunction of an interpreted kernel's Python function (built once per kernel; parsing its
    source, no compile)."""
    jit = self.__dict__.get("_triton_lens_jit")
    if jit is None:
        jit = JITFunction(self.fn, **getattr(self, "kwargs", {}))
        self.__dict__["_triton_lens_jit"] = jit
    return jit


def _key(self: Any) -> str:
    """The kernel's cache key, the same at every ask. The JITFunction's own, where its dependency walk
    gets through; that walk meets the interpreter's stand-ins for the device library (`erf =
    libdevice.erf` taken at import: "Unsupported function referenced"), which a compiled run never sees:
    then a key of the source and the options (a library keys its caches of wrappers with it)."""
    key: str | None = self.__dict__.get("_triton_lens_key")
    if key is None:
        try:
            key = str(_jit_of(self).cache_key)
        except RuntimeError:
            text = f"{_jit_of(self).src}{sorted(getattr(self, 'kwargs', {}).items())}"
            key = hashlib.sha256(text.encode()).hexdigest()
        self.__dict__["_triton_lens_key"] = key
    return key


def _getattr(self: Any, name: str) -> Any:
    if name in ("cache_key", "hash") and "fn" in self.__dict__:
        return _key(self)
    if name in _DELEGATED and "fn" in self.__dict__:
        return getattr(_jit_of(self), name)
    raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


class CompiledKernelStandIn:
    """What JITFunction.run returned, under the interpreter: `kernel[grid](*args)` launches the kernel
    with the constexprs (and launch options) of the call that made it."""

    def __init__(self, fn: Any, bound: dict[str, Any], options: dict[str, Any], takes_constexprs: bool = True):
        self.fn = fn
        self._takes_constexprs = takes_constexprs
        self._bound = bound
        self._options = options
        self.name = getattr(fn, "__name__", "kernel")
        params = list(inspect.signature(fn.fn).parameters)
        self._names = params
        constexprs = set(_constexpr_names(fn))
        self._runtime = [n for n in params if n not in constexprs]
        # what libraries read of a compiled kernel: its launch options, and no registers or spills
        self.metadata = _Metadata(
            num_warps=options.get("num_warps", 4),
            num_stages=options.get("num_stages", 3),
            num_ctas=options.get("num_ctas", 1),
            shared=0,
            name=self.name,
        )
        self.n_regs = 0
        self.n_spills = 0
        self.n_max_threads = 1024

    def __getitem__(self, grid: Any) -> Callable[..., None]:
        def runner(*args: Any, stream: Any = None, **_: Any) -> None:
            self.launch(grid, args)

        return runner

    def launch(self, grid: Any, args: tuple[Any, ...]) -> None:
        takes = self._names if self._takes_constexprs else self._runtime
        if len(args) != len(takes):
            which = (
                "every argument, constexprs too" if self._takes_constexprs else "the arguments that are not constexprs"
            )
            raise TypeError(
                f"{self.name}[grid](...) got {len(args)} arguments, but the compiled kernel that "
                f"JITFunction.run returned takes {which} on triton {triton.__version__}: {len(takes)} "
                f"({', '.join(takes)}), in order. On a GPU this launch fails too: pass those"
            )
        values = {**self._bound, **dict(zip(takes, args))}
        g = tuple(int(v) for v in (grid if isinstance(grid, (tuple, list)) else (grid,)))
        self.fn.run(*[values[n] for n in self._names], grid=g, warmup=False, **self._options)


class _Metadata:
    def __init__(self, **fields: Any):
        self.__dict__.update(fields)

    def _asdict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _constexpr_names(fn: Any) -> list[str]:
    try:
        return [p.name for p in _jit_of(fn).params if p.is_constexpr]
    except Exception:  # no source (a generated function): no parameter is known to be a constexpr
        return []


def _bind(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The call's parameters (defaults applied) and its launch options (num_warps, ...)."""
    sig = inspect.signature(fn.fn)
    names = set(sig.parameters)
    params = {k: v for k, v in kwargs.items() if k in names}
    options = {k: v for k, v in kwargs.items() if k not in names}
    b = sig.bind_partial(*args, **params)
    b.apply_defaults()
    return dict(b.arguments), options


_TAKES_CONSTEXPRS = True  # set by install: what the release's compiled kernel takes


def _run(fn: Any, launch: Callable[[], Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Launch (or not, for a warmup) and return what JITFunction.run returns: the compiled kernel."""
    out = launch()
    if out is not None:
        return out
    try:
        bound, options = _bind(fn, args, kwargs)
    except TypeError:
        return out  # arguments the kernel does not take: the launch raised already, or will
    return CompiledKernelStandIn(fn, bound, options, _TAKES_CONSTEXPRS)


def _own_run(fn: Any, own: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        rest = {k: v for k, v in kwargs.items() if k not in ("grid", "warmup")}
        if kwargs.get("warmup"):  # compile only: that kernel's own run would launch
            return _run(fn, lambda: None, args, rest)
        return _run(fn, lambda: own(*args, **kwargs), args, rest)

    return run


def install(
    patch: Callable[[Any, str, Callable[[Any], Any]], None], takes_constexprs: bool = True, jit_module: bool = False
) -> None:
    """Patch through compat's `patch(owner, name, make)`, undone with the run's other hooks.
    `takes_constexprs`: whether the release's compiled kernel is launched with its constexprs too;
    `jit_module`: whether triton.runtime.jit's own name may be the shim too."""
    global _TAKES_CONSTEXPRS
    _TAKES_CONSTEXPRS = takes_constexprs
    shim = _jit_type()
    import triton.runtime as runtime
    import triton.runtime.autotuner as autotuner
    import triton.runtime.jit as jit_module_

    # triton.runtime.jit's own global only where JITFunction's methods do not name it (3.2-3.4's
    # __setattr__ calls super(JITFunction, self), and a JITFunction is no subtype of the shim).
    for owner in (triton, runtime, autotuner) + ((jit_module_,) if jit_module else ()):
        if getattr(owner, "JITFunction", None) is JITFunction:
            patch(owner, "JITFunction", lambda orig: shim)
    interpreted = _interp.InterpretedFunction
    patch(interpreted, "__getattr__", lambda orig: _getattr)

    # InterpretedFunction's methods are untyped triton internals: Any at that boundary.
    def make_run(orig: Callable[..., Any]) -> Callable[..., Any]:
        def run(self: Any, *args: Any, grid: Any, warmup: bool, **kwargs: Any) -> Any:
            return _run(self, lambda: orig(self, *args, grid=grid, warmup=warmup, **kwargs), args, kwargs)

        return run

    def make_init(orig: Callable[..., None]) -> Callable[..., None]:
        def __init__(self: Any, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
            orig(self, fn, *args, **kwargs)
            own = self.__dict__.get("run")
            if own is not None:  # a release that sets `run` on each kernel (3.2): wrap that one
                self.__dict__["run"] = _own_run(self, own)

        return __init__

    patch(interpreted, "__init__", make_init)
    if "run" in vars(interpreted):
        patch(interpreted, "run", make_run)

    def make_warmup(orig: Callable[..., Any] | None) -> Callable[..., Any]:
        def warmup(self: Any, *args: Any, grid: Any, **kwargs: Any) -> Any:
            return self.run(*args, grid=grid, warmup=True, **kwargs)

        return orig if orig is not None else warmup

    patch(interpreted, "warmup", make_warmup)
