"""The trace engine's face: everything the front ends (lsp, viz, check, cli, pytest_plugin, debug_launcher)
use of the engine, and the only module of it they import. Its rooms, each a sub-package with its own rule
(docs/architecture.md, "The engine's rooms"; tests/arch/test_invariants.py checks them):

- interpreter/  triton's CPU interpreter made to follow the compiled kernel: the release-specific hooks
                (compat.py, the only code that patches triton's interpreter classes), the GPU's semantics
                where the interpreter differs, programs that wait on each other. Imports no other room.
- recording/    the recorder: what each load and store of a launch touched, its wire format (stream.py),
                the size check's re-launches, and a launch's programs in forked children (parallel.py,
                progressive.py, the room's only forks). Knows no runner, supervisor or zygote.
- standin/      the CUDA stand-in: a script written for a GPU runs unchanged on the CPU. Imports the
                interpreter room only.
- process/      containment: the runner, the supervisor, the zygote and the worker, their limits and
                their process tree. The only room that starts a process by exec.

The run plan and the kernel finder are text only and live outside the engine (triton_lens.source).

Names load lazily (PEP 562): the language server imports the face for `run` without importing triton
or torch, which only the worker process needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .interpreter.compat import (
        autotuners_time_on_the_interpreter,
        enable_interpreter,
        jit_calls_interpreted,
        to_interpreted,
    )
    from .interpreter.compat import installed as hooks_installed
    from .interpreter.releases import TESTED, unsupported_note
    from .process.process_tree import default_workers, resolve_workers
    from .process.runner import Partial, Progress, RunRequest, run
    from .recording.parallel import ParallelRecorder
    from .recording.recorder import Recorder
    from .recording.size_cache import SizeCache
    from .standin.cuda_api import NeedsRealGPU
    from .standin.cuda_standin import CudaStandIn
    from .standin.cuda_standin import wanted as cuda_standin_wanted
    from .standin.gpu_profiles import GpuProfile, profile

# name -> (module of a room, its name there)
_FACE = {
    # a run of a script in a contained worker, and what it reports while it runs
    "RunRequest": ("process.runner", "RunRequest"),
    "run": ("process.runner", "run"),
    "Progress": ("process.runner", "Progress"),
    "Partial": ("process.runner", "Partial"),
    "resolve_workers": ("process.process_tree", "resolve_workers"),
    "default_workers": ("process.process_tree", "default_workers"),
    # the recorder in this process (the Triton-Viz API, the pytest plugin)
    "Recorder": ("recording.recorder", "Recorder"),
    "ParallelRecorder": ("recording.parallel", "ParallelRecorder"),
    # the size check's results across runs (the language server keeps one for all its runs)
    "SizeCache": ("recording.size_cache", "SizeCache"),
    # the interpreter, for the front ends that run kernels in their own process
    "enable_interpreter": ("interpreter.compat", "enable_interpreter"),
    "autotuners_time_on_the_interpreter": ("interpreter.compat", "autotuners_time_on_the_interpreter"),
    "to_interpreted": ("interpreter.compat", "to_interpreted"),
    "jit_calls_interpreted": ("interpreter.compat", "jit_calls_interpreted"),
    "hooks_installed": ("interpreter.compat", "installed"),
    "TESTED": ("interpreter.releases", "TESTED"),
    "unsupported_note": ("interpreter.releases", "unsupported_note"),
    # the CUDA stand-in and the GPUs it can report
    "CudaStandIn": ("standin.cuda_standin", "CudaStandIn"),
    "NeedsRealGPU": ("standin.cuda_api", "NeedsRealGPU"),
    "cuda_standin_wanted": ("standin.cuda_standin", "wanted"),
    "GpuProfile": ("standin.gpu_profiles", "GpuProfile"),
    "profile": ("standin.gpu_profiles", "profile"),
}

__all__ = [
    "CudaStandIn",
    "GpuProfile",
    "NeedsRealGPU",
    "ParallelRecorder",
    "Partial",
    "Progress",
    "Recorder",
    "RunRequest",
    "SizeCache",
    "TESTED",
    "autotuners_time_on_the_interpreter",
    "cuda_standin_wanted",
    "default_workers",
    "enable_interpreter",
    "hooks_installed",
    "jit_calls_interpreted",
    "profile",
    "resolve_workers",
    "run",
    "to_interpreted",
    "unsupported_note",
]  # what _FACE names (tests/arch/test_invariants.py checks the two agree)


def __getattr__(name: str) -> Any:
    try:
        module, attr = _FACE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"{__name__}.{module}"), attr)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return __all__
