"""The worker and the children it forks (trace_engine/recording/parallel.py), as the runner's limits see them.

A forked child shares the worker's pages until it writes them, so adding up resident sizes would
count the worker's torch and triton once per child: a child counts with the pages it has of its own
(Private_Clean + Private_Dirty of /proc/PID/smaps_rollup) on top of the worker's resident size, and so do
the in-memory files the worker holds open (a split launch's stored bytes wait in them).
"""

from __future__ import annotations

import os

from .supervisor import descendants

__all__ = [
    "FORK_FRIENDLY_ENV",
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
