"""The CPU stand-in for CUDA: a script written for a GPU runs unchanged where there is none.

The worker enters it for the run when the machine has no usable CUDA device, or when the user asks
(`--cpu`, `tritonLens.device: "cpu"`). While it is in place:
- CUDA tensors are CPU tensors that say they are CUDA ones (cuda_tensors.py, a TorchFunctionMode), also
  where torch runs the script's Python beneath a call: autograd.Function backward, torch.library ops,
  threads (cuda_reentry.py);
- `torch.cuda.*`, `triton.runtime.driver.active` and `triton.testing.do_bench` answer for one GPU
  (gpu_profiles.py; default H100), and do_bench times the interpreter (cuda_api.py); so does
  `nvidia-smi` where the machine has none (nvidia_smi.py, first on PATH for the script's processes);
- what cannot be stood in raises, or is explained as, `NeedsRealGPU` naming what was missing.
Everything is put back on exit. `report()` says what the script used, for the run's result.
"""

from __future__ import annotations

import re
from typing import Any

from ..interpreter import compat
from ..interpreter.patches import PatchScope
from .cuda_api import CudaApi, Driver, NeedsRealGPU, interpreter_bench, needs_real_gpu  # noqa: F401
from .gpu_profiles import profile

NO_DEVICE = "no CUDA device on this machine"
ASKED = 'asked for: the device is set to "cpu"'


def wanted(device: str) -> str | None:
    """Why the stand-in is needed for a run asking for `device` ("auto" | "cpu"), or None (real CUDA)."""
    try:
        import torch
    except ImportError:
        return None  # no torch: nothing asks for CUDA tensors
    if device == "cpu":
        return ASKED
    try:
        return None if torch.cuda.is_available() else NO_DEVICE
    except Exception:  # noqa: BLE001 - a broken driver is no usable device
        return NO_DEVICE


class CudaStandIn:
    def __init__(self, reason: str, gpu: str | None = None):
        self.reason = reason
        self.gpu = profile(gpu)
        self.used: dict[str, None] = {}
        self.uses = 0  # how many times the script asked (the pytest plugin: did this test use it)
        self.timed: list[dict[str, Any]] = []
        self._scope = PatchScope()  # everything the stand-in changed, undone on exit

    def _use(self, what: str) -> None:
        self.uses += 1
        self.used.setdefault(what, None)

    def _timed(self, file: str, line: int, ms: float, what: str) -> None:
        self._use(what)
        self.timed.append({"file": file, "line": line, "ms": ms, "what": what})

    # -- lifetime ---------------------------------------------------------------------------
    def __enter__(self) -> CudaStandIn:
        import torch
        import triton.testing

        from . import cuda_reentry, nvidia_smi
        from .cuda_tensors import CudaTensors, generator_class

        api = CudaApi(self.gpu, self._use)
        scope = self._scope = PatchScope()
        try:
            _set(scope, torch.cuda, api.functions())
            _set(scope, torch.cuda, {"_lazy_init": api.lazy_init})
            _set(scope, torch._C, api.c_functions())
            _set(scope, torch, {"Generator": generator_class(self._use)})
            bench = interpreter_bench(self._timed)
            _set(scope, triton.testing, {"do_bench": bench, "do_bench_cudagraph": bench})
            driver = Driver(api, bench, lambda: compat.gpu_target("cuda", self.gpu.arch, self.gpu.warp_size))
            compat.stand_in_driver(scope, driver)
            mode = CudaTensors(lambda: api.index, self._use)
            scope.enter(mode)
            cuda_reentry.install(scope, mode)  # backward, torch.library ops, threads
            nvidia_smi.install(scope, self.gpu)  # vendor probes that shell out
        except BaseException:
            scope.restore()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._scope.restore()

    # -- results ----------------------------------------------------------------------------
    def report(self) -> dict[str, Any] | None:
        """The model.CudaStandIn of the run as JSON, or None when the script never asked for CUDA."""
        if not self.used:
            return None
        return {"gpu": self.gpu.name, "reason": self.reason, "used": list(self.used), "timed": self.timed}

    def explain(self, meta: dict[str, Any]) -> dict[str, Any]:
        """An error meta of the worker, its message rewritten when the cause is CUDA the stand-in lacks."""
        what = explain_message(meta.get("type", ""), meta.get("message", ""))
        if what is None:
            return meta
        first = (meta.get("message") or "").strip().splitlines()[:1] or [""]
        said = first[0] if len(first[0]) <= 160 else first[0][:157] + "..."
        return dict(meta, type="NeedsRealGPU", message=f"{what} (the error was {meta['type']}: {said})")


def _set(scope: PatchScope, module: Any, values: dict[str, Any]) -> None:
    for name, value in values.items():
        scope.set_attr(module, name, value)


# (pattern over "Type: message", what it needed, why)
_CAUSES = [
    (
        # An op of a library (not aten) with no Python kernel the stand-in could run: a Python one,
        # registered for CUDA while the stand-in is in place, runs (cuda_reentry.py).
        re.compile(r"Could not run '(?P<op>(?!aten::)\w+::[\w.]+)' with arguments from the 'CPU' backend"),
        "{op}",
        "its kernel is compiled CUDA code of the library that registered it, with no CPU version",
    ),
    (
        re.compile(r"Could not run '(?P<op>[\w:.]+)' with arguments from the 'CPU' backend"),
        "{op}",
        "it has no CPU implementation (on a GPU it runs in a CUDA library such as cuBLAS or cuDNN)",
    ),
    (
        re.compile(r"NCCL|ProcessGroupNCCL", re.I),
        'NCCL (torch.distributed with backend "nccl")',
        "NCCL talks between GPUs",
    ),
    (
        re.compile(r"(?P<lib>lib(?:cudart|cuda|cublas|cublasLt|cudnn|nvrtc|c10_cuda|torch_cuda)[\w.]*\.so[\w.]*)"),
        "a compiled CUDA extension",
        "it links {lib}, which this machine does not have",
    ),
    (
        re.compile(r"CUDA_HOME|nvcc"),
        "building a CUDA extension (torch.utils.cpp_extension)",
        "it compiles CUDA code with nvcc",
    ),
    (
        re.compile(r"Torch not compiled with CUDA enabled|Cannot get CUDA generator|without ATen_cuda"),
        "a torch.cuda feature Triton Lens does not stand in",
        "PyTorch here has no CUDA",
    ),
]


def explain_message(type_name: str, message: str) -> str | None:
    if type_name == "NeedsRealGPU":
        return None
    text = f"{type_name}: {message}"
    for rx, what, why in _CAUSES:
        m = rx.search(text)
        if m is not None:
            groups = m.groupdict()
            return str(needs_real_gpu(what.format(**groups), why.format(**groups)))
    return None
