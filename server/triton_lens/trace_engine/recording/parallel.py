"""A launch's programs across several processes: the engine's own grid loop, split over forked children.

The interpreter's grid loop calls `set_grid_idx`, then `executor.fn(**args)`, once per program,
looking the attribute up each time. The loop itself is untouched: a set_grid_idx hook (`_Dispatch.
before_program`) decides, and `executor.fn` is swapped where a process must skip programs.

- The parent runs the first programs itself (the probe, `probe_seconds`; in a launch of
  `early_programs` or more, two, timed by the second alone) with the kernel's own function in place (an
  exception's traceback is the one-process run's). A launch of fewer than `min_programs` programs goes
  on in one process, and so does one whose rest would not give two children `min_seconds` of work each.
- Otherwise it cuts the remaining programs (in the interpreter's order: x outermost, z innermost)
  into chunks that shrink towards the end (`chunk_plan`), writes their numbers into a pipe (the
  queue), and forks `workers` children as a tree (`_subtrees`: the last starts about log2(workers)
  forks after the split, not `workers`). A fork has the launch's host tensors, the recorder's state and
  the rewritten kernel already. A child takes the next chunk from the queue whenever it has run the
  last (so a child that started late, or runs slowly, just takes fewer), remaps the loop's visits onto
  that chunk's programs (`child_coords`, through the hook's return: it never walks past the programs
  before its chunk), runs them in `executor.fn` (`child_call`) and sends what they recorded as one
  frame per chunk; the bytes they stored go to the child's slot's file in memory and the frame says
  where (store_log.py: no output crosses a pipe), and into the child's own memory only once one of its
  loads could read them (child_writes.py). At the queue's end it releases its copies of the
  launch's tensors' pages (`release_pages`), sends its result and exits (it never reaches the
  interpreter's copy back to the device: a CUDA tensor is only ever host memory to it).
- The parent merges each chunk once every chunk before it is in (`_Merge`), while the children run:
  site indices remapped by site key, new ones numbered as the chunks meet them (the one-process order
  of first appearance). Once every child's result is in it writes their stores in program order (while
  the children exit: none maps those pages any more, so no write copies one) and ends its own loop
  there (compat.END_LOOP: the remaining visits would run nothing); it reaps the children at the launch's end.
  Memory and every recorded array are then exactly those of a one-process run, as long as no program
  reads what another program of the launch writes (a race the analysis reports).
- What cannot run split runs in one process: kernels using atomics (found in the kernel's code and its
  @jit helpers, or when a child meets its first atomic), and any launch where a child raised, crashed
  or was killed. Memory is untouched until the stores are applied and the merged chunks are cut off
  again (`_Undo`), so the parent just runs the rest of the launch itself: the exception (or crash) is
  then the one-process run's, at the same program.

Children are forked per launch (a fork of a worker with torch loaded was 5-10 ms on the 16-core device
machine, 2-4 ms since the worker's large tensors are on huge pages: process_tree.FORK_FRIENDLY_ENV;
bench/parallel.py prints the time the parent spends forking, bench/split_profile.py each child's
timeline). Forked workers are not reused across launches: a fork is what gives a child the
launch's tensors and the script's whole state without copying or pickling anything; with the tree the
parent's own forks take 25-40 ms at 16 workers (16 serial forks took 70-155 ms; bench/results/
parallel_2026-12-04_h200_16core_queue_tree.txt). They
stay in the worker's process group, so the runner's time and memory limits reach them; a child that
forked others waits for them before it exits (their PDEATHSIG is its exit), with SIGUSR1 ignored, so
the time limit's stack dumps come from the children still running programs. A launch whose children
did not all end well is left to one process only after every child has exited (`_reap`): the parent's
writes from then on are its own alone.
"""

from __future__ import annotations

import ctypes
import faulthandler
import gc
import json
import math
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
from . import progressive as _progressive
from . import stream
from .child_writes import ChildWrites
from .recorder import Builder, DotKey, Handle, Order, Recorder, SiteKey, _Launch
from .store_log import WRITE_THREADS, ChunkStores, FileBytes, StoreFile, StoreLog, close_later, write_stores

# Launches smaller than this stay in one process. Each child gets at least MIN_SECONDS of work (as the
# probe estimates it; a fork costs a few ms), so a launch whose rest is under 2 * MIN_SECONDS (50 ms)
# stays in one process too.
MIN_PROGRAMS = 64
MIN_SECONDS = 0.025
# The parent runs programs itself for at least this long before it estimates the launch's time.
PROBE_SECONDS = 0.01
# ... except in a launch of at least this many programs, which is judged by its second program alone (its
# first pays the launch's first-time costs): decided after two programs, not 10 ms of them, its children's
# fork tree (~25 ms on 16 workers) starts up to 8 ms sooner (a softmax row takes 1 ms). One program is
# estimate enough at that size: the rest is over 1000 of them, and a cheap one (a single store, 25-45 us
# traced) still stays in one process (under 2 * MIN_SECONDS in all).
EARLY_PROGRAMS = 1024
# The chunks children take (chunk_plan): each 1/(CHUNK_SPLIT * workers) of what is left, at least this
# long, and at most MAX_CHUNKS of them (their numbers, 4 bytes each, fill one pipe before any child runs;
# a pipe holds at least a page).
CHUNK_SPLIT = 2
CHUNK_SECONDS = 0.005
MAX_CHUNKS = 1024


def chunk_plan(lo: int, n: int, k: int, per_program: float) -> list[tuple[int, int]]:
    """The chunks [lo, hi) of programs [lo, n) that k children take one at a time, in program order:
    each is 1/(CHUNK_SPLIT k) of the programs still unplanned, so they shrink towards the end (the last
    child to take one ends about when the others do, whatever their start or speed), and at least
    CHUNK_SECONDS of work (as the probe timed it; one program at least). At most MAX_CHUNKS."""
    least = max(1, math.ceil(CHUNK_SECONDS / per_program)) if per_program > 0 else 1
    least = max(least, math.ceil((n - lo) / MAX_CHUNKS))
    plan = []
    while lo < n:
        hi = min(n, lo + max(least, (n - lo) // (CHUNK_SPLIT * k)))
        plan.append((lo, hi))
        lo = hi
    return plan


def _env_number(name: str, default: float) -> float:
    try:
        return float(os.environ[name])
    except (KeyError, ValueError):
        return default


class _AtomicInChild(BaseException):
    """Raised in a child at its first atomic: the launch must run in one process."""


# -- which kernels use atomics (their code objects and those of the @jit functions they call) ------


def _jit_code(obj: object) -> types.CodeType | None:
    fn = getattr(obj, "fn", None)  # JITFunction / InterpretedFunction -> the Python function
    code = getattr(fn, "__code__", None)
    return code if isinstance(code, types.CodeType) else None


def uses_atomics(fn: Any) -> bool:  # fn: the executor's kernel function (triton's, with __code__)
    """True when the kernel or a @jit function it names calls an atomic (tl.atomic_*). A helper reached
    another way is caught in the child instead (`_AtomicInChild`)."""
    seen: set[types.CodeType] = set()
    g: dict[str, Any] = getattr(fn, "__globals__", {})
    todo: list[tuple[types.CodeType, dict[str, Any]]] = [(fn.__code__, g)]
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


def _stable_key(key: SiteKey) -> list[str | int | None]:
    """A recorder site key (code object, bytecode offset, arg, kind, op) in a form another process can
    compare: a @jit helper first called in a child has a code object the parent never saw."""
    code, lasti, tag, kind, op = key
    if code is None:
        return [None, None, 0, lasti, tag, kind, op]
    return [code.co_filename, code.co_name, code.co_firstlineno, lasti, tag, kind, op]


def _stable_dot_key(key: DotKey) -> list[str | int | None]:
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


def _cpu_outside_this_thread() -> float:
    """CPU seconds this process's other threads have taken (the split report)."""
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime - time.thread_time()


def _threads() -> int:
    """This process's threads (a child's should be one: a fork keeps only the forking thread); 0 unknown."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0


def _die_with_parent() -> None:
    try:  # Linux: a child whose worker was killed outright (SIGKILL) ends too
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


_MADV_DONTNEED = 4  # (Linux's number)


def release_pages(spans: list[tuple[int, int]]) -> int:
    """(child) Unmap this process's copies of the whole pages inside each [lo, hi) address span
    (MADV_DONTNEED); returns the bytes released. A forked child that has sent its last chunk never reads
    the launch's tensors again, and while it maps their pages each page the parent then writes is copied
    (copy-on-write: the parent's is not its own until no child maps it); released, the parent writes them
    in place without waiting for the child to exit. A page shared with other memory at a span's edge is
    kept. Nothing is released where the system has no madvise (the parent's writes then copy)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        madvise = libc.madvise
    except (OSError, AttributeError):
        return 0
    madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    page = resource.getpagesize()
    done = 0
    for lo, hi in sorted(set(spans)):
        a, b = -(-lo // page) * page, hi // page * page
        if b > a and madvise(a, b - a, _MADV_DONTNEED) == 0:
            done += b - a
    return done


def _run_as_batch_work() -> None:
    """(child) SCHED_BATCH: the scheduler's class for CPU-bound work that does not preempt others on waking.
    A child's share of the CPU is unchanged, but the parent (16 workers on 16 cores: one child shares a core
    with it), the editor and the language server get a core back at once when they wake."""
    try:
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    except (AttributeError, OSError):  # not Linux
        pass


def _timeline(
    t0: float, forked: float | None, marks: dict[str, tuple[float, float]], received: float | None
) -> dict[str, dict[str, float]]:
    """One child's timeline for the split report (`_Dispatch.marks`), in ms after t0 (forked: when the
    parent called fork, for the children it forked itself)."""
    ms = {} if forked is None else {"forked": round((forked - t0) * 1e3, 1)}
    cpu: dict[str, float] = {}
    for name in ("born", "first", "ran", "built", "end"):
        if name in marks:
            ms[name] = round((marks[name][0] - t0) * 1e3, 1)
            cpu[name] = round(marks[name][1] * 1e3, 1)
    if received is not None:
        ms["sent"] = round((received - t0) * 1e3, 1)
    return {"at": ms, "cpu": cpu}


def _subtrees(lo: int, hi: int) -> list[tuple[int, int]]:
    """The slots [mid, hi) whose children the process of slot lo forks, the largest first, for the
    slots [lo, hi) it is to start: 0-16 -> 8-16, 4-8, 2-4, 1-2."""
    out = []
    while hi - lo > 1:
        mid = (lo + hi + 1) // 2
        out.append((mid, hi))
        hi = mid
    return out


def _result_pipes(k: int) -> list[tuple[int, int]]:
    """A pipe per slot, as large as the system lets it be (stream.frame_pipe): a child that writes a
    chunk's frame (its records; the stored bytes go to its slot's file) seldom waits for the parent."""
    pipes: list[tuple[int, int]] = []
    try:
        for _ in range(k):
            pipes.append(stream.frame_pipe())
    except OSError:
        for r, w in pipes:
            os.close(r)
            os.close(w)
        raise
    return pipes


def _stand_in(pipes: list[tuple[int, int]], lo: int, hi: int) -> None:
    """Slots [lo, hi) whose child could not be forked: each ends at once, having taken no chunk."""
    for j in range(lo, hi):
        with os.fdopen(os.dup(pipes[j][1]), "wb") as f:
            stream.write_frame(f, "result", {"status": "ok", "pid": -1, "ppid": -1})


def _forked_by(r: stream.Meta | None, results: list[stream.Meta | None]) -> int | None:
    if r is None or r.get("ppid", -1) < 0:
        return None
    pids = {x.get("pid"): j for j, x in enumerate(results) if x is not None}
    return pids.get(r["ppid"], -1)


PROBE, SPLIT_DONE, ONE_PROCESS, CHILD = "probe", "split-done", "one-process", "child"


def _running(pid: int) -> bool:
    """(parent) The child has not exited yet (not reaped: it is reaped later)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None
    except (ChildProcessError, AttributeError):
        return False


def _coords(p: int, grid: tuple[int, int, int]) -> tuple[int, int, int]:
    """The p-th program of the interpreter's loop (x outermost, z innermost)."""
    _, gy, gz = grid
    return p // (gy * gz), (p // gz) % gy, p % gz


class _Undo:
    """The lengths of a launch's recorded lists before a split: merged chunks are cut off again when
    the launch falls back to one process (memory is untouched: stores are applied only at the end)."""

    def __init__(self, L: _Launch) -> None:
        self.n = len(L.ex_site)
        self.s, self.d, self.ds, self.dev = len(L.sites), len(L.dots), len(L.dot_sites), len(L.dot_dev)
        self.tiles = (len(L.tiles.rows), L.tiles.size)

    def restore(self, L: _Launch) -> None:
        for c in ("ex_site", "ex_program", "ex_lanes", "ex_active", "ex_oob", "ex_vhash", "ex_overrun"):
            del getattr(L, c)[self.n :]
        for b in (L.touched, L.masked, L.oob):
            del b.kinds[self.n :], b.los[self.n :], b.counts[self.n :], b.chunks[self.n :]
        del L.sites[self.s :], L.dots[self.d :], L.dot_sites[self.ds :], L.dot_dev[self.dev :]
        rows, size = self.tiles
        del L.tiles.rows[rows:], L.tiles.chunks[rows:]
        L.tiles.size = size


class _Dispatch:
    """One launch's split. In the parent, `before_program` runs before each program (the grid loop's
    set_grid_idx) and the programs it runs itself are the kernel's own function, so an exception's
    traceback is the one-process run's. In a child, `executor.fn` is `child_call` and the loop's
    visits are remapped (`child_coords`) onto the programs of the chunks it takes from the queue."""

    # executor, fn: triton's (untyped) grid executor and the kernel function it calls per program.
    def __init__(self, rec: ParallelRecorder, launch: _Launch, executor: Any, fn: Any, n: int):
        self.rec, self.L, self.executor, self.fn, self.n = rec, launch, executor, fn, n
        gx, gy, gz = launch.grid
        self.grid = (int(gx), int(gy), int(gz))
        self.i = 0  # programs the loop has reached, in its order
        self.phase = PROBE
        self.t0 = 0.0
        self.t1 = 0.0  # when the first program ended (the second began)
        self.per_program = 0.0  # seconds, as the probe measured
        self.plan: list[tuple[int, int]] = []  # the chunks, in program order
        self.d0s = 0  # the launch's tl.dot sites before the split
        self.queue = -1  # the read end of the pipe of chunk numbers (every process takes from it)
        # Set in a child:
        self.pos = self.chunk_hi = 0  # the next program it runs, the end of its chunk
        self.chunk = -1
        self.r0 = self.dot0 = self.s_sent = self.ds_sent = 0
        self.out: BinaryIO | None = None
        self.stores: StoreLog | None = None
        self.writes: ChildWrites | None = None  # (child) what it writes to its own memory (child_writes.py)
        self.files: list[StoreFile] = []  # each slot's stored bytes (store_log.py)
        self.piped = self.filed = 0  # (parent) bytes of the chunks' frames, and of their stores in the files
        self.slot = -1  # (child) its slot
        self.ran = 0  # programs it ran
        # A child's timeline (perf_counter, a clock every process of the machine shares) and CPU
        # seconds at each point: born (fork returned), first (its first own program starts), ran (its
        # last ended), built (its last chunk's arrays made). The parent adds sent (the result read).
        self.marks: dict[str, tuple[float, float]] = {}
        self.subs: list[int] = []  # (child) the children it forked (the tree of `_split`)
        self.send_s = 0.0  # (child) wall seconds making and writing its chunks' frames (the split report)
        # (child) each chunk's programs, the CPU seconds they took and the minor page faults they met, frames
        # apart (the split report: a fresh fork's first programs against its later ones; a fault is a
        # page written for the first time since the fork, which a VM makes costly)
        self.chunk_cpu: list[tuple[int, float, int]] = []
        self.took_cpu = 0.0
        self.took_faults = 0
        # (parent) each frame it read: (read, merged: perf_counter), the slot, its chunk (-1: the result)
        self.frames_log: list[tuple[float, float, int, int]] = []
        self.children: list[int] = []  # (parent) the children it forked itself, until reaped (`_reap`)
        self.t_fork = 0.0

    def before_program(self) -> None:
        done = self.i
        self.i = done + 1
        if self.phase is not PROBE:
            return
        now = time.perf_counter()
        if done == 0:
            self.t0 = now
            return
        if done == 1:
            self.t1 = now
        elapsed = now - self.t0
        # (not while the launch's progressive sample still times its own programs: a split now would
        # hold the parent until the launch's end, and the partial would never come; progressive.py)
        early = done == 2 and self.n >= self.rec.early_programs and not self._sample_waits()
        if elapsed < self.rec.probe_seconds and not early:
            return
        self.per_program = now - self.t1 if early and elapsed < self.rec.probe_seconds else elapsed / done
        rest = self.per_program * (self.n - done)
        k = min(self.rec.workers, self.n - done)
        if self.rec.min_seconds > 0:
            k = min(k, int(rest / self.rec.min_seconds))
        if k < 2:
            self.phase = ONE_PROCESS
        else:
            self._split(done, k)

    # -- child ----------------------------------------------------------------------------------
    def child_coords(self) -> tuple[int, int, int]:
        """(child) The program the loop's visit runs: the next one of the chunk it holds."""
        return _coords(self.pos, self.grid)

    def child_call(self, **args: Any) -> None:
        if not self.ran:
            self._mark("first")
        try:
            self.fn(**args)
        except _AtomicInChild:
            self._child_exit("atomic")
        except BaseException:
            self._child_exit("error")
        self.ran += 1
        self.pos += 1
        if self.pos >= self.chunk_hi:
            try:
                self._send_chunk()
            except Exception:  # (no memory for the bytes, the parent gone): the launch runs in one process
                self._child_exit("error")
            if not self._take():
                self._mark("ran")
                self._child_exit("ok")

    def _mark(self, name: str) -> None:
        self.marks[name] = (time.perf_counter(), time.process_time())

    def _take(self) -> bool:
        """(child) The next chunk from the queue; False once it is empty."""
        try:
            b = os.read(self.queue, 4)
        except OSError:
            b = b""
        if len(b) < 4:
            return False
        self.chunk = int.from_bytes(b, "little")
        self.pos, self.chunk_hi = self.plan[self.chunk]
        self.took_cpu = time.process_time()
        self.took_faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        self.r0, self.dot0 = len(self.L.ex_site), len(self.L.dots)
        return True

    def _send_chunk(self) -> None:
        """(child) What the chunk's programs recorded and stored, and the sites first met in it."""
        t = time.perf_counter()
        lo, hi = self.plan[self.chunk]
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - self.took_faults
        self.chunk_cpu.append((hi - lo, round(time.process_time() - self.took_cpu, 6), faults))
        L, out, stores = self.L, self.out, self.stores
        assert out is not None and stores is not None  # (set by _become_child)
        r0, d0 = self.r0, self.dot0
        keys = {i: k for k, i in L.site_index.items() if i >= self.s_sent}
        sites = [dict(L.sites[i].to_json(), key=_stable_key(keys[i])) for i in range(self.s_sent, len(L.sites))]
        dot_keys = {i: k for k, i in L.dot_site_index.items() if i >= self.ds_sent}
        dot_sites = [
            dict(L.dot_sites[i].to_json(), key=["dot", *_stable_dot_key(dot_keys[i])])
            for i in range(self.ds_sent, len(L.dot_sites))
        ]
        arrays: dict[str, np.ndarray] = {"ex_site": np.asarray(L.ex_site[r0:], dtype=np.int32)}
        for c in ("ex_program", "ex_lanes", "ex_active", "ex_oob", "ex_overrun"):
            arrays[c] = np.asarray(getattr(L, c)[r0:], dtype=np.int32)
        arrays["ex_vhash"] = np.asarray(L.ex_vhash[r0:], dtype=np.int64)
        arrays["dots"] = np.asarray(L.dots[d0:], dtype=np.int64).reshape(-1, 7)
        arrays["dot_dev"] = np.asarray(L.dot_dev[d0:], dtype=np.float64).reshape(-1, 2)
        arrays["tile_row"], arrays["tile_start"], arrays["tile_data"] = L.tiles.arrays(d0)
        arrays.update(_set_arrays("touched", L.touched, r0))
        arrays.update(_set_arrays("masked", L.masked, r0))
        arrays.update(_set_arrays("oob", L.oob, r0))
        logged = stores.take()
        at = self.files[self.slot].append(logged.pop("st.vals"))  # the bytes: in the slot's file, not the pipe
        assert self.writes is not None  # (set by _become_child)
        self.writes.chunk_sent(logged, self.files[self.slot], at[0])
        arrays.update(logged)
        meta = {"chunk": self.chunk, "r0": r0, "s_from": self.s_sent, "sites": sites, "st_at": at}
        meta.update(ds_from=self.ds_sent, dot_sites=dot_sites)
        self.s_sent, self.ds_sent = len(L.sites), len(L.dot_sites)
        self._mark("built")
        stream.write_frame(out, "chunk", meta, arrays)
        self.send_s += time.perf_counter() - t

    # -- parent ---------------------------------------------------------------------------------
    def _split(self, done: int, k: int) -> None:
        rec, L = self.rec, self.L
        s0 = len(L.sites)
        self.d0s = len(L.dot_sites)
        undo = _Undo(L)
        self.plan = chunk_plan(done, self.n, k, self.per_program)
        t_fork = time.perf_counter()
        cpu0 = _cpu_outside_this_thread()
        sys.stdout.flush()
        sys.stderr.flush()
        try:
            q_r, q_w = os.pipe()
        except OSError:
            self.phase = ONE_PROCESS
            return
        # Every chunk's number, in program order, before any child starts: a child takes the next one
        # when it has run its last (a read of 4 bytes from a pipe is atomic), and ends at the pipe's end.
        os.write(q_w, b"".join(j.to_bytes(4, "little") for j in range(len(self.plan))))
        os.close(q_w)
        self.queue = q_r
        try:
            pipes = _result_pipes(k)
        except OSError:  # out of descriptors: the launch runs in one process
            os.close(q_r)
            self.phase = ONE_PROCESS
            return
        self.files = []
        try:
            for _ in range(k):
                self.files.append(StoreFile())
        except OSError:  # (out of descriptors or memory: close those made, the launch runs in one process)
            for f in self.files:
                f.close()
            for r, w in pipes:
                os.close(r)
                os.close(w)
            os.close(q_r)
            self.files = []
            self.phase = ONE_PROCESS
            return
        # Frozen objects are left out of the children's garbage collections, which would otherwise
        # write to (and so copy) every page of the parent's heap they inherited.
        gc.freeze()
        # A tree of forks: the parent forks the children of slots 8-15, 4-7, 2-3, 1 and 0 (of 16), each
        # of which forks the rest of its slots the same way, so the last child starts about 5 forks
        # after the split rather than 16 (a fork of a worker with torch loaded is 5-10 ms).
        children: list[int] = []
        forked_at: dict[int, float] = {}
        for lo, hi in [*_subtrees(0, k), (0, 1)]:
            forked_at[lo] = time.perf_counter()
            try:
                pid = os.fork()
            except OSError:  # out of processes or memory: the others take those slots' chunks
                _stand_in(pipes, lo, hi)
                continue
            if pid == 0:
                self._become_child(pipes, lo, hi)
                return  # back into the interpreter's loop, now as the child
            children.append(pid)
        for _, w in pipes:
            os.close(w)
        t_wait = time.perf_counter()
        self.children, self.t_fork = children, t_fork
        merge = _Merge(self, s0)
        alive_at_write = 0
        try:
            results, received_at, ran = self._collect([r for r, _ in pipes], done, merge)
            threads_cpu = _cpu_outside_this_thread() - cpu0
            gc.unfreeze()
            os.close(q_r)
            t_merge = time.perf_counter()
            ok = all(r is not None and r["status"] == "ok" for r in results) and merge.next == len(self.plan)
            if ok:
                # Every child has sent its result and released its copies of the launch's tensors' pages
                # (`release_pages`): the stores are written now, while the children still exit (a tree,
                # each waiting for those it forked), and the children are reaped at the launch's end.
                alive_at_write = sum(1 for pid in children if _running(pid))
                merge.apply_stores()  # (from the slots' files)
            else:  # memory is written from here on by the parent alone: no child may still map it
                self._reap()
        finally:
            close_later(self.files)
            self.files = []
        if ok:
            self.phase = SPLIT_DONE  # (its loop ends at this visit: ParallelRecorder.program)
        else:
            if any(r is not None and r["status"] == "atomic" for r in results):
                rec.atomic_kernels.add(self.fn.__code__)
            undo.restore(L)  # memory is untouched: run the rest here, as one process would
            self.phase = ONE_PROCESS
        rec.last_split = {
            "kernel": L.kernel,
            "launch": L.index,
            "programs": self.n,
            "workers": k,
            "probe": done,
            "per_program_s": self.per_program,  # (the probe's estimate, which sized the chunks)
            "merged": self.phase is SPLIT_DONE,
            "children": [r["status"] if r is not None else "lost" for r in results],
            "split_at": t_fork,  # (perf_counter seconds: the benchmarks place the launch's own times against it)
            "fork_s": t_wait - t_fork,
            # CPU seconds the parent's other threads (the script's torch's OpenMP pool, spinning after a
            # parallel region before it sleeps) took from the fork to the last child's end: cores the
            # children lack
            "parent_threads_cpu_s": round(threads_cpu, 4),
            "wait_s": t_merge - t_wait,  # until the last child's result was read
            # the children the parent forked itself still running when it wrote the stores (their results
            # were in; they were exiting)
            "alive_at_write": alive_at_write,
            # the frames the parent read, in order: [read, merged (ms after the split began), slot, chunk
            # (-1: the child's result)]
            "frames_ms": [
                [round((a - t_fork) * 1e3, 2), round((b - t_fork) * 1e3, 2), j, c] for a, b, j, c in self.frames_log
            ],
            # what each child released of the launch's tensors before its result (bytes)
            "child_released": [r.get("released") if r is not None else None for r in results],
            "merge_s": time.perf_counter() - t_merge,  # what was left to merge once the last child ended
            "merge_total_s": merge.seconds,  # every chunk's merge and the stores' writing
            "write_s": merge.write_seconds,  # the stores' writing alone
            "n_chunks": len(self.plan),
            # the chunks' arrays read from the pipes, and their stored bytes read from the slots' files
            "piped_bytes": self.piped,
            "filed_bytes": self.filed,
            "chunks": ran,  # the programs each child ran
            # each child's own CPU seconds and minor page faults (copy-on-write copies among them)
            "child_cpu_s": [r.get("cpu_s") if r is not None else None for r in results],
            # why a child wrote its stores to its own memory ("load", "held", "always"), None: it did not
            "child_wrote_through": [r.get("wrote_through") if r is not None else None for r in results],
            "child_minflt": [r.get("minflt") if r is not None else None for r in results],
            # each child's wall seconds making and writing its chunks' frames
            "child_send_s": [r.get("send_s") if r is not None else None for r in results],
            # each child's threads at its end (more than one: a parallel region of its own, spinning)
            "child_threads": [r.get("threads") if r is not None else None for r in results],
            # each child's chunks in the order it ran them: [programs, CPU seconds of their programs]
            "child_chunk_cpu": [r.get("chunk_cpu") if r is not None else None for r in results],
            # each child's timeline, ms after the split began: forked (the parent called fork), born,
            # first, ran, built (see _Dispatch.marks), sent (the parent had read its result); and its
            # CPU ms at born, first, ran and built
            "child_ms": [
                _timeline(t_fork, forked_at.get(j), r.get("marks", {}) if r is not None else {}, received_at[j])
                for j, r in enumerate(results)
            ],
            # which process forked each child: -1 the parent, else the child of that slot
            "forked_by": [_forked_by(r, results) for r in results],
        }
        if not self.children:  # (reaped above: else at the launch's end, `end`)
            self._report()

    def end(self) -> None:
        """(parent) At the launch's end (its trace made and sent): the children reaped, the report out."""
        if self.children:
            t = time.perf_counter()
            self._reap()
            if self.rec.last_split is not None:
                self.rec.last_split["parent_visits"] = self.i  # (the loop's visits in the parent: it ends at the split)
                self.rec.last_split["reaped_ms"] = round((time.perf_counter() - self.t_fork) * 1e3, 2)
                self.rec.last_split["reap_s"] = time.perf_counter() - t
            self._report()

    def _reap(self) -> None:
        for pid in self.children:  # (each child waits for those it forked)
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        self.children = []

    def _report(self) -> None:
        report = os.environ.get("TRITON_LENS_PARALLEL_REPORT")
        if report and self.rec.last_split is not None:  # tests and benchmarks: which launches were split, and how
            with open(report, "a") as out:
                out.write(json.dumps(self.rec.last_split) + "\n")

    def _drain(self) -> None:
        """Take every chunk still queued: each child ends after the one it holds."""
        try:
            while os.read(self.queue, 1 << 16):
                pass
        except OSError:
            pass

    def _collect(
        self, fds: list[int], done_before: int, merge: _Merge
    ) -> tuple[list[stream.Meta | None], list[float | None], list[int]]:
        """Each slot's frames as they come (slot j writes to fds[j]), its chunks merged in order, until
        every slot's result is in (the children may still be exiting: `_reap`)."""
        rec, L = self.rec, self.L
        files = {fd: os.fdopen(fd, "rb", buffering=0) for fd in fds}
        slot = {fd: j for j, fd in enumerate(fds)}
        results: list[stream.Meta | None] = [None] * len(fds)
        received_at: list[float | None] = [None] * len(fds)
        ran = [0] * len(fds)
        open_fds = set(files)
        failed = False  # (fewer children than asked for take all the chunks between them)
        next_report = 0.0
        while open_fds:
            sample = self._pending_sample()
            ready, _, _ = select.select(list(open_fds), [], [], 0.5 if sample is None else 0.02)
            if sample is not None:  # a progressive sample forked before the split: its partial now,
                sample._take_if_done()  # not after the whole launch (progressive.py)
            for fd in ready:
                j = slot[fd]
                frame = stream.read_frame(files[fd])
                if frame is None:  # ended without its result: crashed or killed
                    open_fds.discard(fd)
                    failed = True
                    continue
                kind, meta, arrays = frame
                t_read = time.perf_counter()
                if kind == "chunk":
                    lo, hi = self.plan[meta["chunk"]]
                    ran[j] += hi - lo
                    if not failed:
                        self.piped += sum(a.nbytes for a in arrays.values())
                        self.filed += meta["st_at"][1]
                        merge.offer(j, meta, arrays)
                    self.frames_log.append((t_read, time.perf_counter(), j, meta["chunk"]))
                else:
                    results[j] = meta
                    received_at[j] = t_read
                    self.frames_log.append((t_read, t_read, j, -1))
                    open_fds.discard(fd)
                    if meta["status"] != "ok":
                        failed = True
            if failed:
                self._drain()
            now = time.monotonic()
            if rec.on_progress is not None and now >= next_report:
                next_report = now + 0.2
                rec.on_progress(L.kernel, L.index, done_before + sum(ran), self.n)
        for f in files.values():
            f.close()
        return results, received_at, ran

    def _sample_waits(self) -> bool:
        """The launch's progressive sample (progressive.py) has yet to fork: it times programs first."""
        s = self.rec._sampler
        return s is not None and s.L is self.L and s.phase is _progressive.WAIT

    def _pending_sample(self) -> _progressive.Sampler | None:
        """The launch's progressive sample (progressive.py) while its child runs, else None."""
        s = self.rec._sampler
        return s if s is not None and s.L is self.L and s.phase is _progressive.FORKED else None

    def _become_child(self, pipes: list[tuple[int, int]], lo: int, hi: int) -> None:
        """(child) Slot lo, which first forks the children of slots lo+1..hi-1 (`_subtrees`)."""
        self._mark("born")
        _die_with_parent()
        for j, (r, w) in enumerate(pipes):
            os.close(r)
            if not lo <= j < hi:
                os.close(w)
        self.subs = []
        while hi - lo > 1:
            mid = (lo + hi + 1) // 2
            try:
                pid = os.fork()
            except OSError:
                _stand_in(pipes, mid, hi)
                pid = -1
            if pid == 0:  # the child of slots mid..hi-1
                self.marks = {}
                self._mark("born")
                _die_with_parent()
                for j in range(lo, mid):
                    os.close(pipes[j][1])
                lo, self.subs = mid, []
                continue
            if pid > 0:
                self.subs.append(pid)
            for j in range(mid, hi):
                os.close(pipes[j][1])
            hi = mid
        w = pipes[lo][1]
        self.slot = lo
        for j, f in enumerate(self.files):  # (its own slot's file only)
            if j != lo:
                f.close()
        try:  # Ctrl-C ends a child at once (the parent falls back or stops)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
        except ValueError:  # not the main thread (the Triton-Viz API called from a thread)
            pass
        self.phase = CHILD
        _run_as_batch_work()
        self.executor.fn = self.child_call
        self.out = os.fdopen(w, "wb", buffering=1 << 16)
        self.stores = StoreLog()
        self.writes = ChildWrites(self.stores, through=_env_number("TRITON_LENS_PARALLEL_CHILD_WRITES", 0) > 0)
        compat.tap_memory(self.writes.on_store, self.writes.before_load)
        rec = self.rec
        rec.in_child = True
        rec.on_progress = None  # the parent counts the chunks it receives
        rec._sampler = None  # a progressive sample forked before the split is the parent's to take
        L = self.L
        self.s_sent, self.ds_sent = len(L.sites), len(L.dot_sites)
        if not self._take():  # the other children took every chunk
            self._child_exit("ok")

    def _child_exit(self, status: str) -> None:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass
        try:
            out = self.out
            assert out is not None  # (set by _become_child)
            use = resource.getrusage(resource.RUSAGE_SELF)  # a fork starts its counts at zero
            meta: dict[str, Any] = {"status": status, "pid": os.getpid(), "ppid": os.getppid()}
            if status == "ok":  # the parent writes the stores once every child's result is in, not exited
                L = self.L
                spans = [(v.storage_lo, v.storage_hi) for v in L.views if v.storage_known]
                meta["released"] = release_pages(spans)
                self._mark("end")
                meta.update(cpu_s=use.ru_utime + use.ru_stime, minflt=use.ru_minflt, marks=self.marks)
                meta.update(send_s=self.send_s, chunk_cpu=self.chunk_cpu, threads=_threads())
                meta.update(wrote_through=self.writes.flushed_at if self.writes is not None else None)
            stream.write_frame(out, "result", meta)
            out.close()
            if self.subs:  # the children it forked: their parent stays until they end (PDEATHSIG)
                try:  # and names no line of its own in the stack dumps at the time limit
                    faulthandler.unregister(signal.SIGUSR1)
                    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
                except (ValueError, RuntimeError):
                    pass
                for pid in self.subs:
                    try:
                        os.waitpid(pid, 0)
                    except ChildProcessError:
                        pass
        finally:
            # posix._exit, not os._exit: the worker wraps the latter to report a script's own exit
            # (with a stack in the run's crash file), and a child's end is no such thing.
            posix._exit(0)


class _Merge:
    """(parent) The children's chunks merged in program order as they arrive: a chunk waits until every
    chunk before it is in. Site indices are remapped by site key, new ones numbered in the order the
    chunks meet them (the one-process order). Stores are kept and applied only when every chunk is in."""

    def __init__(self, d: _Dispatch, s0: int):
        self.d, self.L = d, d.L
        self.s0, self.d0s = s0, d.d0s
        self.next = 0  # the next chunk to merge
        self.waiting: dict[int, tuple[int, stream.Meta, dict[str, np.ndarray]]] = {}
        self.site_map: dict[int, list[int]] = {}  # a child's site index -> the launch's (past s0)
        self.dot_map: dict[int, list[int]] = {}
        self.by_key: dict[tuple[str | int | None, ...], int] = {}  # a stable site key -> its index
        self.stores: list[ChunkStores] = []
        self.seconds = 0.0
        self.write_seconds = 0.0  # the stores' writing, after the last chunk

    def offer(self, child: int, meta: stream.Meta, arrays: dict[str, np.ndarray]) -> None:
        self.waiting[meta["chunk"]] = (child, meta, arrays)
        t = time.perf_counter()
        while self.next in self.waiting:
            self._merge(*self.waiting.pop(self.next))
            self.next += 1
        self.seconds += time.perf_counter() - t

    def _merge(self, child: int, meta: stream.Meta, a: dict[str, np.ndarray]) -> None:
        L, by_key = self.L, self.by_key
        smap = self.site_map.setdefault(child, [])
        assert meta["s_from"] == self.s0 + len(smap)
        for s in meta["sites"]:
            key = tuple(s["key"])
            idx = by_key.get(key)
            if idx is None:
                idx = by_key[key] = len(L.sites)
                L.sites.append(Site.from_json(s))
            smap.append(idx)
        dmap = self.dot_map.setdefault(child, [])
        for dsite in meta["dot_sites"]:  # tl.dot sites, by source position
            key = tuple(dsite["key"])
            idx = by_key.get(key)
            if idx is None:
                idx = by_key[key] = len(L.dot_sites)
                L.dot_sites.append(DotSite.from_json(dsite))
            dmap.append(idx)
        remap = np.concatenate((np.arange(self.s0, dtype=np.int64), np.asarray(smap, dtype=np.int64)))
        row0 = len(L.ex_site) - meta["r0"]  # the child's row r is the launch's row r + row0
        L.ex_site.extend(remap[a["ex_site"]].tolist())
        for c in ("ex_program", "ex_lanes", "ex_active", "ex_oob", "ex_vhash", "ex_overrun"):
            getattr(L, c).extend(a[c].tolist())
        d0s = self.d0s
        L.tiles.extend(a["tile_row"].astype(np.int64) + len(L.dots), a["tile_start"], a["tile_data"])
        L.dot_dev.extend(map(tuple, a["dot_dev"].reshape(-1, 2).tolist()))
        for site, prog, ra, rb, m, n, k in a["dots"].reshape(-1, 7).tolist():
            L.dots.append(
                (
                    dmap[site - d0s] if site >= d0s else site,
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
        self.stores.append(ChunkStores.of(a, FileBytes(self.d.files[child], meta["st_at"][0])))

    def apply_stores(self) -> None:
        t = time.perf_counter()
        write_stores(self.stores, min(WRITE_THREADS, os.cpu_count() or 1))
        self.stores = []
        self.write_seconds = time.perf_counter() - t
        self.seconds += self.write_seconds


class ParallelRecorder(Recorder):
    """The recorder, with each large enough launch's programs split over `workers` processes."""

    def __init__(
        self,
        *args: Any,
        workers: int = 1,
        min_programs: int | None = None,
        min_seconds: float | None = None,
        probe_seconds: float | None = None,
        early_programs: int | None = None,
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        self.workers = max(1, int(workers))
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
        self.early_programs = int(
            early_programs
            if early_programs is not None
            else _env_number("TRITON_LENS_PARALLEL_EARLY_PROGRAMS", EARLY_PROGRAMS)
        )
        self.atomic_kernels: set[types.CodeType] = set()
        self.in_child = False
        self.last_split: dict[str, Any] | None = None  # the last split's report (JSON)
        self._executors: list[Any] = []  # triton's grid executors of the launches in progress
        self._dispatch: list[_Dispatch | None] = []

    def launch_begin(self, executor: Any, fn: Any) -> _Launch:
        token = super().launch_begin(executor, fn)
        self._executors.append(executor)
        self._dispatch.append(None)
        return token

    def grid(self, nx: int, ny: int, nz: int) -> None:
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

    def program(self, x: int, y: int, z: int) -> tuple[int, int, int] | None:
        instead = super().program(x, y, z)  # the progressive sample first: it forks before a split
        d = self._dispatch[-1] if self._dispatch else None
        if d is None or self.in_sample_child:
            return instead
        if not self.in_child:
            d.before_program()  # (may fork: a child returns here)
        if d.phase is CHILD:
            return d.child_coords()
        if d.phase is SPLIT_DONE:  # every program still to come ran in a child: the loop ends here
            return compat.END_LOOP
        return instead

    def launch_end(self, token: object, error: BaseException | None) -> None:
        if self._executors:
            executor = self._executors.pop()
            d = self._dispatch.pop()
            if d is not None:
                executor.fn = d.fn
            try:
                super().launch_end(token, error)
            finally:
                if d is not None:
                    d.end()
            return
        super().launch_end(token, error)

    def access(
        self,
        kind: str,
        op: str,
        builder: Builder,
        ptrs: Handle,
        mask: np.ndarray | None,
        value: Handle | None = None,
        order: Order | None = None,
    ) -> np.ndarray | None:
        if self.in_child and (kind == "atomic" or (self._ctx and self._ctx[-1].kind == "atomic")):
            raise _AtomicInChild()
        return super().access(kind, op, builder, ptrs, mask, value=value, order=order)
