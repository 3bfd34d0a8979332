"""The size check's results kept across runs (across edits, in the language server).

The size check of a launch (size_probe.SizeCheck.check) re-launches its kernel at other sizes; its result
is a function of what it reads: the kernel's code and that of every @jit helper and global it names,
the launch's arguments (tensor shapes, strides, dtypes; integers; constexpr values), the grid and how it
follows a size (its function's or expression's code and the values it names), the @triton.heuristics
functions, the accesses already out of bounds in the script's run, the triton release, the target GPU's
memory and the check's own budget. `launch_key` digests all of that (absolute source positions
included: a finding names its lines); a value it cannot digest reliably (an object of a user class, a
value with no stable description) makes the launch uncacheable, so it is checked as before.

Two halves, in two processes:
- the worker (forked fresh for each run) gets the entries of its document in its job, answers a launch
  whose key is there from them, and sends each fresh result back in its `sizes` frame;
- `SizeCache`, in the runner's process (the language server, which lives across edits), keeps them:
  an LRU bounded in entries and bytes, partitioned by the document that produced them.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import types
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...model import LaunchTrace
    from .size_probe import LaunchArgs, OobSite, SitePos

# Bumped when what the check computes, or how it is keyed, changes (stale entries then never match).
FORMAT = 2  # 2: sizes bounded by CUDA's grid limits (size_model.GRID_LIMITS)

# Modules whose objects are named, not digested: their behaviour is the release's (in the key) or ours.
_LIBRARIES = {
    "triton",
    "torch",
    "numpy",
    "math",
    "builtins",
    "operator",
    "functools",
    "itertools",
    "typing",
    "collections",
    "triton_lens",
    "_operator",
    "_functools",
}
_MAX_ITEMS = 64  # a container longer than this is not digested (the launch is then not cached)
_MAX_DEPTH = 12


class Unkeyable(Exception):
    """A value the key cannot describe reliably: the launch is checked, not looked up."""


def _library(mod: str | None) -> bool:
    return mod is not None and mod.split(".")[0] in _LIBRARIES


class _Digest:
    def __init__(self) -> None:
        self.h = hashlib.sha256()
        self._active: set[int] = set()  # functions being digested (recursion: a helper calling itself)

    def add(self, *parts: Any) -> None:
        for p in parts:
            self.h.update(repr(p).encode())
            self.h.update(b"\x00")

    def value(self, v: Any, depth: int = 0, names: frozenset[str] = frozenset()) -> None:
        """Digest a value the check may read. `names`: the names the code that reached it uses (the
        attributes of a user module it may take)."""
        if depth > _MAX_DEPTH:
            raise Unkeyable("too deep")
        if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
            self.add(type(v).__name__, v)
            return
        if isinstance(v, (tuple, list, set, frozenset)):
            items = list(v)
            if len(items) > _MAX_ITEMS:
                raise Unkeyable("a long container")
            if isinstance(v, (set, frozenset)):
                items = sorted(items, key=repr)
            self.add(type(v).__name__, len(items))
            for x in items:
                self.value(x, depth + 1, names)
            return
        if isinstance(v, dict):
            if len(v) > _MAX_ITEMS:
                raise Unkeyable("a long dict")
            self.add("dict", len(v))
            for k in sorted(v, key=repr):
                self.value(k, depth + 1, names)
                self.value(v[k], depth + 1, names)
            return
        if isinstance(v, types.ModuleType):
            self.add("module", v.__name__)
            if not _library(v.__name__):  # a user module: the attributes the code may take from it
                for n in sorted(names):
                    if n in vars(v):
                        self.add("attr", n)
                        self.value(vars(v)[n], depth + 1, names)
            return
        tname = type(v).__module__ + "." + type(v).__qualname__
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(v, torch.Tensor):
            self.add("tensor", tuple(v.shape), tuple(v.stride()), str(v.dtype), v.device.type, v.storage_offset())
            return
        if tname in ("torch.dtype", "torch.device", "torch.Size"):
            self.add(tname, str(v))
            return
        if type(v).__name__ == "constexpr" and _library(type(v).__module__):
            self.add("constexpr")
            self.value(getattr(v, "value", None), depth + 1, names)
            return
        fn = getattr(v, "fn", None)
        if _library(type(v).__module__) and callable(fn) and not isinstance(v, type):
            # a @jit function (JITFunction, InterpretedFunction), an Autotuner or Heuristics over one
            self.add("jit", type(v).__qualname__)
            self.value(fn, depth + 1, names)
            return
        if isinstance(v, (types.FunctionType, types.MethodType)):
            # typeshed types MethodType.__func__ as any callable; a bound method of Python code holds a function
            self.function(v.__func__ if isinstance(v, types.MethodType) else v, depth)  # type: ignore[arg-type]
            return
        if (
            isinstance(v, type)
            or type(v).__name__ == "ufunc"
            or (
                isinstance(v, types.BuiltinFunctionType)
                and (v.__self__ is None or isinstance(v.__self__, types.ModuleType))
            )
        ):
            mod = getattr(v, "__module__", None) or "builtins"
            if not _library(mod):
                raise Unkeyable(f"a user class or callable: {getattr(v, '__qualname__', tname)}")
            self.add("lib", mod, getattr(v, "__qualname__", getattr(v, "__name__", "")))
            return
        if _library(type(v).__module__) and type(v).__name__ in ("dtype", "pointer_type", "block_type"):
            self.add("tl-type", str(v))  # triton.language dtypes
            return
        np = sys.modules.get("numpy")
        if np is not None and isinstance(v, np.ndarray):
            self.add("ndarray", v.shape, str(v.dtype))
            return
        if type(v).__module__.split(".")[0] in ("triton", "triton_lens"):  # the interpreter's own (its semantic)
            self.add("lib object", tname)
            return
        raise Unkeyable(f"a value of type {tname}")

    def function(self, f: types.FunctionType, depth: int) -> None:
        mod = getattr(f, "__module__", None)
        if _library(mod):
            self.add("lib", mod, f.__qualname__)
            return
        if id(f) in self._active:
            self.add("recursive", f.__qualname__)
            return
        self._active.add(id(f))
        try:
            names: set[str] = set()
            self.code(f.__code__, names)
            self.add("defaults")
            self.value(f.__defaults__, depth + 1)
            self.value(f.__kwdefaults__, depth + 1)
            for c in f.__closure__ or ():
                try:
                    self.value(c.cell_contents, depth + 1, frozenset(names))
                except ValueError:  # an empty cell
                    self.add("empty cell")
            g = f.__globals__
            for n in sorted(names):  # the globals the code names (attribute names too: a superset)
                if n in g:
                    self.add("global", n)
                    self.value(g[n], depth + 1, frozenset(names))
        finally:
            self._active.discard(id(f))

    def code(self, c: types.CodeType, names: set[str]) -> None:
        self.add(
            "code",
            c.co_filename,
            c.co_firstlineno,
            c.co_code,
            c.co_names,
            c.co_varnames,
            c.co_freevars,
            c.co_cellvars,
            c.co_argcount,
            c.co_kwonlyargcount,
            getattr(c, "co_linetable", None) or getattr(c, "co_lnotab", b""),  # lines and columns
            getattr(c, "co_exceptiontable", b""),
        )
        names.update(c.co_names)
        for k in c.co_consts:
            if isinstance(k, types.CodeType):
                self.code(k, names)
            else:
                self.value(k, 1)


def launch_key(
    la: LaunchArgs,
    trace: LaunchTrace,
    already: dict[SitePos, OobSite],
    gpu: str,
    memory_bytes: int,
    budget: tuple[int, float, str | None],
    stated: tuple[str, ...] = (),
) -> str | None:
    """The key of one launch's size check (None: not cacheable). `la`: size_probe.LaunchArgs; `stated`: the
    kernel's `# triton-lens: sizes` conditions (and what of them could not be read), which may sit above the
    kernel, outside its code."""
    from ..interpreter import compat

    d = _Digest()
    try:
        d.add("format", FORMAT, "triton", compat.TRITON_VERSION, "gpu", gpu, memory_bytes, "budget", budget)
        d.add("stated", stated)
        d.add("kernel", trace.kernel, trace.def_file, trace.def_line, tuple(trace.grid))
        d.value(la.executor.fn)  # its code, its @jit helpers and the globals it names, with their positions
        d.add("params", tuple(la.names), tuple(sorted(la.constexprs)))
        d.add("args")
        for a in la.args:
            d.value(a)
        d.add("kwargs")
        d.value(dict(la.kwargs))
        d.add("grid", la.grid)
        _grid(d, la)
        d.add("heuristics")
        for name, fn in la.heuristics:
            d.add(name)
            d.value(fn)
        d.add("already", tuple(sorted(already)))
    except Unkeyable:
        return None
    except Exception:  # a value that breaks while being read: not cacheable, never the run's failure
        return None
    return d.h.hexdigest()


def _grid(d: _Digest, la: LaunchArgs) -> None:
    """How the grid follows a size: a grid function (its code, closure and globals), or the launch
    statement's grid expression (its text and the values of the names it reads)."""
    g = la.executor.grid
    if la.grid_at is None:
        d.add("grid held")
        return
    if callable(g):
        import inspect

        d.add("grid function")
        d.value(inspect.unwrap(g))
        return
    expr = getattr(la.grid_at, "expression", None)
    if expr is None:
        raise Unkeyable("a grid whose expression is not known")
    text, scope = expr
    d.add("grid expression", text)
    d.value(scope)


class SizeCache:
    """Size-check results across runs: an LRU of at most `max_entries` entries and `max_bytes` bytes
    (their JSON), partitioned by the document that produced them. Thread-safe (the language server's
    runs finish on several threads)."""

    def __init__(self, max_entries: int = 256, max_bytes: int = 4 << 20, per_job: int = 64):
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self.per_job = per_job  # the most entries one job carries (its document's most recent)
        self._d: OrderedDict[tuple[str, str], tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = 0  # launches a worker answered from an entry
        self.misses = 0  # launches it checked (and sent an entry for)

    def __len__(self) -> int:
        return len(self._d)

    @property
    def bytes(self) -> int:
        return self._bytes

    def for_job(self, scope: str) -> dict[str, Any]:
        """The entries a run of `scope` may use, most recent last."""
        with self._lock:
            mine = [(k[1], v[0]) for k, v in self._d.items() if k[0] == scope]
        return dict(mine[-self.per_job :])

    def put(self, scope: str, key: str, value: Any) -> None:
        size = len(json.dumps(value, separators=(",", ":")))
        with self._lock:
            self.misses += 1
            if size > self.max_bytes:
                return
            old = self._d.pop((scope, key), None)
            if old is not None:
                self._bytes -= old[1]
            self._d[(scope, key)] = (value, size)
            self._bytes += size
            while len(self._d) > self.max_entries or self._bytes > self.max_bytes:
                _, (_, n) = self._d.popitem(last=False)
                self._bytes -= n

    def hit(self, scope: str, key: str) -> None:
        with self._lock:
            self.hits += 1
            if (scope, key) in self._d:
                self._d.move_to_end((scope, key))

    def clear(self) -> None:
        with self._lock:
            self._d.clear()
            self._bytes = 0
