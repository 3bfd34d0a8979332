"""Runs a script or module for "Debug this kernel" (the VS Code extension's `triton-lens` debug type).

    python debug_launcher.py SCRIPT [ARGS...]
    python debug_launcher.py -m MODULE [ARGS...]

It runs the target as `python SCRIPT` / `python -m MODULE` would, with TRITON_INTERPRET=1 so that @triton.jit
bodies run as Python and breakpoints in them stop. With TRITON_LENS_STOP_PROGRAM="x,y,z" set, the debugger
traces kernel bodies only while that program runs (tl.program_id(0..2) == x, y, z): breakpoints inside a
kernel then stop in that program and no other. Host code is traced as usual.

Standard library only, and importable on its own: debugpy runs it as a file from the extension folder.
On a machine without a usable CUDA device (or with TRITON_LENS_DEVICE=cpu) it runs the target with CPU
tensors standing in for CUDA ones, as the traced runs do (trace_engine/standin/cuda_standin.py, imported from the
package this file sits in, only then).
"""

from __future__ import annotations

import contextlib
import os
import runpy
import sys
from typing import Any

STOP_ENV = "TRITON_LENS_STOP_PROGRAM"


def parse_program(text: str | None) -> tuple[int, int, int] | None:
    """ "3" -> (3, 0, 0), "3,1" -> (3, 1, 0), "" -> None."""
    if not text or not text.strip():
        return None
    parts = [p for p in text.replace("(", "").replace(")", "").replace(" ", ",").split(",") if p]
    if not 1 <= len(parts) <= 3:
        raise ValueError(f"{STOP_ENV} must be 'x', 'x,y' or 'x,y,z', not {text!r}")
    nums = [int(p) for p in parts]
    if any(n < 0 for n in nums):
        raise ValueError(f"{STOP_ENV} must hold non-negative integers, not {text!r}")
    nums += [0] * (3 - len(nums))
    return (nums[0], nums[1], nums[2])


def install_program_filter(stop: tuple[int, int, int], set_tracing=None) -> bool:
    """Turn the debugger's tracing off for kernel programs other than `stop`.

    The interpreter runs a launch as a loop over program ids, calling set_grid_idx(x, y, z) before each
    program's body, all in one thread; we hook that call (and the end of the launch, to trace host code again).
    `set_tracing(bool)` defaults to debugpy.trace_this_thread. Returns False when there is nothing to hook.
    """
    if set_tracing is None:
        try:
            import debugpy
        except ImportError:
            return False
        set_tracing = debugpy.trace_this_thread
    try:
        from triton.runtime import interpreter
    except Exception:
        return False
    builder_cls: Any = type(getattr(interpreter, "interpreter_builder", None))
    executor_cls: Any = getattr(interpreter, "GridExecutor", None)
    orig_set_idx = getattr(builder_cls, "set_grid_idx", None)
    orig_call = getattr(executor_cls, "__call__", None)  # noqa: B004  (the attribute itself is wrapped)
    if orig_set_idx is None or orig_call is None:
        return False
    state = {"tracing": True}

    def trace(on: bool) -> None:
        if state["tracing"] != on:
            state["tracing"] = on
            set_tracing(on)

    def set_grid_idx(self, x, y, z, *rest, **kw):
        result = orig_set_idx(self, x, y, z, *rest, **kw)
        trace((int(x), int(y), int(z)) == stop)
        return result

    def call(self, *args, **kwargs):
        try:
            return orig_call(self, *args, **kwargs)
        finally:
            trace(True)

    builder_cls.set_grid_idx = set_grid_idx
    executor_cls.__call__ = call
    return True


def cuda_standin():
    """A context that stands in CPU tensors for CUDA ones when the traced runs would (no usable GPU, or
    TRITON_LENS_DEVICE=cpu); a null context when CUDA is real or the package is not beside this file."""
    parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    added = parent not in sys.path
    if added:
        sys.path.append(parent)  # last: the user's own modules still win
    try:
        from triton_lens.trace_engine import CudaStandIn, cuda_standin_wanted
    except ImportError:
        return contextlib.nullcontext()
    finally:
        if added:
            sys.path.remove(parent)
    reason = cuda_standin_wanted(os.environ.get("TRITON_LENS_DEVICE", "auto"))
    if reason is None:
        return contextlib.nullcontext()
    return _announced(CudaStandIn(reason, os.environ.get("TRITON_LENS_STAND_IN_GPU") or None))


@contextlib.contextmanager
def _announced(standin):
    with standin:
        try:
            yield
        finally:
            if standin.report() is not None:
                print(
                    f"[triton-lens] CPU stand-in for CUDA ({standin.reason}): this run's CUDA tensors were CPU "
                    f"tensors and its GPU a stood-in {standin.gpu.name}",
                    file=sys.stderr,
                )


def main(argv: list[str]) -> None:
    if not argv or argv == ["-m"]:
        print(__doc__, file=sys.stderr)
        raise SystemExit(2)
    os.environ.setdefault("TRITON_INTERPRET", "1")
    stop = parse_program(os.environ.get(STOP_ENV))
    if stop is not None:
        if install_program_filter(stop):
            print(f"[triton-lens] kernel breakpoints stop only in program {stop}", file=sys.stderr)
        else:
            print(
                f"[triton-lens] could not restrict breakpoints to program {stop}: every program stops", file=sys.stderr
            )
    with cuda_standin():
        if argv[0] == "-m":
            module, args = argv[1], argv[2:]
            sys.argv = [module, *args]
            sys.path.insert(0, os.getcwd())
            runpy.run_module(module, run_name="__main__", alter_sys=True)
        else:
            script, args = argv[0], argv[1:]
            sys.argv = [script, *args]
            sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
            runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    # debugpy puts this file's folder (…/server/triton_lens) first on sys.path; the user's script must not
    # see our modules as top-level ones, so take it off.
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    main(sys.argv[1:])
