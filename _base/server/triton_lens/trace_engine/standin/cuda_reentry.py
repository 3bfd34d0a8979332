"""The CUDA stand-in where torch runs the script's Python itself, beneath a torch call.

The stand-in's TorchFunctionMode (cuda_tensors.py) is off while torch runs the call it intercepted,
and it is per thread. So Python that torch calls from inside a torch call would see plain CPU
tensors: an autograd.Function's backward (run by `loss.backward()`), the body of a
torch.library op (custom_op, triton_op, Library.impl), and a thread the script starts. Each of these
entry points is wrapped here to run with the mode in place again, and what torch made in C++ on the
way (the gradients reaching a backward, the saved outputs it unpacks) is marked as the CUDA tensor it
is on a GPU. An op implemented in Python for CUDA only runs that implementation for stand-in CUDA
tensors (they are CPU tensors, so the dispatcher would look for a CPU kernel).

`install(scope, mode)` patches the classes in the stand-in's `PatchScope`, undone when the stand-in ends.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, cast

import torch
from torch.overrides import TorchFunctionMode, _get_current_function_mode_stack

from ..interpreter.patches import PatchScope
from .cuda_tensors import any_marked, is_marked, mark

# On a custom Function's backward node whose forward had CUDA inputs: (which outputs were CUDA ones,
# the storages of its CUDA inputs and outputs).
_FLAG = "_tl_standin_cuda"
# torch leaves it unannotated: the modes pushed on this thread, innermost last.
_mode_stack = cast(Callable[[], list[TorchFunctionMode]], _get_current_function_mode_stack)
# within(fn, *args, **kwargs): fn's call with the stand-in's mode in place.
Within = Callable[..., Any]


def install(scope: PatchScope, mode: TorchFunctionMode) -> None:
    """The entry points wrapped until `scope` is left."""
    active = [True]

    def within(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """fn(*args, **kwargs) with the stand-in's mode in place (pushed again only where it is not).
        After the stand-in ended (the op kernels registered during it stay registered) just fn."""
        if not active[0] or mode in _mode_stack():
            return fn(*args, **kwargs)
        with mode:
            return fn(*args, **kwargs)

    def ended() -> None:
        active[0] = False

    _autograd_function(scope, within)
    _library(scope, within)
    _threads(scope, within)
    scope.defer(ended)  # last made, first undone: off before the classes are put back, as before


# -- torch.autograd.Function -----------------------------------------------------------------------
def _storage(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def _autograd_function(p: PatchScope, within: Within) -> None:
    from torch.autograd.function import BackwardCFunction, Function

    apply = Function.__dict__["apply"].__func__

    def forward_apply(cls: type, *args: Any, **kwargs: Any) -> Any:
        out = apply(cls, *args, **kwargs)
        inputs = [a for a in list(args) + list(kwargs.values()) if is_marked(a)]
        if not inputs:
            return out
        cuda = {_storage(t) for t in inputs}
        outs = out if isinstance(out, (tuple, list)) else (out,)
        for t in outs:
            # An input returned as is comes back as a new view made in C++: on the input's device.
            if isinstance(t, torch.Tensor) and not is_marked(t) and _storage(t) in cuda:
                mark(t)
        cuda |= {_storage(t) for t in outs if is_marked(t)}
        # On a GPU the backward of a Function run on CUDA tensors gets CUDA gradients for its CUDA
        # outputs and unpacks CUDA saved tensors: say which, on its node (the ctx backward gets).
        which = tuple(is_marked(t) for t in outs)
        for t in outs:
            if isinstance(t, torch.Tensor) and isinstance(t.grad_fn, BackwardCFunction):
                setattr(t.grad_fn, _FLAG, (which, cuda))
        return out

    p.set_attr(Function, "apply", classmethod(forward_apply))

    def wrap_backward(name: str) -> None:
        original = BackwardCFunction.__dict__.get(name)
        if original is None:  # apply_boxed: newer torch only
            return

        def backward_apply(self: Any, *args: Any) -> Any:
            flag = getattr(self, _FLAG, None)
            if flag is not None:
                # Gradients autograd made in C++, one per forward output: on that output's device.
                grads = args[0] if len(args) == 1 and isinstance(args[0], list) else args
                for g, cuda in zip(grads, flag[0]):
                    if cuda and isinstance(g, torch.Tensor):
                        mark(g)
            return within(original, self, *args)

        p.set_attr(BackwardCFunction, name, backward_apply)

    wrap_backward("apply")
    wrap_backward("apply_boxed")

    saved = torch._C._FunctionBase.__dict__["saved_tensors"]

    def saved_tensors(self: Any) -> Any:
        out = saved.__get__(self)
        flag = getattr(self, _FLAG, None)
        if flag is not None:
            # A saved output is unpacked as a new tensor (autograd keeps it without its grad_fn), on the
            # storage of a CUDA tensor of the forward.
            for t in out:
                if isinstance(t, torch.Tensor) and not is_marked(t) and _storage(t) in flag[1]:
                    mark(t)
        return out

    p.set_attr(BackwardCFunction, "saved_tensors", property(saved_tensors))


# -- torch.library ---------------------------------------------------------------------------------
_NO_MODE_KEYS = ("Meta",)  # fake / meta kernels compute shapes only


def _library(p: PatchScope, within: Within) -> None:
    Library = torch.library.Library
    impl = cast(Callable[..., Any], Library.impl)  # (torch leaves it unannotated)
    routers: dict[tuple[int, str], dict[str, Callable[..., Any]]] = {}  # (library, op) -> dispatch key -> kernel

    def library_impl(
        self: torch.library.Library, op_name: Any, fn: Any, dispatch_key: str = "", *args: Any, **kwargs: Any
    ) -> Any:
        key = dispatch_key or getattr(self, "dispatch_key", "")
        if key in _NO_MODE_KEYS or not callable(fn):
            return impl(self, op_name, fn, dispatch_key, *args, **kwargs)

        def kernel(*a: Any, **k: Any) -> Any:
            return within(fn, *a, **k)

        kernel.__name__ = getattr(fn, "__name__", "kernel")
        kernel.__qualname__ = getattr(fn, "__qualname__", kernel.__name__)
        if key not in ("CPU", "CUDA") or not isinstance(op_name, str) or kwargs.get("with_keyset"):
            return impl(self, op_name, kernel, dispatch_key, *args, **kwargs)
        # A CPU or CUDA kernel: stand-in CUDA tensors are CPU tensors, so the dispatcher calls the
        # CPU kernel for them. One router on CPU per op picks the CUDA kernel for them (what a GPU
        # runs: the Triton kernel), the CPU one for CPU tensors.
        table_key = (id(self), op_name)
        table = routers.get(table_key)
        first = table is None
        if table is None:
            table = routers[table_key] = {}
        table[key] = kernel
        if key == "CUDA":
            impl(self, op_name, kernel, dispatch_key, *args, **kwargs)
        if first:
            qualname = f"{self.ns}::{op_name.split('::')[-1]}"
            native = _native_cpu_kernel(qualname)  # before the router takes its place: what CPU tensors run
            if native is not None:
                table.setdefault("CPU", native)
            impl(self, op_name, _router(qualname, table), "CPU", *args, **kwargs)

    p.set_attr(Library, "impl", library_impl)


def _native_cpu_kernel(qualname: str) -> Callable[..., Any] | None:
    """The op's own CPU kernel (aten's, or one a library registered before), as a callable: a library
    that overrides a built-in op for CUDA only (FlagGems' `aten::copy_` under use_gems) leaves CPU tensors
    running it, on a GPU as here. None when it has none (an op of the library's own), or with a torch
    too old to say (torch.library.get_kernel)."""
    get_kernel = getattr(torch.library, "get_kernel", None)
    if get_kernel is None:
        return None
    try:
        kernel = get_kernel(qualname, "CPU")  # (also a composite kernel CPU tensors reach: aten::copy_'s)
    except Exception:  # noqa: BLE001 - "no kernel for CPU", or an op name torch does not know this way
        return None
    keys = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)

    def native(*args: Any, **kwargs: Any) -> Any:
        return kernel.call_boxed(keys, *args, **kwargs)

    return native


def _router(op: str, table: dict[str, Callable[..., Any]]) -> Callable[..., Any]:
    def route(*args: Any, **kwargs: Any) -> Any:
        cuda, cpu = table.get("CUDA"), table.get("CPU")
        if cuda is not None and (cpu is None or any_marked(args) or any_marked(kwargs.values())):
            if cpu is None and _has_tensor(args, kwargs) and not (any_marked(args) or any_marked(kwargs.values())):
                raise NotImplementedError(
                    f"{op} is implemented for CUDA only, and was called with CPU tensors: it fails the same "
                    'way on a GPU. Pass it CUDA tensors (device="cuda", or .cuda()).'
                )
            return cuda(*args, **kwargs)
        assert cpu is not None
        return cpu(*args, **kwargs)

    route.__name__ = f"standin_route_{op.replace('::', '_')}"
    return route


def _has_tensor(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    for v in list(args) + list(kwargs.values()):
        if isinstance(v, torch.Tensor) or (
            isinstance(v, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in v)
        ):
            return True
    return False


# -- threads ---------------------------------------------------------------------------------------
def _threads(p: PatchScope, within: Within) -> None:
    start = threading.Thread.start

    def thread_start(self: threading.Thread) -> None:
        # The mode is per thread: the thread's run (its target, or a subclass's run) gets it too.
        run = self.run
        vars(self)["run"] = lambda: within(run)  # this thread's own run, over the class's (as `self.run = ...`)
        return start(self)

    p.set_attr(threading.Thread, "start", thread_start)
