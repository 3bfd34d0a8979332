"""Which elements of the run's uninitialised memory have been written: by the host or by a kernel.

Only storages born from torch.empty and friends (empty_like, new_empty, empty_strided, ...) are
tracked; every other tensor was filled by the op that made it. Each tracked storage has one bool
per element of the dtype it was born with (a compact written-mask). A TorchDispatchMode sees every
torch operation of the script: an op whose schema says it writes an argument (fill_, zero_, copy_,
slice assignment, in-place ops, out=, random fills) marks that argument's elements (a view marks
only the elements it covers); kernel stores are marked by the recorder after each launch. Before
each launch the recorder asks which elements of each tensor argument are still unwritten.

Not seen: writes through numpy views (t.numpy()[...] = ...), raw pointers and other processes. A
GPU script cannot write a CUDA tensor those ways, so they matter only for CPU-only scripts.
"""

from __future__ import annotations

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


class _Storage:
    __slots__ = ("nbytes", "granule", "written")

    def __init__(self, nbytes: int, granule: int):
        self.nbytes = nbytes
        self.granule = max(1, granule)
        self.written = np.zeros(nbytes // self.granule, dtype=bool)

    def refine(self) -> None:
        """Byte granularity, for a view whose elements do not line up with the dtype it was born with."""
        if self.granule > 1:
            self.written = np.repeat(self.written, self.granule)
            self.granule = 1


class HostWrites(TorchDispatchMode):
    """Install with `start()`, remove with `stop()`. The recorder pauses it during launches."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # torch wraps a mode's __torch_dispatch__ in torch._dynamo.disable unless this says False: that
        # import costs ~2 s at the script's first torch op, and the wrapper a call per op.
        return False

    def __init__(self):
        super().__init__()
        self._storages: dict[int, _Storage] = {}
        self._ops: dict = {}  # op overload -> (class, written argument names)
        self.paused = 0

    # -- lifetime ------------------------------------------------------------------------------
    @classmethod
    def start(cls) -> HostWrites | None:
        if torch is None:
            return None
        mode = cls()
        mode.__enter__()
        return mode

    def stop(self) -> None:
        self.__exit__(None, None, None)

    # -- the dispatch hook -----------------------------------------------------------------------
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if self.paused:
            return out
        try:
            self._note(func, args, kwargs, out)
        except Exception:  # bookkeeping must never fail the script's own torch call
            pass
        return out

    def _note(self, func, args, kwargs, out) -> None:
        info = self._ops.get(func)
        if info is None:
            info = self._ops[func] = self._classify(func)
        cls, written, fresh = info
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
                    self._storages.pop(_storage_ptr(t), None)
        if cls == _WRITES:
            for pos, name in written:
                v = kwargs.get(name) if name in kwargs else (args[pos] if pos < len(args) else None)
                for t in v if isinstance(v, (tuple, list)) else (v,):
                    if isinstance(t, torch.Tensor):
                        self.mark_all(t)

    @staticmethod
    def _classify(func):
        name = func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else ""
        schema = func._schema
        fresh = any(isinstance(r.type, torch.TensorType) and r.alias_info is None for r in schema.returns)
        if name in _EMPTY and not any(a.alias_info is not None for a in schema.arguments):
            return _BORN_EMPTY, (), False
        if name in _METADATA_ONLY:
            return _OTHER, (), fresh
        written = tuple(
            (i, a.name) for i, a in enumerate(schema.arguments) if a.alias_info is not None and a.alias_info.is_write
        )
        return (_WRITES if written else _OTHER), written, fresh

    # -- element masks ---------------------------------------------------------------------------
    def _view(self, t) -> np.ndarray | None:
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

    def mark_all(self, t) -> None:
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

    def mark(self, t, flat: np.ndarray) -> None:
        """Mark the elements of t whose flat row-major index is true in `flat` (what a kernel stored)."""
        v = self._view(t)
        if v is not None and flat.size == t.numel():
            v[flat.reshape(tuple(t.shape))] = True

    def unwritten_runs(self, t) -> np.ndarray | None:
        """[start, len, ...] runs of t's flat row-major elements nothing has written yet; None when none."""
        v = self._view(t)
        if v is None or t.numel() == 0:
            return None
        missing = ~v.all(axis=-1).reshape(-1)
        if not missing.any():
            return None
        return bool_to_runs(missing)


def _storage_ptr(t) -> int:
    return t.untyped_storage().data_ptr()
