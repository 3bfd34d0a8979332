"""The triton-release-specific bits that the Triton-Viz API needs, kept in one small module so the
lead can fold them into trace/compat.py (the only module meant to know triton releases).

- `to_interpreted(kernel)`: a traced kernel (JITFunction, Autotuner, Heuristics, or an
  InterpretedFunction already) whose innermost function runs under the interpreter, even when
  TRITON_INTERPRET was not set when it was decorated. Autotuners time their configs on the
  interpreter instead of asking for a GPU driver.
- `jit_calls_interpreted()`: while active, a call of a plain `@triton.jit` function from inside an
  interpreted kernel (a user helper, or triton's own `tl.cdiv`, `tl.zeros`... when triton was
  imported without TRITON_INTERPRET) runs it under the interpreter instead of failing with "Cannot
  call @triton.jit'd outside of the scope of a kernel".
- `engine_hooks_installed()`: is a recorder already hooked into the interpreter (the whole script
  runs under `triton-lens check`/`view`)?
"""
from __future__ import annotations

import contextlib
import threading
from typing import Callable, Iterator, Optional

import triton
import triton.runtime.interpreter as _interp
from triton.runtime.jit import JITFunction

_lock = threading.Lock()
_interpreted: dict[int, object] = {}  # id(JITFunction) -> InterpretedFunction
_depth = 0
_saved_call = None


def _interpreted_for(jit: JITFunction):
    key = id(jit)
    f = _interpreted.get(key)
    if f is None or f.fn is not jit.fn:
        f = _interp.InterpretedFunction(jit.fn)
        _interpreted[key] = f
    return f


def to_interpreted(kernel, bench: Optional[Callable] = None):
    """The object to launch instead of `kernel`: the same chain (autotune, heuristics) over an
    InterpretedFunction. The kernel object itself is changed in place only where it wraps others
    (an Autotuner's `fn`), so the user's references keep working."""
    if isinstance(kernel, _interp.InterpretedFunction):
        return kernel
    if isinstance(kernel, JITFunction):
        return _interpreted_for(kernel)
    inner = getattr(kernel, "fn", None)
    if inner is None:
        raise TypeError(f"triton_lens.trace: expected a @triton.jit kernel (or an autotuned / heuristics "
                        f"kernel), got {type(kernel).__name__}")
    new_inner = to_interpreted(inner, bench)
    if new_inner is not inner:
        kernel.fn = new_inner
    if bench is not None and hasattr(kernel, "configs"):  # an Autotuner
        set_autotune_bench(kernel, bench)
    return kernel


def set_autotune_bench(autotuner, bench: Callable) -> None:
    """Make an Autotuner time its configs with `bench(kernel_call, quantiles=None)` (the interpreter)."""
    # 3.4+: `do_bench` is a cached_property over `_do_bench`; 3.2/3.3 store `do_bench` on the instance.
    if "_do_bench" in vars(autotuner) and vars(autotuner)["_do_bench"] is None:
        autotuner._do_bench = bench
        vars(autotuner).pop("do_bench", None)
    elif "_do_bench" not in vars(autotuner):
        try:
            autotuner.do_bench = bench
        except AttributeError:
            pass


@contextlib.contextmanager
def jit_calls_interpreted() -> Iterator[None]:
    global _depth, _saved_call
    with _lock:
        if _depth == 0:
            _saved_call = vars(JITFunction).get("__call__")
            saved = JITFunction.__call__

            def __call__(self, *args, **kwargs):
                # A plain JITFunction can only be called from inside a kernel, and while a traced
                # launch runs that kernel is interpreted: run the callee under the interpreter too.
                if _depth > 0:
                    return _interpreted_for(self)(*args, **kwargs)
                return saved(self, *args, **kwargs)

            JITFunction.__call__ = __call__
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                if _saved_call is not None:
                    JITFunction.__call__ = _saved_call
                else:
                    del JITFunction.__call__
                _saved_call = None


def engine_hooks_installed() -> bool:
    """True when a triton_lens Recorder already wraps the interpreter (the worker of `check`/`view`)."""
    call = getattr(_interp.GridExecutor, "__call__", None)
    return "install.<locals>" in getattr(call, "__qualname__", "")


def triton_version() -> str:
    return triton.__version__
