"""The worker and the children it forks (trace_engine/recording/parallel.py), as the runner's limits see them.

A forked child shares the worker's pages until it writes them, so adding up resident sizes would
count the worker's torch and triton once per child: a child counts with the pages it has of its own
(Private_Clean + Private_Dirty of /proc/PID/smaps_rollup) on top of the worker's resident size, and so do
the in-memory files the worker holds open (a split launch's stored bytes wait in them).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from .supervisor import descendants

__all__ = [
    "FORK_FRIENDLY_ENV",
    "collapse_heap",
    "descendants",
    "footprint_bytes",
    "memory_file_bytes",
    "private_bytes",
    "resident_bytes",
]

# The worker's environment, where the user has not set these (runner._worker_env). torch backs CPU tensors
# of 2 MB and more with transparent huge pages (c10's alloc_cpu: 2 MB alignment and madvise(MADV_HUGEPAGE),
# read once, at torch's first allocation). A fork copies one page-table entry per 2 MB of them instead of
# 512, and a split launch forks up to 16 children from a process holding the script's tensors: a fork of a
# worker with 490 MB of tensors took 10 ms, 3.5 ms with them on huge pages (2-core VM; the parent's forks
# are the split's serial start). A child's store into such a tensor still copies one 4 KB page, not 2 MB
# (since Linux 5.8 a write to a shared huge page splits its mapping; measured: 4 faults a 16 KB store), but
# those copies cost a little more: a layer norm child's CPU 2.52 -> 2.60 s (2 workers, 410x8192; its
# efficiency within the reps' spread, 84-92%), where the forks' saving is what counts at 16 workers
# (the device: 41-68 -> 21-32 ms a launch). Where the kernel's THP setting is "never" nothing changes.
FORK_FRIENDLY_ENV = {"THP_MEM_ALLOC_ENABLE": "1"}

_HUGE = 2 << 20
_MADV_COLLAPSE = 25  # Linux 6.1+ (older kernels: EINVAL, and nothing changes)
_STEP = 4 * _HUGE  # (collapsing 8 MB took 5-20 ms on a 2-core VM)


def collapse_heap(*, where_splits_fork_3: bool = False, stop: Callable[[], bool] | None = None) -> int:
    """Back the process's private anonymous memory with huge pages now (madvise MADV_COLLAPSE), where at
    least half of a region is resident; returns the bytes now on huge pages (0: none, or not Linux).
    (A region is a mapping as the kernel keeps it: one it merged with a large, mostly unresident neighbour
    is left as it is.)

    Why: a split launch's serial start is its forks, and a fork copies one page-table entry per 4 KB page
    of the heap (importing torch and triton leaves 150 MB of it), one per 2 MB huge page. A worker's fork
    took 3.1-3.5 ms, 1.9 ms when forked from a zygote so collapsed, 1.4-1.5 ms once it collapsed its own
    heap too (2-core VM, a worker that had run a softmax of 4096x4096); on the 16-core device machine the
    parent's forks of 16 children took 14-26 ms, not 22-46 (bench/results/parallel_2026-12-07d_h100_
    16core_huge_heap.txt).

    Who: the zygote, once idle after its imports (zygote.py); a spare worker, while it waits for its job
    (worker.serve): each 2 MB of the zygote's heap a worker writes to is split back to 4 KB pages in its own
    page table (since Linux 5.8 a write to a shared huge page copies 4 KB), and a spare, which has made the
    warm-up launch, kept none of it on a 2-core VM; 186 MB after its own collapse. bench/parallel.py and
    split_profile.py, after their imports.

    Cost: 50-300 ms of a core (2-core VM: it copies the heap into fresh pages, which a VM's host backs as
    they are first touched), and the copies are the process's own: a spare's private memory went from 18 to
    188 MB (its resident size, which the memory limit counts, stays 240 MB). With
    `where_splits_fork_3` (the zygote's and a spare's) it is done only where a split forks 3 children or more
    by default (`default_workers`: 4 cores and up): on 2 cores a split's 2 forks would save 3 ms. Nothing where
    THP is "never"; TRITON_LENS_HUGE_HEAP=0 never, =1 whatever the cores (A/B runs of the benchmarks, tests).

    `stop` (a spare worker's: its job has come) is asked before each 8 MB step; it ends the collapse there."""
    setting = os.environ.get("TRITON_LENS_HUGE_HEAP", "")
    if setting == "0" or (setting != "1" and where_splits_fork_3 and default_workers() < 3):
        return 0
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            if "[never]" in f.read():
                return 0
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        regions = _resident_anonymous_regions()
    except (OSError, AttributeError):
        return 0
    collapsed = 0
    for lo, hi in regions:
        for a in range(lo, hi, _STEP):
            if stop is not None and stop():
                return collapsed
            b = min(hi, a + _STEP)
            if libc.madvise(a, b - a, _MADV_COLLAPSE) == 0:
                collapsed += b - a
            elif ctypes.get_errno() == 22:  # EINVAL: not supported here (else: no huge page free, for now)
                return collapsed
    return collapsed


def _resident_anonymous_regions() -> list[tuple[int, int]]:
    """The 2 MB-aligned spans of this process's private, writable, anonymous mappings (the heap's among
    them, not the stack) that are at least half resident."""
    out = []
    span: tuple[int, int] | None = None
    anonymous = False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split(maxsplit=6)
            if "-" in head[0] and len(head) >= 5:  # a mapping's first line
                lo, hi = (int(x, 16) for x in head[0].split("-"))
                name = head[5].strip() if len(head) > 5 else ""
                anonymous = head[1].startswith("rw") and head[1][3] == "p" and name in ("", "[heap]")
                a, b = -(-lo // _HUGE) * _HUGE, hi // _HUGE * _HUGE
                span = (a, b) if anonymous and b > a else None
            elif span is not None and head[0] == "Rss:":
                if int(head[1]) * 1024 * 2 >= span[1] - span[0]:
                    out.append(span)
                span = None
    return out


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes(pid: int) -> int:
    """Resident memory of one process. (A limit on address space would stop CUDA from starting.)"""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def footprint_bytes(root: int) -> int:
    """The memory the limit counts for the run below root (the supervisor, which is not counted):
    the worker's resident size, plus the pages each other descendant has of its own.

    The worker is the supervisor's first child: the kernel lists a process's children in the order
    they became its children, and a process reparented to the supervisor (a subreaper) joins the
    list after the worker. Each descendant is read once, so a process that exits in between counts 0."""
    below = descendants(root)
    if not below:
        return 0
    worker, others = below[0], below[1:]
    return resident_bytes(worker) + memory_file_bytes(worker) + sum(private_bytes(p) for p in others)


def memory_file_bytes(pid: int) -> int:
    """The pages of the in-memory files (memfd) that pid holds open: memory that no resident size shows
    while no process maps it. A split launch's children leave their stored bytes in such files, which the
    worker holds until it writes them (trace_engine/recording/store_log.py). (A file the process also maps
    counts twice: the limit errs on the side of the machine.)"""
    fds = f"/proc/{pid}/fd"
    seen: set[tuple[int, int]] = set()
    total = 0
    try:
        names = os.listdir(fds)
    except OSError:
        return 0
    for name in names:
        path = f"{fds}/{name}"
        try:
            if not os.readlink(path).startswith("/memfd:"):
                continue
            st = os.stat(path)
        except OSError:  # closed in between
            continue
        if (st.st_dev, st.st_ino) not in seen:
            seen.add((st.st_dev, st.st_ino))
            total += st.st_blocks * 512
    return total


def private_bytes(pid: int) -> int:
    """Pages of pid that no other process maps (Private_Clean + Private_Dirty), its resident size
    where smaps_rollup cannot be read (Linux < 4.14), 0 for a process that is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            text = f.read()
    except OSError:
        return resident_bytes(pid)
    total = 0
    for line in text.splitlines():
        if line.startswith((b"Private_Clean:", b"Private_Dirty:")):
            try:
                total += int(line.split()[1]) * 1024
            except (IndexError, ValueError):
                pass
    return total


def default_workers() -> int:
    """Processes a launch's programs are split over by default: the machine's cores, at most 16,
    less one for the editor (and at least one)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, 16) - 1)


def resolve_workers(n: int | str | None) -> int:
    """A workers setting as a count: 0 (or None) means the default."""
    try:
        count = int(n) if n is not None else 0
    except (TypeError, ValueError):
        count = 0
    return default_workers() if count <= 0 else count
