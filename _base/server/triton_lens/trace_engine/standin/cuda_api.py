"""The CUDA runtime a script talks to, stood in on the CPU: `torch.cuda.*`, triton's active driver,
and `triton.testing.do_bench` timing on the interpreter. The device reported is a `GpuProfile`.

What cannot be stood in (CUDA graphs, a triton driver call that needs a real device) raises
`NeedsRealGPU`, whose message names what was needed; the worker reports it at the script's line.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from types import FrameType
from typing import Any, Literal, NoReturn

from .gpu_profiles import GpuProfile

# What scripts pass where torch takes a device or stream (None, an index, "cuda:0", a torch.device, a
# Stream): accepted as torch accepts it, checked where it matters (CudaApi._check).
DeviceArg = Any
StreamArg = Any

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep
_FIX = (
    "Run it on a machine with a GPU, or skip it in Triton Lens's runs "
    '(`if not os.environ.get("TRITON_LENS_WORKER"):`, set in every run it makes).'
)


class NeedsRealGPU(RuntimeError):
    """The script asked for something of CUDA that CPU tensors cannot stand in for."""


def needs_real_gpu(what: str, why: str = "") -> NeedsRealGPU:
    return NeedsRealGPU(
        f"{what} needs a real GPU{': ' + why if why else ''}, and this run stands in CPU tensors for CUDA ones. {_FIX}"
    )


def user_line() -> tuple[str, int]:
    """(file, line) of the innermost frame outside torch, triton and this package."""
    import torch
    import triton

    skip = (_PACKAGE_DIR, os.path.dirname(torch.__file__) + os.sep, os.path.dirname(triton.__file__) + os.sep)
    f: FrameType | None = sys._getframe(1)
    while f is not None:
        name = f.f_code.co_filename
        if not name.startswith(skip) and not name.startswith("<"):
            return os.path.abspath(name), f.f_lineno
        f = f.f_back
    return "", 0


class DeviceProperties:
    """What torch.cuda.get_device_properties returns, for the stood-in GPU."""

    def __init__(self, p: GpuProfile):
        self.name = p.name
        self.major, self.minor = p.major, p.minor
        self.total_memory = p.total_memory
        self.multi_processor_count = p.multi_processor_count
        self.L2_cache_size = p.l2_cache_size
        self.max_threads_per_multi_processor = p.max_threads_per_multi_processor
        self.regs_per_multiprocessor = p.max_num_regs
        self.shared_memory_per_block_optin = p.max_shared_mem
        self.warp_size = p.warp_size
        self.is_integrated = 0
        self.is_multi_gpu_board = 0
        self.gcnArchName = "NVIDIA"
        self.uuid = "00000000-0000-0000-0000-000000000000"

    def __repr__(self) -> str:
        return (
            f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
            f"total_memory={self.total_memory // (1024 * 1024)}MB, multi_processor_count="
            f"{self.multi_processor_count}, L2_cache_size={self.L2_cache_size // (1024 * 1024)}MB) "
            f"[CPU stand-in]"
        )


class Event:
    """torch.cuda.Event for timing: record() takes the host clock (the work ran already: nothing is async)."""

    def __init__(
        self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False, external: bool = False
    ):
        self.enable_timing = enable_timing
        self._t: float | None = None

    def record(self, stream: StreamArg = None) -> None:
        self._t = time.perf_counter()

    def elapsed_time(self, end: Event) -> float:
        if self._t is None or end._t is None:
            raise RuntimeError("torch.cuda.Event.elapsed_time: both events must be recorded first")
        return (end._t - self._t) * 1e3

    def synchronize(self) -> None: ...
    def wait(self, stream: StreamArg = None) -> None: ...

    def query(self) -> bool:
        return True


class Stream:
    """torch.cuda.Stream: everything runs in order on the host, so a stream only has to be accepted."""

    def __init__(self, device: DeviceArg = None, priority: int = 0, **_: Any):
        self.device = device
        self.priority = priority
        self.cuda_stream = 0

    def synchronize(self) -> None: ...
    def wait_stream(self, stream: StreamArg) -> None: ...
    def wait_event(self, event: Event) -> None: ...

    def record_event(self, event: Event | None = None) -> Event:
        recorded = event or Event()
        recorded.record(self)
        return recorded

    def query(self) -> bool:
        return True

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None: ...


class _StreamContext:
    def __init__(self, stream: StreamArg = None):
        self.stream = stream

    def __enter__(self) -> StreamArg:
        return self.stream

    def __exit__(self, *exc: object) -> None: ...


class CudaApi:
    """The torch.cuda functions a script uses, answering for one stood-in GPU (device 0, or the one set)."""

    def __init__(self, gpu: GpuProfile, used: Callable[[str], None]):
        self.gpu = gpu
        self.used = used
        self.index = 0
        self._default_stream = Stream()

    def _check(self, device: DeviceArg) -> int:
        import torch

        if device is None:
            return self.index
        if isinstance(device, str):
            device = torch.device(device)
        if isinstance(device, torch.device):
            if device.type != "cuda":
                raise ValueError(f"Expected a cuda device, but got: {device}")
            return self.index if device.index is None else device.index
        return int(device)

    def functions(self) -> dict[str, Any]:
        """name in torch.cuda -> stand-in."""
        import torch

        api = self

        def use(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
            def wrapper(*a: Any, **k: Any) -> Any:
                api.used(f"torch.cuda.{name}")
                return fn(*a, **k)

            wrapper.__name__ = name
            wrapper.__qualname__ = f"cuda.{name}"
            wrapper.__doc__ = f"torch.cuda.{name}, stood in on the CPU by Triton Lens."
            return wrapper

        def set_device(device: DeviceArg) -> None:
            i = api._check(device)
            if i != 0:
                raise needs_real_gpu(f"torch.cuda.set_device({device!r})", "the stand-in has one device, cuda:0")
            api.index = i

        class device:  # torch.cuda.device(i): a context manager
            def __init__(self, dev: DeviceArg):
                self.idx = api._check(dev)

            def __enter__(self) -> device:
                return self

            def __exit__(self, *exc: object) -> Literal[False]:
                return False

        def graphs(*_a: Any, **_k: Any) -> NoReturn:
            raise needs_real_gpu(
                "CUDA graphs (torch.cuda.CUDAGraph / torch.cuda.graph)", "a graph captures and replays GPU work"
            )

        zero = lambda device=None: 0  # noqa: E731
        none = lambda *a, **k: None  # noqa: E731
        out: dict[str, Any] = {
            "is_available": lambda: True,
            "is_initialized": lambda: True,
            "init": none,
            "device_count": lambda: 1,
            "current_device": lambda: api.index,
            "set_device": set_device,
            "device": device,
            "get_device_name": lambda device=None: (api._check(device), api.gpu.name)[1],
            "get_device_capability": lambda device=None: (api._check(device), api.gpu.capability)[1],
            "get_device_properties": lambda device=None: (api._check(device), DeviceProperties(api.gpu))[1],
            "get_arch_list": lambda: [f"sm_{api.gpu.arch}"],
            "is_bf16_supported": lambda including_emulation=True: api.gpu.major >= 8,
            "synchronize": none,
            "empty_cache": none,
            "memory_allocated": zero,
            "max_memory_allocated": zero,
            "memory_reserved": zero,
            "max_memory_reserved": zero,
            "reset_peak_memory_stats": none,
            "reset_max_memory_allocated": none,
            "memory_stats": lambda device=None: {},
            "memory_summary": lambda device=None, abbreviated=False: "CPU stand-in for CUDA: no GPU memory was used",
            "mem_get_info": lambda device=None: (api.gpu.total_memory, api.gpu.total_memory),
            # The stand-in's random tensors come from the CPU generator (torch.manual_seed calls
            # torch.cuda.manual_seed_all itself: seed the generator directly).
            "manual_seed": lambda seed: (torch.default_generator.manual_seed(seed), None)[1],
            "manual_seed_all": lambda seed: (torch.default_generator.manual_seed(seed), None)[1],
            "seed": lambda: (torch.default_generator.seed(), None)[1],
            "seed_all": lambda: (torch.default_generator.seed(), None)[1],
            "initial_seed": torch.initial_seed,
            "get_rng_state": lambda device="cuda": torch.get_rng_state(),
            "set_rng_state": lambda state, device="cuda": torch.set_rng_state(state),
            "Event": Event,
            "Stream": Stream,
            "current_stream": lambda device=None: api._default_stream,
            "default_stream": lambda device=None: api._default_stream,
            "stream": _StreamContext,
            "set_stream": none,
            "CUDAGraph": graphs,
            "graph": graphs,
        }
        # Not counted as the script using CUDA: classes (counted where they matter), and what torch
        # itself calls on every run (torch.manual_seed seeds CUDA too; libraries ask is_available).
        quiet = (
            "Event",
            "Stream",
            "device",
            "stream",
            "is_available",
            "is_initialized",
            "init",
            "device_count",
            "manual_seed",
            "manual_seed_all",
            "seed",
            "seed_all",
            "initial_seed",
            "get_rng_state",
            "set_rng_state",
        )
        return {k: (v if k in quiet else use(k, v)) for k, v in out.items()}

    def c_functions(self) -> dict[str, Any]:
        """name in torch._C -> stand-in: the raw CUDA runtime calls libraries make on the host (vLLM,
        xformers and FlagGems pass the raw stream to their launches). The stand-in's one stream is 0."""
        return {
            "_cuda_getCurrentRawStream": lambda device=None: 0,
            "_cuda_getDevice": lambda: self.index,
            "_cuda_getDeviceCount": lambda: 1,
        }

    def lazy_init(self) -> None:
        """torch.cuda._lazy_init, which every torch.cuda call not stood in reaches first."""
        import torch

        frame = sys._getframe(1)
        caller = frame.f_code.co_name
        if not frame.f_code.co_filename.startswith(os.path.dirname(torch.cuda.__file__) + os.sep):
            # Reached from torch's C++ (a tensor made for CUDA) where the stand-in's mode is not in
            # place: Python that torch or an extension runs on a path the stand-in does not cover.
            raise needs_real_gpu(
                "a CUDA tensor made outside the stand-in",
                "torch ran this code from C++ on a path Triton Lens does not cover (not a backward, "
                "a torch.library op or a thread of the script)",
            )
        raise needs_real_gpu(
            f"torch.cuda.{caller}" if not caller.startswith("_") else "this torch.cuda call",
            "Triton Lens has no CPU stand-in for it",
        )


class _Missing:
    """Any other attribute of the stood-in driver: a clear error where the script used it."""

    def __init__(self, path: str):
        self._path = path

    def __call__(self, *a: Any, **k: Any) -> NoReturn:
        raise needs_real_gpu(f"{self._path}()", "Triton Lens has no CPU stand-in for this driver call")

    def __getattr__(self, name: str) -> _Missing:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Missing(f"{self._path}.{name}")


class DriverUtils:
    def __init__(self, api: CudaApi):
        self._api = api

    def get_device_properties(self, device: DeviceArg = 0) -> dict[str, int]:
        self._api.used("triton driver")
        return self._api.gpu.triton_properties()

    def get_device_capability(self, device: DeviceArg = 0) -> tuple[int, int]:
        return self._api.gpu.capability

    def get_current_device(self) -> int:
        return self._api.index

    def __getattr__(self, name: str) -> _Missing:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Missing(f"triton.runtime.driver.active.utils.{name}")


class Driver:
    """triton.runtime.driver.active, for the stood-in GPU: the queries scripts make of it."""

    backend = "cuda"

    def __init__(self, api: CudaApi, bench: Callable[..., Any], target: Callable[[], Any]):
        self._api = api
        self._bench = bench
        self._target = target
        self.utils = DriverUtils(api)

    @staticmethod
    def is_active() -> bool:
        return True

    def get_active_torch_device(self) -> Any:  # a torch.device (torch imported when asked)
        import torch

        self._api.used("triton driver")
        return torch.device("cuda", self._api.index)

    def get_current_device(self) -> int:
        self._api.used("triton driver")
        return self._api.index

    def set_current_device(self, device: DeviceArg) -> None:
        self._api.index = int(device)

    def get_current_stream(self, device: DeviceArg = None) -> int:
        return 0

    def get_device_capability(self, device: DeviceArg = 0) -> tuple[int, int]:
        return self._api.gpu.capability

    def get_current_target(self) -> Any:  # triton's GPUTarget
        self._api.used("triton driver")
        return self._target()

    def get_device_interface(self) -> Any:  # the torch.cuda module
        import torch

        return torch.cuda

    def get_benchmarker(self) -> Callable[..., Any]:
        return self._bench

    def get_empty_cache_for_benchmark(self) -> Any:  # a torch.Tensor
        import torch

        return torch.empty(1024, dtype=torch.int, device="cuda")  # the flush buffer; the host has no L2 to flush

    def clear_cache(self, cache: Any) -> None:
        cache.zero_()

    def __getattr__(self, name: str) -> _Missing:
        if name.startswith("__"):
            raise AttributeError(name)
        return _Missing(f"triton.runtime.driver.active.{name}")


def interpreter_bench(timed: Callable[[str, int, float, str], None]) -> Callable[..., Any]:
    """triton.testing.do_bench on the stand-in: calls `fn` once (its launches are traced like any other)
    and returns that call's host time in ms, for every quantile asked. `timed` gets (file, line, ms, name)."""

    def do_bench(
        fn: Callable[[], object],
        warmup: int = 25,
        rep: int = 100,
        grad_to_none: Any = None,
        quantiles: list[float] | None = None,
        return_mode: str = "mean",
        **_: Any,
    ) -> float | list[float]:
        file, line = user_line()
        t0 = time.perf_counter()
        fn()
        ms = (time.perf_counter() - t0) * 1e3
        timed(file, line, ms, "triton.testing.do_bench")
        if quantiles:
            out = [ms] * len(quantiles)
            return out[0] if len(out) == 1 else out
        return ms

    return do_bench
