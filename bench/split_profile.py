"""Where a split launch's time goes (issue 23): one launch traced in one process, then split over N
workers (trace_engine/recording/parallel.py), with each child's timeline from the split report.

Per workload: the one-process launch's CPU ms per program; then the split's phases, the median and the
slowest child: fork (the parent's own forks), born (the child runs; a child forked by another child
has no "forked"), skip (born -> its first own program; before the chunk queue: the grid loop's visits
of the programs before its chunk), run
(its own programs and their chunks' frames, wall and CPU per program, and CPU per program over the
one-process run's), end (its last chunk sent -> the parent has read its end), then the parent's merge.

--warmup: N forked copies of the whole launch, each running it twice under the recorder (one process
each, as bench/cores_ceiling.py --traced): CPU per program of the copy's first and second launch, and
of the parent's own before the fork. A fresh fork that is slower the first time only pays a start-up
(copy-on-write, a VM's page faults); one slower both times pays the other copies' company.

--profile: cProfile of the parent's one-process launch, of one child of the split (its own programs) and
of the parent during the split (reading and merging the children's chunks, writing their stores), the top
functions by own time.

--child-policy: the children's scheduling (parallel.py's SCHED_BATCH, or normal, idle, batch+nice1, +nice2, +nice5);
+pin (batch+pin, idle+pin, normal+pin): each child on a core of its own, by its slot (sched_setaffinity).

--child-writes always: the children write each store to their own copy of memory as it comes, as before
child_writes.py (a copy-on-write fault for each page they store to first), against the default (logged,
and written only once a load could read it).

--reps N: N splits of each launch after its one-process run; --dump FILE: each split's whole report (the
children's timelines, the parent's frames: `frames_ms`) and the parent's own times, a JSON line each.

    python bench/split_profile.py [--scale S] [--workers N] [--only NAME,...] [--warmup] [--profile]
                                  [--reps N] [--dump FILE] [--child-policy P]
"""

from __future__ import annotations

import argparse
import cProfile
import glob
import io
import json
import os
import platform
import pstats
import statistics
import sys
import tempfile
import time
from datetime import date

os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from triton_lens.trace_engine.process import process_tree  # noqa: E402  (imports no torch)

# As in the worker's environment (runner._worker_env), before torch's first allocation reads it: the
# script's large tensors on huge pages, so a split's forks are cheap. (An older checkout has none.)
for _name, _value in getattr(process_tree, "FORK_FRIENDLY_ENV", {}).items():
    os.environ.setdefault(_name, _value)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import triton  # noqa: E402
from parallel_kernels import bare_interpreter_fixes, workloads  # noqa: E402

from triton_lens.trace_engine.recording import parallel, stream  # noqa: E402

# As the zygote does once after its imports (process_tree.collapse_heap): the imports' heap on huge pages, so
# a split's forks copy fewer page-table entries. TRITON_LENS_HUGE_HEAP=0: not (A/B runs; an older checkout has none).
HUGE_HEAP_MB = getattr(process_tree, "collapse_heap", lambda: 0)() >> 20
from triton_lens.trace_engine.recording.parallel import ParallelRecorder  # noqa: E402

_SINK = {"s": 0.0}
_DUMP: dict[str, str] = {"path": ""}  # --dump


def _sink(trace) -> None:
    t = time.perf_counter()
    meta, arrays = stream.launch_to_frame(trace)
    stream.write_frame(io.BytesIO(), "launch", meta, arrays)
    _SINK["s"] = time.perf_counter() - t


class _Timed(ParallelRecorder):
    """The recorder, with each program's start in CPU seconds of this process, and the wall clock at the
    launch's start, its first program and its last."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.starts: list[float] = []
        self.at: dict[str, float] = {}

    def launch_begin(self, executor, fn):
        self.at.setdefault("begin", time.perf_counter())
        return super().launch_begin(executor, fn)

    def program(self, x, y, z):
        self.starts.append(time.process_time())
        now = time.perf_counter()
        self.at.setdefault("first", now)
        self.at["last"] = now
        return super().program(x, y, z)

    def launch_end(self, token, error):
        self.at["end"] = time.perf_counter()
        try:
            return super().launch_end(token, error)
        finally:
            self.at["done"] = time.perf_counter()


def _traced(launch, workers: int = 1):
    rec = _Timed(on_launch=_sink, workers=workers)
    w0, c0 = time.perf_counter(), time.process_time()
    with rec:
        launch()
    return rec, time.perf_counter() - w0, time.process_time() - c0


def _per_program_ms(starts: list[float]) -> tuple[float, float, float]:
    """CPU ms per program: all, the first quarter, the last quarter."""
    d = [b - a for a, b in zip(starts, starts[1:])]
    q = max(1, len(d) // 4)
    return statistics.mean(d) * 1e3, statistics.mean(d[:q]) * 1e3, statistics.mean(d[-q:]) * 1e3


def _med_max(values) -> str:
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    return f"{statistics.median(values):7.1f} {max(values):7.1f}"


def split_rows(name: str, launch, counts: list[int], profile: bool, reps: int = 1) -> list[str]:
    rec1, wall1, cpu1 = _traced(launch, 1)
    ms1 = _per_program_ms(rec1.starts)
    n = rec1.launches[-1].n_programs
    at = rec1.at
    before = at["first"] - at["begin"]
    after = wall1 - before - (at["last"] - at["first"]) * n / max(1, n - 1)  # (the rest of the wall time)
    serial = before + after
    bound = wall1 / (serial + (wall1 - serial) / max(counts)) / max(counts)
    out = [
        f"{name}: {n} programs; one process {wall1:.2f} s wall, {cpu1:.2f} s CPU, "
        f"{ms1[0]:.3f} CPU ms a program (first quarter {ms1[1]:.3f}, last {ms1[2]:.3f}); outside the programs "
        f"{before * 1e3:.0f} ms before the first and {after * 1e3:.0f} ms after the last (the sink {_SINK['s'] * 1e3:.0f} ms): "
        f"at most {bound:.0%} efficiency at {max(counts)} workers with those serial"
    ]
    for workers in counts:
        for _ in range(reps):
            out += _split_rows(launch, workers, profile, wall1, ms1[0])
    return out


def _chunk_ratio(s: dict, ms1: float, first: bool) -> list[float]:
    """Per child: the CPU per program of its first chunk (or of all its later ones) over the one process's
    (a fresh fork's first programs pay its start: copy-on-write faults, cold caches)."""
    out = []
    for chunks in s.get("child_chunk_cpu") or []:
        part = (chunks or [])[:1] if first else (chunks or [])[1:]
        programs = sum(c[0] for c in part)
        if programs:
            out.append(sum(c[1] for c in part) * 1e3 / programs / ms1)
    return out


def _chunk_faults(s: dict, first: bool) -> list[float]:
    """Per child: the page faults a program of its first chunk (or of its later ones) met."""
    out = []
    for chunks in s.get("child_chunk_cpu") or []:
        part = (chunks or [])[:1] if first else (chunks or [])[1:]
        programs = sum(c[0] for c in part)
        if programs and all(len(c) > 2 for c in part):
            out.append(sum(c[2] for c in part) / programs)
    return out


def _med_slash_max(values: list[float]) -> str:
    return f"{statistics.median(values):.1f}/{max(values):.1f}" if values else "-"


def _lag_line(s: dict) -> str:
    """How late the parent read each child's last chunk (from the child's mark: its last frame built and
    written; the result's lag is the row "end (released -> result read)"), and what the parent was doing then:
    the ms it spent merging, and the frames it read, in the 20 ms before its last read. A lag with little
    merging is the parent waiting for a core; a lag with the merges back to back is its own backlog."""
    frames = s.get("frames_ms") or []
    last_chunk = []
    for j, c in enumerate(s["child_ms"]):
        chunks = [f[0] for f in frames if f[2] == j and f[3] >= 0]
        if chunks and "built" in c["at"]:
            last_chunk.append(max(chunks) - c["at"]["built"])
    if not frames or not last_chunk:
        return "-"
    t_last = max(f[0] for f in frames)
    window = [f for f in frames if f[0] >= t_last - 20]
    return (
        f"last chunk read after it was written {_med_slash_max(last_chunk)} ms (median/max); "
        f"in the 20 ms before its last read "
        f"it read {len(window)} frames and merged for {sum(f[1] - f[0] for f in window):.1f} ms"
    )


def _parent_line(s: dict, at: dict) -> str:
    """The parent's end of the split: the last chunk it read and merged, the results, the stores' write,
    the rest of its loop, the launch's end (its trace made and sent), the children reaped."""
    frames = s.get("frames_ms") or []
    chunks = [f for f in frames if f[3] >= 0]
    results = [f[0] for f in frames if f[3] < 0]
    split_at = s.get("split_at")
    if not chunks or not results or split_at is None:
        return "-"
    wrote = (s["fork_s"] + s["wait_s"] + s["merge_s"]) * 1e3
    return (
        f"last chunk read {max(f[0] for f in chunks):.1f}, merged {max(f[1] for f in chunks):.1f}; "
        f"results read {min(results):.1f}-{max(results):.1f}; stores written by {wrote:.1f} "
        f"({s.get('alive_at_write', '-')} of its children still exiting); its loop done {(at['last'] - split_at) * 1e3:.1f}; "
        f"launch end {(at['end'] - split_at) * 1e3:.1f}-{(at['done'] - split_at) * 1e3:.1f}"
        f" (children reaped by {s.get('reaped_ms', float('nan')):.1f})"
    )


def _split_rows(launch, workers: int, profile: bool, wall1: float, ms1: float) -> list[str]:
    out = []
    prof_path = None
    parent = None
    if profile:
        prof_path = tempfile.mktemp(suffix=".prof")
        parent = _install_child_profiler(prof_path, workers)
    rec, wall, cpu = _traced(launch, workers)
    if profile:
        _remove_child_profiler()
    s = rec.last_split
    if _DUMP["path"] and s:  # the whole report, and the parent's own times (perf_counter s), one JSON line
        with open(_DUMP["path"], "a") as f:
            f.write(json.dumps(dict(s, parent_at=rec.at, one_process_wall_s=wall1, wall_s=wall)) + "\n")
    if not s or not s.get("merged"):
        out.append(f"  w={workers}: not split ({s})")
        return out
    tl = s["child_ms"]
    at = [c["at"] for c in tl]
    cp = [c["cpu"] for c in tl]
    chunks = s["chunks"]

    def col(f):
        return [f(a, c, k) for a, c, k in zip(at, cp, chunks)]

    run_wall = col(lambda a, c, k: (a["ran"] - a["first"]) / k)
    run_cpu = col(lambda a, c, k: (c["ran"] - c["first"]) / k)
    out += [
        f"  w={workers}: {wall:.3f} s wall ({wall1 / wall / workers:.0%} efficiency), parent CPU {cpu:.2f} s; "
        f"the parent's other threads' CPU during the split {s.get('parent_threads_cpu_s', 0):.3f} s; "
        f"stores: {s.get('filed_bytes', 0) / 1e6:.1f} MB through files, frames {s.get('piped_bytes', 0) / 1e6:.1f} MB piped; "
        f"probe {s['probe']} programs; fork of {len(tl)}: {s['fork_s'] * 1e3:.1f} ms; wait {s['wait_s'] * 1e3:.1f} ms; "
        f"merge {s['merge_s'] * 1e3:.1f} ms after the last child ({s.get('merge_total_s', 0) * 1e3:.1f} in all; "
        f"writing the stores {s.get('write_s', 0) * 1e3:.1f}); "
        f"{s.get('n_chunks', len(chunks))} chunks; programs a child {min(chunks)}-{max(chunks)}",
        f"  {'per child (ms)':34} {'median':>7} {'max':>7}",
        f"  {'forked by the parent (after start)':34} {_med_max([a.get('forked') for a in at])}",
        f"  {'born (after split start)':34} {_med_max([a['born'] for a in at])}",
        f"  {'skip (born -> first own program)':34} {_med_max([a['first'] - a['born'] for a in at])}",
        f"  {'run (own programs)':34} {_med_max([a['ran'] - a['first'] for a in at])}",
        f"  {'run wall ms a program':34} {_med_max(run_wall)}",
        f"  {'run CPU ms a program':34} {_med_max(run_cpu)}",
        f"  {'run CPU a program / one process':34} {_med_max([r / ms1 for r in run_cpu])}",
        f"  {'CPU before first own program':34} {_med_max([c['first'] for c in cp])}",
        f"  {'first chunk CPU a program / one':34} {_med_max(_chunk_ratio(s, ms1, first=True))}",
        f"  {'later chunks CPU a program / one':34} {_med_max(_chunk_ratio(s, ms1, first=False))}",
        f"  {'first chunk page faults a program':34} {_med_max(_chunk_faults(s, first=True))}",
        f"  {'later chunks page faults a program':34} {_med_max(_chunk_faults(s, first=False))}",
        f"  {'frames (make and write chunks)':34} {_med_max([x * 1e3 for x in s.get('child_send_s') or [] if x is not None])}",
        f"  {'page faults (thousands)':34} {_med_max([x / 1e3 for x in s.get('child_minflt') or [] if x is not None])}",
        f"  {'threads at its end':34} {_med_max(s.get('child_threads') or [])}",
        f"  {'release (ran -> pages released)':34} {_med_max([a['end'] - a['ran'] for a in at if 'end' in a])}",
        f"  {'end (released -> result read)':34} {_med_max([a['sent'] - a['end'] for a in at if 'end' in a])}",
        f"  {'end (last chunk sent -> read)':34} {_med_max([a['sent'] - a['ran'] for a in at])}",
        f"  {'ended (sent, after split start)':34} {_med_max([a['sent'] for a in at])}",
        f"  {'first own program (after start)':34} {_med_max([a['first'] for a in at])}",
    ]
    out.append("  the parent (ms after the split began): " + _parent_line(s, rec.at))
    out.append("  the parent's lag: " + _lag_line(s))
    if profile and prof_path:
        out.append("  profile, one process (top 12 by own time):")
        out += ["    " + line for line in _top(lambda: _traced(launch, 1), 12)]
        dumps = sorted(glob.glob(prof_path + ".*"), key=os.path.getsize)
        if dumps:
            out.append(f"  profile, a child of w={workers} (its own programs, top 12 by own time):")
            out += ["    " + line for line in _stats_lines(pstats.Stats(dumps[-1]), 12)]
        for f in dumps:
            os.unlink(f)
    if parent is not None:
        out.append(f"  profile, the parent during the split of w={workers} (top 12 by own time):")
        out += ["    " + line for line in _stats_lines(pstats.Stats(parent), 12)]
    return out


_orig = {}


def _policy(name: str):
    """(--child-policy) The split children's scheduling, in place of parallel.py's SCHED_BATCH: whether the
    parent waits for a core to read their frames (16 children on 16 cores, the parent the 17th)."""
    batch = parallel._run_as_batch_work

    def set_policy() -> None:
        if name.endswith("+pin"):  # each child on a core of its own (its slot's), the parent where it may
            slot = sys._getframe(1).f_locals["self"].slot  # (called by _Dispatch._become_child, slot set)
            cores = sorted(os.sched_getaffinity(0))
            os.sched_setaffinity(0, {cores[slot % len(cores)]})
            name_ = name.removesuffix("+pin")
        else:
            name_ = name
        if name_ == "idle":  # the parent (a normal task) preempts them whenever it wakes
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        elif name_.startswith("batch+nice"):
            batch()
            os.nice(int(name_.removeprefix("batch+nice")))
        elif name_ == "batch":
            batch()

    return set_policy


_POLICIES = {
    n: _policy(n)
    for n in (
        "batch",
        "normal",
        "idle",
        "batch+nice1",
        "batch+nice2",
        "batch+nice5",
        "batch+pin",
        "idle+pin",
        "normal+pin",
    )
}


def _install_child_profiler(path: str, workers: int) -> cProfile.Profile:
    """Profile every child of the next split from its first own program to its end (path.PID each); the
    profile returned is the parent's while it collects and merges the chunks and writes the stores."""
    D = parallel._Dispatch
    _orig["call"], _orig["exit"] = D.child_call, D._child_exit
    _orig["collect"], _orig["apply"] = D._collect, parallel._Merge.apply_stores
    parent = cProfile.Profile()

    def profiled(orig):
        def call(self, *a):
            parent.enable()
            try:
                return orig(self, *a)
            finally:
                parent.disable()

        return call

    D._collect, parallel._Merge.apply_stores = profiled(D._collect), profiled(parallel._Merge.apply_stores)

    def child_call(self, **args):
        if not hasattr(self, "_prof"):
            self._prof = cProfile.Profile()
            self._prof.enable()
        return _orig["call"](self, **args)

    def _child_exit(self, status):
        prof = getattr(self, "_prof", None)
        if prof is not None:
            prof.disable()
            prof.dump_stats(f"{path}.{os.getpid()}")
        return _orig["exit"](self, status)

    D.child_call, D._child_exit = child_call, _child_exit
    return parent


def _remove_child_profiler() -> None:
    D = parallel._Dispatch
    D.child_call, D._child_exit = _orig["call"], _orig["exit"]
    D._collect, parallel._Merge.apply_stores = _orig["collect"], _orig["apply"]


def _stats_lines(st: pstats.Stats, k: int) -> list[str]:
    rows = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[:k]  # type: ignore[attr-defined]
    total = sum(v[2] for v in st.stats.values()) or 1.0  # type: ignore[attr-defined]
    return [
        f"{v[2]:7.3f} s {v[2] / total:4.0%} {v[1]:8d} calls  {os.path.basename(f)}:{line} {fn}"
        for (f, line, fn), v in rows
    ]


def _top(fn, k: int) -> list[str]:
    prof = cProfile.Profile()
    prof.enable()
    fn()
    prof.disable()
    return _stats_lines(pstats.Stats(prof), k)


def warmup_rows(name: str, launch, copies: int) -> list[str]:
    """CPU ms per program of the first and second traced launch of each of `copies` forked copies."""
    rec, _, _ = _traced(launch, 1)
    parent = _per_program_ms(rec.starts)[0]
    go_r, go_w = os.pipe()
    kids = []
    for _ in range(copies):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            # The parent's torch ran parallel regions (the workload's tensors): a forked copy's first one
            # would wait forever on OpenMP threads it does not have, so its torch runs on one thread.
            torch.set_num_threads(1)
            os.close(go_w)
            os.read(go_r, 1)
            res = []
            for _ in range(2):
                rec, wall, _ = _traced(launch, 1)
                res.append((_per_program_ms(rec.starts)[0], wall))
            os.write(w, json.dumps(res).encode())
            os._exit(0)
        os.close(w)
        kids.append((pid, r))
    os.close(go_r)
    os.write(go_w, b"x" * copies)
    res = []
    for pid, r in kids:
        res.append(json.loads(os.read(r, 1000).decode()))
        os.close(r)
        os.waitpid(pid, 0)
    os.close(go_w)
    first = statistics.mean(x[0][0] for x in res)
    second = statistics.mean(x[1][0] for x in res)
    return [
        f"{name}: {copies} forked copies, CPU ms a program: parent before the fork {parent:.3f}; "
        f"copies' first launch {first:.3f} ({first / parent:.2f}x), second {second:.3f} ({second / parent:.2f}x)"
    ]


def _machine() -> str:
    def read(path: str) -> str:
        try:
            with open(path) as f:
                return f.read().strip()
        except OSError:
            return "?"

    return (
        f"{platform.node()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, kernel {platform.release()}, "
        f"THP {read('/sys/kernel/mm/transparent_hugepage/enabled')}, python {platform.python_version()}, "
        f"triton {triton.__version__}, torch {torch.__version__}, numpy {np.__version__}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=0.25)
    ap.add_argument("--workers", default="16")
    ap.add_argument("--only", default="vector add,softmax,layer norm")
    ap.add_argument("--warmup", action="store_true")
    ap.add_argument("--warmup-scale", type=float, default=0.02)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--reps", type=int, default=1, help="splits of each launch (one one-process run)")
    ap.add_argument("--dump", default="", help="append each split's whole report to this file (JSON lines)")
    ap.add_argument("--child-policy", choices=sorted(_POLICIES), default="batch")
    ap.add_argument(
        "--child-writes",
        choices=["logged", "always"],
        default="logged",
        help="logged (the default): the children write their stores to their own memory only once a load "
        "could read them (child_writes.py); always: every store as it comes (a copy-on-write fault a page)",
    )
    args = ap.parse_args()
    _DUMP["path"] = args.dump
    parallel._run_as_batch_work = _POLICIES[args.child_policy]
    if args.child_writes == "always":
        os.environ["TRITON_LENS_PARALLEL_CHILD_WRITES"] = "1"  # (read by each child, at its fork)
    fixes = bare_interpreter_fixes()
    print(
        f"# bench/split_profile.py {' '.join(sys.argv[1:])}  ({date.today()}, {_machine()}"
        f"{', bare interpreter with: ' + fixes if fixes else ''}, imports' heap on huge pages: {HUGE_HEAP_MB} MB)",
        flush=True,
    )
    names = [n for n in args.only.split(",") if n]
    for name, (launch, _outputs, _check) in workloads(args.scale).items():
        if not any(n in name for n in names):
            continue
        launch()  # the interpreter rewrites the kernel once
        _traced(launch, 1)  # and the recorder's first launch of it
        counts = [int(w) for w in args.workers.split(",")]
        print("\n".join(split_rows(name, launch, counts, args.profile, args.reps)), flush=True)
    if args.warmup:
        for name, (launch, _outputs, _check) in workloads(args.warmup_scale).items():
            if not any(n in name for n in names):
                continue
            launch()
            print("\n".join(warmup_rows(name, launch, int(args.workers.split(",")[-1]))), flush=True)


if __name__ == "__main__":
    main()
