"""A launch's programs across several processes: the engine's own grid loop, split over forked children.

The interpreter's grid loop calls `set_grid_idx`, then `executor.fn(**args)`, once per program,
looking the attribute up each time. The loop itself is untouched: a set_grid_idx hook (`_Dispatch.
before_program`) decides, and `executor.fn` is swapped where a process must skip programs.

- The parent runs the first programs itself (the probe) and times them, with the kernel's own
  function in place (an exception's traceback is the one-process run's). A launch of fewer than
  `min_programs` programs goes on in one process, and so does one whose rest would not give two
  children `min_seconds` of work each.
- Otherwise it forks one child per contiguous chunk of the remaining programs (in the interpreter's
  order: x outermost, z innermost). A fork has the launch's host tensors, the recorder's state and the
  rewritten kernel already; its `executor.fn` (`child_call`) skips the programs before its chunk, runs its own,
  and after the last one sends what it recorded and the bytes its programs stored, then exits
  (it never reaches the interpreter's copy back to the device: a CUDA tensor is only ever host memory
  to it).
- The parent merges the children's executions in program order (site indices remapped by site key:
  the order of first appearance is the one-process order), writes their stores in program order, and
  skips the remaining programs in its own loop (`executor.fn` is `_skip`). Memory and every recorded array are then exactly
  those of a one-process run, as long as no program reads what another program of the launch writes
  (a race the analysis reports).
- What cannot run split runs in one process: kernels using atomics (found in the kernel's code and its
  @jit helpers, or when a child meets its first atomic), and any launch where a child raised, crashed
  or was killed. Memory is untouched until the logs are applied, so the parent just runs the rest of
  the launch itself: the exception (or crash) is then the one-process run's, at the same program.

Children are forked per launch, one after another from the parent (a fork, exit and wait of a worker
with torch loaded cost 12.6 ms on an idle 2-core VM; bench/parallel.py prints the time to fork all of a
launch's children). Forked workers are not reused across launches: a fork is what gives a child the
launch's tensors and the script's whole state without copying or pickling anything. They stay in the worker's process group, so the runner's time and memory limits
reach them.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import posix
import resource
import select
import signal
import sys
import time
import types
from typing import Any, BinaryIO

import numpy as np

from ...model import DotSite, Site
from ...model.elements import ElementSetsBuilder
from ..interpreter import compat
from . import stream
from .recorder import Recorder

# Launches smaller than this stay in one process. Each child gets at least MIN_SECONDS of work (as the
# probe estimates it; a fork costs a few ms), so a launch whose rest is under 2 * MIN_SECONDS (50 ms)
# stays in one process too.
MIN_PROGRAMS = 64
MIN_SECONDS = 0.025
# The parent runs programs itself for at least this long before it estimates the launch's time.
PROBE_SECONDS = 0.01
# What one fork is taken to cost before a recorder has timed one (it then uses its last launch's mean).
FORK_SECONDS = 0.005


def chunk_bounds(lo: int, n: int, k: int, per_program: float, fork_s: float) -> int:
    """The end of the next child's chunk of programs [lo, end), for the k children still to fork.

    Children start one fork apart, so equal chunks would leave the first child idle while the last
    finishes. Each child gets the programs that make all k end together: with children starting at
    0, f, ..., (k - 1) f and ending at T, k T - f k (k - 1) / 2 = (n - lo) * per_program, so the next
    child gets T / per_program programs (at least one, leaving one for each other child)."""
    rest = n - lo
    if k <= 1:
        return n
    share = rest / k
    if per_program > 0:
        share += fork_s * (k - 1) / (2 * per_program)
    return lo + max(1, min(int(round(share)), rest - (k - 1)))


def _env_number(name: str, default: float) -> float:
    try:
        return float(os.environ[name])
    except (KeyError, ValueError):
        return default


class _AtomicInChild(BaseException):
    """Raised in a child at its first atomic: the launch must run in one process."""


# -- which kernels use atomics (their code objects and those of the @jit functions they call) ------


def _jit_code(obj) -> types.CodeType | None:
    fn = getattr(obj, "fn", None)  # JITFunction / InterpretedFunction -> the Python function
    code = getattr(fn, "__code__", None)
    return code if isinstance(code, types.CodeType) else None


def uses_atomics(fn) -> bool:
    """True when the kernel or a @jit function it names calls an atomic (tl.atomic_*). A helper reached
    another way is caught in the child instead (`_AtomicInChild`)."""
    seen: set = set()
    g = getattr(fn, "__globals__", {})
    todo = [(fn.__code__, g)]
    while todo:
        code, glb = todo.pop()
        if code in seen:
            continue
        seen.add(code)
        names = code.co_names
        if any(n.startswith("atomic_") for n in names):
            return True
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                todo.append((c, glb))
        for n in names:
            obj = glb.get(n)
            if isinstance(obj, types.ModuleType):  # mod.helper: look the other names up in it too
                for m in names:
                    sub = _jit_code(getattr(obj, m, None))
                    if sub is not None:
                        todo.append((sub, getattr(getattr(obj, m).fn, "__globals__", {})))
                continue
            sub = _jit_code(obj)
            if sub is not None:
                todo.append((sub, getattr(getattr(obj, "fn", None), "__globals__", {})))
    return False


# -- what a child sends ---------------------------------------------------------------------------


class _StoreLog:
    """The bytes a child's programs stored, in order: contiguous runs as (address, bytes), scattered
    lanes with their addresses."""

    def __init__(self):
        self.kind: list[int] = []  # 0: contiguous from `start`; 1: scattered, addresses in `addrs`
        self.itemsize: list[int] = []
        self.count: list[int] = []
        self.start: list[int] = []
        self.addrs: list[np.ndarray] = []
        self.vals: list[bytes] = []

    def __call__(self, ptrs: np.ndarray, values: np.ndarray, mask: np.ndarray) -> None:
        p = ptrs.reshape(-1)
        v = np.broadcast_to(values, ptrs.shape).reshape(-1)
        m = np.broadcast_to(mask, ptrs.shape).reshape(-1)
        if not m.all():
            p, v = p[m], v[m]
        n = p.size
        if n == 0:
            return
        size = v.dtype.itemsize
        self.itemsize.append(size)
        self.count.append(n)
        self.vals.append(np.ascontiguousarray(v).tobytes())
        if n == 1 or bool((np.diff(p) == size).all()):
            self.kind.append(0)
            self.start.append(int(p[0]))
        else:
            self.kind.append(1)
            self.start.append(0)
            self.addrs.append(np.ascontiguousarray(p, dtype=np.uint64))

    def arrays(self) -> dict[str, np.ndarray]:
        return {
            "st.kind": np.asarray(self.kind, dtype=np.uint8),
            "st.itemsize": np.asarray(self.itemsize, dtype=np.uint8),
            "st.count": np.asarray(self.count, dtype=np.int64),
            "st.start": np.asarray(self.start, dtype=np.uint64),
            "st.addrs": np.concatenate(self.addrs) if self.addrs else np.empty(0, dtype=np.uint64),
            "st.vals": np.frombuffer(b"".join(self.vals), dtype=np.uint8),
        }


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def apply_stores(a: dict[str, np.ndarray]) -> None:
    """Replay a child's store log into this process's memory, in the order the child stored."""
    vals = a["st.vals"]
    base = vals.ctypes.data
    off = aoff = 0
    addrs = a["st.addrs"]
    for kind, size, count, start in zip(
        a["st.kind"].tolist(), a["st.itemsize"].tolist(), a["st.count"].tolist(), a["st.start"].tolist()
    ):
        nbytes = size * count
        if kind == 0:
            ctypes.memmove(start, base + off, nbytes)
        else:
            v = vals[off : off + nbytes]
            dt = _UINT.get(size)
            if dt is not None:
                compat.raw_store(addrs[aoff : aoff + count], v.view(dt))
            else:  # an odd item size: lane by lane
                for k, addr in enumerate(addrs[aoff : aoff + count].tolist()):
                    ctypes.memmove(addr, base + off + k * size, size)
            aoff += count
        off += nbytes


def _stable_key(key: tuple) -> list:
    """A recorder site key (code object, bytecode offset, arg, kind, op) in a form another process can
    compare: a @jit helper first called in a child has a code object the parent never saw."""
    code, lasti, tag, kind, op = key
    if code is None:
        return [None, None, 0, lasti, tag, kind, op]
    return [code.co_filename, code.co_name, code.co_firstlineno, lasti, tag, kind, op]


def _stable_dot_key(key) -> list:
    """A tl.dot site key (code object, bytecode offset) that another process can compare."""
    if key is None:
        return [None, None, 0, 0]
    code, lasti = key
    return [code.co_filename, code.co_name, code.co_firstlineno, lasti]


def _set_arrays(prefix: str, b: ElementSetsBuilder, n0: int) -> dict[str, np.ndarray]:
    part = ElementSetsBuilder()
    part.kinds, part.los, part.counts, part.chunks = b.kinds[n0:], b.los[n0:], b.counts[n0:], b.chunks[n0:]
    return {f"{prefix}.{k}": v for k, v in part.finish().arrays().items()}


def _extend_sets(b: ElementSetsBuilder, a: dict[str, np.ndarray], prefix: str) -> None:
    b.kinds.extend(a[f"{prefix}.kind"].tolist())
    b.los.extend(a[f"{prefix}.lo"].tolist())
    b.counts.extend(a[f"{prefix}.count"].tolist())
    data = a[f"{prefix}.data"].tobytes()
    st = a[f"{prefix}.start"].tolist()
    b.chunks.extend(data[st[i] : st[i + 1]] for i in range(len(st) - 1))


def _die_with_parent() -> None:
    try:  # Linux: a child whose worker was killed outright (SIGKILL) ends too
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


PROBE, SPLIT_DONE, ONE_PROCESS, CHILD = "probe", "split-done", "one-process", "child"


def _skip(**args) -> None:
    """executor.fn in the parent once the children's results are merged: the rest of the loop is empty."""
    return None


class _Dispatch:
    """One launch's split. In the parent, `before_program` runs before each program (the grid loop's
    set_grid_idx) and the programs it runs itself are the kernel's own function, so an exception's
    traceback is the one-process run's. In a child, `executor.fn` is `child_call`."""

    def __init__(self, rec: ParallelRecorder, launch, executor, fn, n: int):
        self.rec, self.L, self.executor, self.fn, self.n = rec, launch, executor, fn, n
        self.i = 0  # programs the loop has reached, in its order
        self.phase = PROBE
        self.t0 = 0.0
        self.per_program = 0.0  # seconds, as the probe measured
        # Set in a child:
        self.lo = self.hi = 0
        self.out: BinaryIO | None = None
        self.n0 = self.s0 = self.d0 = self.d0s = 0
        self.stores: _StoreLog | None = None

    def before_program(self) -> None:
        done = self.i
        self.i = done + 1
        if self.phase is not PROBE:
            return
        now = time.perf_counter()
        if done == 0:
            self.t0 = now
            return
        elapsed = now - self.t0
        if elapsed < self.rec.probe_seconds:
            return
        self.per_program = elapsed / done
        rest = self.per_program * (self.n - done)
        k = min(self.rec.workers, self.n - done)
        if self.rec.min_seconds > 0:
            k = min(k, int(rest / self.rec.min_seconds))
        if k < 2:
            self.phase = ONE_PROCESS
        else:
            self._split(done, k)

    def child_call(self, **args) -> None:
        i = self.i - 1  # before_program is not called in a child: count here
        self.i += 1
        if i < self.lo:
            return
        try:
            self.fn(**args)
        except _AtomicInChild:
            self._child_exit("atomic")
        except BaseException:
            self._child_exit("error")
        if i + 1 >= self.hi:
            self._child_exit("ok")

    # -- parent ---------------------------------------------------------------------------------
    def _split(self, done: int, k: int) -> None:
        rec, L = self.rec, self.L
        n0, s0 = len(L.ex_site), len(L.sites)
        self.d0, self.d0s = len(L.dots), len(L.dot_sites)  # the children's tl.dot records start here
        t_fork = time.perf_counter()
        sys.stdout.flush()
        sys.stderr.flush()
        children: list[tuple[int, int, int, int]] = []  # (pid, read fd, lo, hi)
        # Frozen objects are left out of the children's garbage collections, which would otherwise
        # write to (and so copy) every page of the parent's heap they inherited.
        gc.freeze()
        lo = done
        for j in range(k):
            fork_s = (time.perf_counter() - t_fork) / j if j else rec.fork_seconds
            hi = chunk_bounds(lo, self.n, k - j, self.per_program, fork_s)
            try:
                r, w = os.pipe()
                pid = os.fork()
            except OSError:  # out of processes or memory: the launch runs in one process
                gc.unfreeze()
                self._abandon(children)
                return
            if pid == 0:
                for _, rfd, _, _ in children:
                    os.close(rfd)
                os.close(r)
                self._become_child(w, lo, hi, n0, s0)
                return  # back into the interpreter's loop, now as the child
            os.close(w)
            children.append((pid, r, lo, hi))
            lo = hi
        t_wait = time.perf_counter()
        rec.fork_seconds = (t_wait - t_fork) / k
        results = self._collect(children, done)
        gc.unfreeze()
        t_merge = time.perf_counter()
        if all(r is not None and r[0]["status"] == "ok" for r in results):
            self._merge(results, s0)
            self.phase = SPLIT_DONE
            self.executor.fn = _skip
        else:
            if any(r is not None and r[0]["status"] == "atomic" for r in results):
                rec.atomic_kernels.add(self.fn.__code__)
            self.phase = ONE_PROCESS  # memory is untouched: run the rest here, as one process would
        rec.last_split = {
            "kernel": L.kernel,
            "launch": L.index,
            "programs": self.n,
            "workers": k,
            "probe": done,
            "merged": self.phase is SPLIT_DONE,
            "children": [r[0]["status"] if r is not None else "lost" for r in results],
            "fork_s": t_wait - t_fork,
            "wait_s": t_merge - t_wait,
            "merge_s": time.perf_counter() - t_merge,
            "chunks": [hi - lo for _, _, lo, hi in children],
            # each child's own CPU seconds and minor page faults (copy-on-write copies among them)
            "child_cpu_s": [r[0].get("cpu_s") if r is not None else None for r in results],
            "child_minflt": [r[0].get("minflt") if r is not None else None for r in results],
        }
        report = os.environ.get("TRITON_LENS_PARALLEL_REPORT")
        if report:  # tests and benchmarks: which launches were split, and how they ended
            with open(report, "a") as f:
                f.write(json.dumps(rec.last_split) + "\n")

    def _abandon(self, children) -> None:
        for pid, fd, _, _ in children:
            os.close(fd)
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
        self.phase = ONE_PROCESS

    def _collect(self, children, done_before: int) -> list:
        rec, L = self.rec, self.L
        files = {fd: os.fdopen(fd, "rb", buffering=0) for _, fd, _, _ in children}
        slot = {fd: j for j, (_, fd, _, _) in enumerate(children)}
        results: list = [None] * len(children)
        progress = [0] * len(children)
        open_fds = set(files)
        next_report = 0.0
        while open_fds:
            ready, _, _ = select.select(list(open_fds), [], [], 0.5)
            for fd in ready:
                frame = stream.read_frame(files[fd])
                if frame is None:
                    open_fds.discard(fd)
                    continue
                kind, meta, arrays = frame
                if kind == "progress":
                    progress[slot[fd]] = meta["done"]
                else:
                    results[slot[fd]] = (meta, arrays)
                    open_fds.discard(fd)
            now = time.monotonic()
            if rec.on_progress is not None and now >= next_report:
                next_report = now + 0.2
                rec.on_progress(L.kernel, L.index, done_before + sum(progress), self.n)
        for f in files.values():
            f.close()
        for pid, _, _, _ in children:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        return results

    def _merge(self, results: list, s0: int) -> None:
        L = self.L
        by_key: dict = {}
        for meta, a in results:
            sites = meta["sites"]
            remap = np.arange(s0 + len(sites), dtype=np.int32)
            for j, s in enumerate(sites):
                key = tuple(s["key"])
                idx = by_key.get(key)
                if idx is None:
                    idx = by_key[key] = len(L.sites)
                    L.sites.append(Site.from_json(s))
                remap[s0 + j] = idx
            row0 = len(L.ex_site) - meta["n0"]  # the child's row r is the parent's row r + row0
            L.ex_site.extend(remap[a["ex_site"]].tolist())
            for c in ("ex_program", "ex_lanes", "ex_active", "ex_oob", "ex_vhash", "ex_overrun"):
                getattr(L, c).extend(a[c].tolist())
            dot_remap = {}
            for j, d in enumerate(meta["dot_sites"]):  # tl.dot sites, by source position
                key = tuple(d["key"])
                idx = by_key.get(key)
                if idx is None:
                    idx = by_key[key] = len(L.dot_sites)
                    L.dot_sites.append(DotSite.from_json(d))
                dot_remap[meta["d0s"] + j] = idx
            L.tiles.extend(a["tile_row"].astype(np.int64) + len(L.dots), a["tile_start"], a["tile_data"])
            L.dot_dev.extend(map(tuple, a["dot_dev"].reshape(-1, 2).tolist()))
            for site, prog, ra, rb, m, n, k in a["dots"].reshape(-1, 7).tolist():
                L.dots.append(
                    (
                        dot_remap.get(site, site),
                        prog,
                        ra + row0 if ra >= 0 else -1,
                        rb + row0 if rb >= 0 else -1,
                        m,
                        n,
                        k,
                    )
                )
            _extend_sets(L.touched, a, "touched")
            _extend_sets(L.masked, a, "masked")
            _extend_sets(L.oob, a, "oob")
            apply_stores(a)

    # -- child ----------------------------------------------------------------------------------
    def _become_child(self, w: int, lo: int, hi: int, n0: int, s0: int) -> None:
        _die_with_parent()
        try:  # Ctrl-C ends a child at once (the parent falls back or stops)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
        except ValueError:  # not the main thread (the Triton-Viz API called from a thread)
            pass
        self.phase, self.lo, self.hi, self.n0, self.s0 = CHILD, lo, hi, n0, s0
        self.executor.fn = self.child_call
        self.out = os.fdopen(w, "wb", buffering=1 << 16)
        self.stores = _StoreLog()
        compat.tap_stores(self.stores)
        rec = self.rec
        rec.in_child = True
        out = self.out

        def progress(kernel, launch, done, total):
            stream.write_frame(out, "progress", {"done": max(0, min(done, hi) - lo)})

        rec.on_progress = progress if rec.on_progress is not None else None

    def _child_exit(self, status: str) -> None:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        try:
            out, stores = self.out, self.stores
            assert out is not None and stores is not None  # (set by _become_child)
            if status == "ok":
                L, n0, s0 = self.L, self.n0, self.s0
                keys = {i: k for k, i in L.site_index.items() if i >= s0}
                sites = [dict(L.sites[i].to_json(), key=_stable_key(keys[i])) for i in range(s0, len(L.sites))]
                arrays: dict[str, np.ndarray] = {"ex_site": np.asarray(L.ex_site[n0:], dtype=np.int32)}
                for c in ("ex_program", "ex_lanes", "ex_active", "ex_oob", "ex_overrun"):
                    arrays[c] = np.asarray(getattr(L, c)[n0:], dtype=np.int32)
                arrays["ex_vhash"] = np.asarray(L.ex_vhash[n0:], dtype=np.int64)
                dot_keys = {i: k for k, i in L.dot_site_index.items() if i >= self.d0s}
                dot_sites = [
                    dict(L.dot_sites[i].to_json(), key=["dot", *_stable_dot_key(dot_keys[i])])
                    for i in range(self.d0s, len(L.dot_sites))
                ]
                arrays["dots"] = np.asarray(L.dots[self.d0 :], dtype=np.int64).reshape(-1, 7)
                arrays["dot_dev"] = np.asarray(L.dot_dev[self.d0 :], dtype=np.float64).reshape(-1, 2)
                arrays["tile_row"], arrays["tile_start"], arrays["tile_data"] = L.tiles.arrays(self.d0)
                arrays.update(_set_arrays("touched", L.touched, n0))
                arrays.update(_set_arrays("masked", L.masked, n0))
                arrays.update(_set_arrays("oob", L.oob, n0))
                arrays.update(stores.arrays())
                use = resource.getrusage(resource.RUSAGE_SELF)  # a fork starts its counts at zero
                stream.write_frame(
                    out,
                    "result",
                    {
                        "status": "ok",
                        "sites": sites,
                        "n0": n0,
                        "dot_sites": dot_sites,
                        "d0s": self.d0s,
                        "cpu_s": use.ru_utime + use.ru_stime,
                        "minflt": use.ru_minflt,
                    },
                    arrays,
                )
            else:
                stream.write_frame(out, "result", {"status": status})
            out.close()
        finally:
            # posix._exit, not os._exit: the worker wraps the latter to report a script's own exit
            # (with a stack in the run's crash file), and a child's end is no such thing.
            posix._exit(0)


class ParallelRecorder(Recorder):
    """The recorder, with each large enough launch's programs split over `workers` processes."""

    def __init__(
        self,
        *args,
        workers: int = 1,
        min_programs: int | None = None,
        min_seconds: float | None = None,
        probe_seconds: float | None = None,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.workers = max(1, int(workers))
        self.fork_seconds = FORK_SECONDS  # one fork's cost, as this recorder's last split measured it
        # The environment can lower the thresholds (the tests split even the corpus's small launches).
        self.min_programs = int(
            min_programs if min_programs is not None else _env_number("TRITON_LENS_PARALLEL_MIN_PROGRAMS", MIN_PROGRAMS)
        )
        self.min_seconds = float(
            min_seconds if min_seconds is not None else _env_number("TRITON_LENS_PARALLEL_MIN_SECONDS", MIN_SECONDS)
        )
        self.probe_seconds = float(
            probe_seconds
            if probe_seconds is not None
            else _env_number("TRITON_LENS_PARALLEL_PROBE_SECONDS", PROBE_SECONDS)
        )
        self.atomic_kernels: set = set()
        self.in_child = False
        self.last_split: dict | None = None
        self._executors: list = []
        self._dispatch: list[_Dispatch | None] = []

    def launch_begin(self, executor, fn):
        token = super().launch_begin(executor, fn)
        self._executors.append(executor)
        self._dispatch.append(None)
        return token

    def grid(self, nx, ny, nz) -> None:
        super().grid(nx, ny, nz)
        L = self._launch
        if (
            L is None
            or not self._executors
            or self.workers < 2
            or self._benchmarking
            or self.in_child
            or self.in_sample_child
        ):
            return
        if self._probe is not None:  # a size-check re-launch runs its few programs here
            return
        n = int(nx) * int(ny) * int(nz)
        executor = self._executors[-1]
        fn: Any = getattr(executor, "fn", None)
        if n < max(2, self.min_programs) or getattr(fn, "__code__", None) is None or L.ex_site:
            return
        if fn.__code__ in self.atomic_kernels:
            return
        if uses_atomics(fn):
            self.atomic_kernels.add(fn.__code__)
            return
        self._dispatch[-1] = _Dispatch(self, L, executor, fn, n)

    def program(self, x, y, z):
        instead = super().program(x, y, z)  # the progressive sample first: it forks before a split
        d = self._dispatch[-1] if self._dispatch else None
        if d is not None and not self.in_child and not self.in_sample_child:
            d.before_program()
        return instead

    def launch_end(self, token, error) -> None:
        if self._executors:
            executor = self._executors.pop()
            d = self._dispatch.pop()
            if d is not None:
                executor.fn = d.fn
        super().launch_end(token, error)

    def access(self, kind, op, builder, ptrs, mask, value=None, order=None):
        if self.in_child and (kind == "atomic" or (self._ctx and self._ctx[-1].kind == "atomic")):
            raise _AtomicInChild()
        return super().access(kind, op, builder, ptrs, mask, value=value, order=order)
