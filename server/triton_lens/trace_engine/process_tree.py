"""The worker and the children it forks (trace_engine/parallel.py), as the runner's limits see them.

A forked child shares the worker's pages until it writes them, so adding up resident sizes would
count the worker's torch and triton once per child: a child counts with the pages it has of its own
(Private_Clean + Private_Dirty of /proc/PID/smaps_rollup) on top of the worker's resident size.
"""

from __future__ import annotations

import os

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes(pid: int) -> int:
    """Resident memory of one process. (A limit on address space would stop CUDA from starting.)"""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def descendants(pid: int) -> list[int]:
    """Children, grandchildren, ... of pid (Linux /proc; empty elsewhere)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/task/{p}/children", "rb") as f:
                kids = [int(x) for x in f.read().split()]
        except (OSError, ValueError):
            if p == pid:  # a kernel without CONFIG_PROC_CHILDREN: the worker's process group instead
                return _group_members(pid)
            continue
        out.extend(kids)
        todo.extend(kids)
    return out


def _group_members(pgid: int) -> list[int]:
    """Processes of the process group pgid other than its leader (the runner starts the worker as one)."""
    out: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if not name.isdigit() or int(name) == pgid:
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 3 and int(fields[3]) == pgid:  # fields after "(comm)": state ppid pgrp ...
            out.append(int(name))
    return out


def private_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            text = f.read()
    except OSError:
        return resident_bytes(pid)
    total = 0
    for line in text.splitlines():
        if line.startswith((b"Private_Clean:", b"Private_Dirty:")):
            total += int(line.split()[1]) * 1024
    return total


def signal_children_first(pid: int, sig: int) -> None:
    """Send sig to the worker's descendants, then to the worker: with SIGUSR1 (faulthandler) the
    children's stacks, which are in the kernel, come first in the dump."""
    for c in descendants(pid):
        try:
            os.kill(c, sig)
        except OSError:
            pass
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def default_workers() -> int:
    """Processes a launch's programs are split over by default: the machine's cores, at most 16,
    less one for the editor (and at least one)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, 16) - 1)


def resolve_workers(n) -> int:
    """A workers setting as a count: 0 (or None) means the default."""
    try:
        n = int(n)
    except (TypeError, ValueError):
        n = 0
    return default_workers() if n <= 0 else n
