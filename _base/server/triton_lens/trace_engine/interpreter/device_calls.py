"""@jit helper calls inside a launch without re-patching triton.language each time (for one run).

Every call of a @jit function from a kernel (`tl.max`, `tl.sum`, `tl.cdiv`... are such functions in
triton/language/standard.py, and so are the user's helpers) starts with the interpreter's
`_patch_lang(fn)`: `inspect.getmembers` over triton.language, its tensor class and its math module, to
wrap every builtin again. Inside a launch those modules are already patched (by the launch itself, or
by the first helper call that saw them), so the second and later scans find nothing to wrap: they only
re-set the same wrappers. On a softmax or a layer norm, whose every row calls tl.max and tl.sum, that
scan was the largest single cost of the bare interpreter (a third of its time, bench/trace_overhead.py).

Here `_patch_lang` is skipped for a helper call whose language modules were patched earlier in the same
launch; the launch's own call (the first in each launch) always runs, so its restore scope (3.4+) is
the interpreter's, and a module first seen in a helper is patched as before.

`install(patch)` uses compat's `patch(owner, name, make)`, so it is undone with compat's hooks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import triton.language as tl
import triton.runtime.interpreter as _interp


class _LaunchPatches:
    """Which language modules the launch in progress has patched (None: no launch in progress)."""

    def __init__(self) -> None:
        self.patched: set[int] | None = None
        self.skipped = 0  # helper calls that did not re-patch (tests read it)


def _langs(fn: Callable[..., Any]) -> set[int]:
    # The interpreter's own rule: the modules named in the function's globals that are tl or tl.core.
    g = getattr(fn, "__globals__", None) or {}
    return {id(v) for v in g.values() if v is tl or v is tl.core}


def install(patch: Callable[[Any, str, Callable[[Any], Any]], None]) -> _LaunchPatches:
    state = _LaunchPatches()

    # The interpreter's functions and the kernels' are untyped triton internals: Any at that boundary.
    def make_patch_lang(orig: Callable[[Callable[..., Any]], Any]) -> Callable[[Callable[..., Any]], Any]:
        def _patch_lang(fn: Callable[..., Any]) -> Any:
            patched = state.patched
            if patched is None:  # outside a launch: as the interpreter does
                return orig(fn)
            langs = _langs(fn)
            if patched and langs <= patched:
                state.skipped += 1
                return None  # a helper call's scope is never used (the launch's is never skipped)
            out = orig(fn)
            patched |= langs
            return out

        return _patch_lang

    def make_call(orig: Callable[..., Any]) -> Callable[..., Any]:
        def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
            outer = state.patched
            state.patched = set()
            try:
                return orig(self, *args, **kwargs)
            finally:
                state.patched = outer

        return __call__

    patch(_interp, "_patch_lang", make_patch_lang)
    patch(_interp.GridExecutor, "__call__", make_call)
    return state
