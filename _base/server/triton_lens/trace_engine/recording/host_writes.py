"""Which elements of the run's uninitialised memory have been written: by the host or by a kernel.

Only storages born from torch.empty and friends (empty_like, new_empty, empty_strided, ...) are
tracked; every other tensor was filled by the op that made it. Each tracked storage has one bool
per element of the dtype it was born with (a compact written-mask). A TorchDispatchMode sees every
torch operation of the script: an op whose schema says it writes an argument (fill_, zero_, copy_,
slice assignment, in-place ops, out=, random fills) marks that argument's elements (a view marks
only the elements it covers); kernel stores are marked by the recorder after each launch. Before
each launch the recorder asks which elements of each tensor argument are still unwritten.

Scratch buffers: a tracked storage that a launch took is watched from then on (`used`): the launches
that took it, and whether a host operation read any of its still unwritten elements after one of them
(`scratch_report`, sent at the end of the run). A launch that left part of a torch.empty buffer unwritten
is harmless when only later launches read the buffer, where it was written, and the host then drops it
(analysis/memory.py). A host read is any operand of an op that neither writes it nor returns a view of it;
an in-place op on the buffer (add_) counts as a write, not a read.

Not seen: writes through numpy views (t.numpy()[...] = ...), raw pointers and other processes. A
GPU script cannot write a CUDA tensor those ways, so they matter only for CPU-only scripts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypedDict

import numpy as np

try:
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
except ImportError:  # a worker without torch: nothing to track
    torch = None  # type: ignore[assignment]  # (the optional import's stand-in)
    TorchDispatchMode = object  # type: ignore[misc,assignment]  # (a plain base class without torch)

# Factories whose memory keeps whatever was there before.
_EMPTY = ("empty", "empty_like", "new_empty", "empty_strided", "new_empty_strided", "empty_permuted")
# In-place ops whose schema marks self as written but that change only metadata, not elements.
_METADATA_ONLY = (
    "resize_",
    "resize_as_",
    "set_",
    "as_strided_",
    "detach_",
    "squeeze_",
    "unsqueeze_",
    "transpose_",
    "t_",
    "swapdims_",
    "swapaxes_",
    "requires_grad_",
    "_coalesced_",
)

_OTHER, _BORN_EMPTY, _WRITES = 0, 1, 2
_MAX_SCRATCH, _MAX_USES = 4096, 64  # what the end-of-run report keeps

# What _classify makes of an op: (class, written (position, name) arguments, fresh result, view op).
_OpInfo = tuple[int, tuple[tuple[int, str], ...], bool, bool]


class ScratchUse(TypedDict):
    """One storage of the end-of-run report (scratch_report; analysis/memory.py reads it)."""

    uses: list[list[int]]  # [launch, tensor index] per use
    host_read_after: int | None  # uses before the host first read an unwritten element; None: never


def bool_to_runs(flags: np.ndarray) -> np.ndarray:
    """Flat [start0, len0, ...] int64 pairs of the true stretches of a 1-D bool array (no index array per element)."""
    if flags.size == 0:
        return np.empty(0, dtype=np.int64)
    padded = np.empty(flags.size + 2, dtype=np.int8)
    padded[0] = padded[-1] = 0
    padded[1:-1] = flags
    edges = np.flatnonzero(np.diff(padded))
    starts, ends = edges[0::2], edges[1::2]
    pairs = np.empty(2 * starts.size, dtype=np.int64)
    pairs[0::2] = starts
    pairs[1::2] = ends - starts
    return pairs


class _Scratch:
    """A tracked storage that launches took: [launch, tensor index] per use, and how many uses there were
    when the host first read an element of it that nothing had written (None: it never did)."""

    __slots__ = ("uses", "host_read_after")

    def __init__(self) -> None:
        self.uses: list[list[int]] = []
        self.host_read_after: int | None = None

    def to_json(self) -> ScratchUse:
        return {"uses": self.uses, "host_read_after": self.host_read_after}


class _Storage:
    __slots__ = ("nbytes", "granule", "written", "scratch")

    def __init__(self, nbytes: int, granule: int):
        self.nbytes = nbytes
        self.granule = max(1, granule)
        self.written = np.zeros(nbytes // self.granule, dtype=bool)
        self.scratch: _Scratch | None = None

    def refine(self) -> None:
        """Byte granularity, for a view whose elements do not line up with the dtype it was born with."""
        if self.granule > 1:
            self.written = np.repeat(self.written, self.granule)
            self.granule = 1


def _compiling() -> bool:
    is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None)
    return bool(is_compiling is not None and is_compiling())


class HostWrites(TorchDispatchMode):  # type: ignore[no-untyped-call]  # torch's __init_subclass__ is untyped
    """Install with `start()`, remove with `stop()`. The recorder pauses it during launches."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # torch wraps a mode's __torch_dispatch__ in torch._dynamo.disable unless this says False: that
        # import costs ~2 s at the script's first torch op, and the wrapper a call per op.
        return False

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # torch's TorchDispatchMode is untyped
        self._storages: dict[int, _Storage] = {}
        self._ops: dict[torch._ops.OpOverload, _OpInfo] = {}  # op overload -> what _classify made of it
        self.paused = 0
        self._watched: dict[int, _Storage] = {}  # storage pointer -> a storage launches took (host reads seen)
        self._scratch: list[_Scratch] = []  # every storage launches took, in the order first taken

    # -- lifetime ------------------------------------------------------------------------------
    @classmethod
    def start(cls) -> HostWrites | None:
        if torch is None:
            return None
        mode = cls()
        mode.__enter__()  # type: ignore[no-untyped-call]  # torch's TorchDispatchMode is untyped
        return mode

    def stop(self) -> None:
        self.__exit__(None, None, None)  # type: ignore[no-untyped-call]  # (as __enter__)

    # -- the dispatch hook -----------------------------------------------------------------------
    def __torch_dispatch__(
        self,
        func: torch._ops.OpOverload,
        types: Sequence[type],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> Any:  # any torch op's arguments and result: Any
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        # Under torch.compile, Dynamo traces this mode as if it were the script's code, and its schema
        # walk is nothing Dynamo can trace (cut-cross-entropy's fullgraph compile stopped here): while
        # compiling, the mode only passes the call on.
        if self.paused or _compiling():
            return out
        try:
            self._note(func, args, kwargs, out)
        except Exception:  # bookkeeping must never fail the script's own torch call
            pass
        return out

    def _note(self, func: torch._ops.OpOverload, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> None:
        info = self._ops.get(func)
        if info is None:
            info = self._ops[func] = self._classify(func)
        cls, written, fresh, view = info
        if self._watched and not view and cls != _BORN_EMPTY:
            self._note_reads(written, args, kwargs)
        if cls == _BORN_EMPTY:
            if isinstance(out, torch.Tensor) and out.device.type == "cpu":
                st = out.untyped_storage()
                if st.nbytes():
                    self._storages[st.data_ptr()] = _Storage(st.nbytes(), out.element_size())
            return
        if not self._storages:
            return
        if fresh:
            # A freshly allocated result is fully written; its memory may reuse a freed tracked storage.
            for t in out if isinstance(out, (tuple, list)) else (out,):
                if isinstance(t, torch.Tensor):
                    ptr = _storage_ptr(t)
                    self._storages.pop(ptr, None)
                    self._watched.pop(ptr, None)
        if cls == _WRITES:
            for pos, name in written:
                v = kwargs.get(name) if name in kwargs else (args[pos] if pos < len(args) else None)
                for t in v if isinstance(v, (tuple, list)) else (v,):
                    if isinstance(t, torch.Tensor):
                        self.mark_all(t)

    @staticmethod
    def _classify(func: torch._ops.OpOverload) -> _OpInfo:
        name = func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else ""
        schema = func._schema
        fresh = any(isinstance(r.type, torch.TensorType) and r.alias_info is None for r in schema.returns)
        # A view op (view, slice, t, as_strided, ...) returns an alias of its operand and reads no element.
        view = any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)
        if name in _EMPTY and not any(a.alias_info is not None for a in schema.arguments):
            return _BORN_EMPTY, (), False, False
        if name in _METADATA_ONLY:
            return _OTHER, (), fresh, True
        written = tuple(
            (i, a.name) for i, a in enumerate(schema.arguments) if a.alias_info is not None and a.alias_info.is_write
        )
        return (_WRITES if written else _OTHER), written, fresh, view

    # -- scratch buffers -------------------------------------------------------------------------
    def used(self, t: torch.Tensor, launch: int, tensor: int) -> None:
        """Launch `launch` took t as its tensor argument `tensor`: watch t's storage for host reads."""
        ptr = _storage_ptr(t)
        st = self._storages.get(ptr)
        if st is None:
            return
        if st.scratch is None:
            if len(self._scratch) >= _MAX_SCRATCH:  # a script that allocates in a loop: keep the first ones
                return
            st.scratch = _Scratch()
            self._scratch.append(st.scratch)
        if len(st.scratch.uses) < _MAX_USES:
            st.scratch.uses.append([launch, tensor])
        if st.scratch.host_read_after is None:
            self._watched[ptr] = st

    def _note_reads(self, written: tuple[tuple[int, str], ...], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        skip = {pos for pos, _ in written}, {name for _, name in written}
        operands = [v for i, v in enumerate(args) if i not in skip[0]]
        operands += [v for k, v in kwargs.items() if k not in skip[1]]
        for v in operands:
            for t in v if isinstance(v, (tuple, list)) else (v,):
                if not isinstance(t, torch.Tensor):
                    continue
                ptr = _storage_ptr(t)
                st = self._watched.get(ptr)
                if st is None or st.scratch is None:
                    continue
                m = self._view(t)
                if m is None:
                    continue
                if m.all():
                    if st.written.all():  # nothing left unwritten to read: stop watching it
                        del self._watched[ptr]
                    continue
                st.scratch.host_read_after = len(st.scratch.uses)
                del self._watched[ptr]

    def scratch_report(self) -> list[ScratchUse]:
        """Per storage that launches took: its uses and when the host first read an unwritten element."""
        return [s.to_json() for s in self._scratch]

    # -- element masks ---------------------------------------------------------------------------
    def _view(self, t: torch.Tensor) -> np.ndarray | None:
        """A writable strided view of the storage's written-mask, shaped t.shape + (granules per element,)."""
        try:
            st = self._storages.get(_storage_ptr(t))
        except Exception:
            return None
        if st is None:
            return None
        isz = t.element_size()
        off = t.storage_offset() * isz
        strides = [s * isz for s in t.stride()]
        if isz % st.granule or off % st.granule or any(s % st.granule for s in strides):
            st.refine()
        g = st.granule
        end = off + sum((n - 1) * s for n, s in zip(t.shape, strides)) + isz if t.numel() else off
        if end > st.nbytes or off < 0:
            return None
        base = st.written[off // g :]
        return np.lib.stride_tricks.as_strided(
            base, shape=tuple(t.shape) + (isz // g,), strides=tuple(s // g for s in strides) + (1,)
        )

    def mark_all(self, t: torch.Tensor) -> None:
        st = self._storages.get(_storage_ptr(t))
        if st is None:
            return
        isz = t.element_size()
        if t.is_contiguous() and isz == st.granule:  # the common case: one slice, no strided view
            lo = t.storage_offset()
            st.written[lo : lo + t.numel()] = True
            return
        v = self._view(t)
        if v is not None:
            v[...] = True

    def mark(self, t: torch.Tensor, flat: np.ndarray) -> None:
        """Mark the elements of t whose flat row-major index is true in `flat` (what a kernel stored)."""
        v = self._view(t)
        if v is not None and flat.size == t.numel():
            v[flat.reshape(tuple(t.shape))] = True

    def unwritten_runs(self, t: torch.Tensor) -> np.ndarray | None:
        """[start, len, ...] runs of t's flat row-major elements nothing has written yet; None when none."""
        v = self._view(t)
        if v is None or t.numel() == 0:
            return None
        missing = ~v.all(axis=-1).reshape(-1)
        if not missing.any():
            return None
        return bool_to_runs(missing)


def _storage_ptr(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def _register_triton_kernel_rule() -> None:
    """torch's wrapper of a Triton launch (`torch.library.wrap_triton`, `triton_op` bodies: the
    triton_kernel_wrapper_mutation operator) asks each dispatch mode for a rule; under HostWrites it runs
    the launch itself, as with no mode (the recorder marks the kernel's stores). Without one torch stops
    with "There was no rule registered for HigherOrderOperator triton_kernel_wrapper_mutation"."""
    try:
        from torch._higher_order_ops import triton_kernel_wrap as wrap
    except ImportError:  # a torch without it: nothing asks
        return
    hop = getattr(wrap, "triton_kernel_wrapper_mutation", None)
    dense = getattr(wrap, "triton_kernel_wrapper_mutation_dense", None)
    if hop is None or dense is None or HostWrites in getattr(hop, "python_key_table", {}):
        return

    def rule(mode: HostWrites, *args: Any, **kwargs: Any) -> Any:  # the wrapped launch's arguments: Any
        return dense(*args, **kwargs)

    hop.py_impl(HostWrites)(rule)


if torch is not None:
    try:
        _register_triton_kernel_rule()
    except Exception:  # noqa: BLE001 - a torch whose operator API differs: launches still run without it
        pass
