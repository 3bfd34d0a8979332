"""CUDA tensors stood in by CPU tensors, with torch's own hook for it (a TorchFunctionMode).

A tensor asked for on a CUDA device (`device="cuda"`, `.cuda()`, `.to("cuda")`, a factory under
`torch.set_default_device("cuda")`) is made on the CPU and marked; so is every new tensor an op
makes from a marked one. A marked tensor answers `is_cuda`, `device`, `get_device()` as a CUDA
tensor would, and leaves the stand-in by a copy, as it would leave a GPU (`.cpu()`, `.to("cpu")`).
The values are the CPU tensors' own: what the script computes is what it computes on CPU tensors.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

_MARK = "_tl_standin_cuda"
_Base = torch._C.TensorBase
_GETTERS = {name: _Base.__dict__[name] for name in ("is_cuda", "is_cpu", "device", "grad") if name in _Base.__dict__}
_DATA = _Base.__dict__.get("data")
_GetSet = type(_Base.__dict__["is_cuda"])
_MethodWrapper = type(_Base.__dict__["is_cuda"].__get__)
# The Tensor methods that move between devices or name one (answered in CudaTensors._method).
_METHODS = frozenset(
    _Base.__dict__[n] for n in ("to", "cuda", "cpu", "pin_memory", "get_device", "type") if n in _Base.__dict__
)


_CONSTRUCTORS: frozenset[Callable[..., Any]] | None = None


def _constructors() -> frozenset[Callable[..., Any]]:
    """The factories that take a default device (torch's own list, as its DeviceContext uses it)."""
    global _CONSTRUCTORS
    if _CONSTRUCTORS is None:
        try:
            from torch.utils._device import _device_constructors

            _CONSTRUCTORS = frozenset(_device_constructors())
        except ImportError:  # pragma: no cover - a torch without it
            _CONSTRUCTORS = frozenset()
    return _CONSTRUCTORS


def _default_is_cuda() -> bool:
    """torch.set_default_device("cuda") is in force (torch.get_default_device() makes a tensor to say)."""
    from torch.utils import _device

    d = getattr(_device, "CURRENT_DEVICE", None)
    return d is not None and torch.device(d).type == "cuda"


def is_marked(t: Any) -> bool:
    return isinstance(t, torch.Tensor) and t.__dict__.get(_MARK, False)


def mark(t: torch.Tensor) -> torch.Tensor:
    t.__dict__[_MARK] = True
    return t


def _unmark(t: torch.Tensor) -> torch.Tensor:
    t.__dict__.pop(_MARK, None)
    return t


def _cuda_device(d: Any) -> bool | None:
    """True for a CUDA device (a str, torch.device or index), False for another device, None for no device."""
    if d is None:
        return None
    if isinstance(d, torch.device):
        return d.type == "cuda"
    if isinstance(d, bool):
        return None
    if isinstance(d, int):
        return True  # torch reads a bare index as cuda:index
    if isinstance(d, str):
        try:
            return torch.device(d).type == "cuda"
        except RuntimeError:
            return None
    return None


def any_marked(values: Iterable[Any]) -> bool:
    """Whether a marked tensor is among `values` (or one level inside a list or tuple among them)."""
    Tensor = torch.Tensor
    for a in values:
        if isinstance(a, Tensor):
            if a.__dict__.get(_MARK, False):
                return True
        elif isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, Tensor) and x.__dict__.get(_MARK, False):
                    return True
    return False


def _mark_new(out: Any, inputs: list[Any]) -> None:
    """Mark the tensors in `out` that are new objects (an in-place op or `out=` returns its own input,
    which keeps the device it had)."""
    ids = {id(x) for x in inputs if isinstance(x, torch.Tensor)}
    if isinstance(out, torch.Tensor):
        if id(out) not in ids:
            mark(out)
    elif isinstance(out, (list, tuple)):
        for t in out:
            if isinstance(t, torch.Tensor) and id(t) not in ids:
                mark(t)


def _flat_inputs(args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
    out = list(args) + list(kwargs.values())
    for a in list(out):
        if isinstance(a, (list, tuple)):
            out.extend(a)
    return out


class CudaTensors(TorchFunctionMode):
    """While pushed (torch.overrides' mode stack, this thread): CUDA tensors are CPU tensors, marked."""

    def __init__(self, index: Callable[[], int], used: Callable[[str], None]):
        super().__init__()
        self.index = index  # the current device index (torch.cuda.set_device)
        self.used = used  # called with what the script asked CUDA for

    def _device(self) -> torch.device:
        return torch.device("cuda", self.index())

    def __torch_function__(
        self,
        func: Callable[..., Any],
        types: Collection[type],
        args: Sequence[Any] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:
        # Every torch call of the script passes here: the common case (no device, no marked input)
        # is one pass over the arguments (bench/cuda_standin_overhead.py).
        kwargs = kwargs or {}
        if type(func) is _MethodWrapper:
            owner = getattr(func, "__self__", None)  # (a method-wrapper: the descriptor it is bound to)
            if type(owner) is _GetSet:
                return self._getter(owner, func, args, kwargs)
        elif func in _METHODS and args and isinstance(args[0], torch.Tensor):
            handled = self._method(func.__name__, func, args, kwargs)
            if handled is not NotImplemented:
                return handled
        if kwargs.get("pin_memory"):
            kwargs = dict(kwargs, pin_memory=False)  # pinned host memory is host memory (a CPU build has none)
        want = _cuda_device(kwargs["device"]) if "device" in kwargs else None
        if want is None and func in _constructors() and _default_is_cuda():
            want = True  # torch.set_default_device("cuda") / `with torch.device("cuda")`: its mode sits below ours
        if want:
            kwargs = dict(kwargs, device="cpu")
            self.used("cuda tensors")
        out = func(*args, **kwargs)
        if want or (want is None and (any_marked(args) or (kwargs and any_marked(kwargs.values())))):
            _mark_new(out, _flat_inputs(args, kwargs))
        return out

    def _getter(self, descriptor: Any, func: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        t = args[0] if args else None
        if getattr(func, "__name__", "") == "__set__":
            out = func(*args, **kwargs)
            if descriptor is _DATA and len(args) > 1:  # param.data = moved (nn.Module.cuda / .to / .cpu)
                mark(args[0]) if is_marked(args[1]) else _unmark(args[0])
            return out
        if descriptor is _GETTERS.get("is_cuda"):
            return True if is_marked(t) else func(*args, **kwargs)
        if descriptor is _GETTERS.get("is_cpu"):
            return False if is_marked(t) else func(*args, **kwargs)
        if descriptor is _GETTERS.get("device"):
            return self._device() if is_marked(t) else func(*args, **kwargs)
        out = func(*args, **kwargs)
        if descriptor is _GETTERS.get("grad") and is_marked(t) and isinstance(out, torch.Tensor) and not is_marked(out):
            mark(out)  # x.grad: accumulated by autograd in C++, on x's device
            return out
        if descriptor is _DATA and is_marked(t) and isinstance(out, torch.Tensor) and out is not t:
            mark(out)  # x.data
        return out

    def _method(self, name: str, func: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        t = args[0]
        if name == "get_device":
            return self.index() if is_marked(t) else func(*args, **kwargs)
        if name == "type" and len(args) == 1 and not kwargs and is_marked(t):
            return func(t).replace("torch.", "torch.cuda.", 1)  # "torch.cuda.FloatTensor"
        if name == "cuda":
            self.used("cuda tensors")
            return t if is_marked(t) else mark(t.clone())  # a copy, as onto a GPU
        if name == "cpu":
            return _unmark(t.clone()) if is_marked(t) else func(*args, **kwargs)
        if name == "pin_memory":
            return t.clone()  # pinned host memory is host memory
        if name == "to":
            return self._to(func, args, kwargs)
        return NotImplemented

    def _to(self, func: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        t, rest = args[0], list(args[1:])
        target: bool | None = None
        if "device" in kwargs:
            target = _cuda_device(kwargs["device"])
            if target:
                kwargs = dict(kwargs, device="cpu")
        elif rest and not isinstance(rest[0], (torch.dtype, torch.Tensor)):
            target = _cuda_device(rest[0])
            if target:
                rest[0] = "cpu"
        elif rest and isinstance(rest[0], torch.Tensor):
            target = is_marked(rest[0])  # x.to(other): onto other's device
        if target:
            self.used("cuda tensors")
        out = func(t, *rest, **kwargs)
        if target is None:  # a dtype change only: the result stays where the tensor was
            if out is not t and is_marked(t):
                mark(out)
            return out
        src = is_marked(t)
        if out is t and bool(target) != src:
            out = t.clone()  # moving between devices copies
        if out is not t:
            mark(out) if target else _unmark(out)
        return out


def generator_class(used: Callable[[str], None]) -> type[torch._C.Generator]:
    """torch.Generator, taking device="cuda" as a CPU generator (random tensors on the stand-in are
    drawn on the CPU anyway)."""

    base: Any = torch._C.Generator  # a class known only at run time

    class Meta(type(base)):  # type: ignore[misc]  # (the metaclass of a class known only at run time)
        # Generators torch made itself (torch.default_generator) are still torch.Generator instances.
        def __instancecheck__(cls, obj: object) -> bool:
            return isinstance(obj, base)

        def __subclasscheck__(cls, sub: type) -> bool:
            return issubclass(sub, base)

    class Generator(torch._C.Generator, metaclass=Meta):
        def __new__(cls, device: Any = "cpu") -> Generator:
            if _cuda_device(device):
                used("cuda tensors")
                device = "cpu"
            # (torch's stubs give the C class no __new__ of its own: called through the runtime class)
            made: Generator = base.__new__(cls, device)
            return made

    Generator.__module__ = "torch"
    return Generator
