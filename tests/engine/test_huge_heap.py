"""process_tree.collapse_heap: the process's resident anonymous memory onto huge pages (MADV_COLLAPSE), so
that a fork copies one page-table entry per 2 MB of it, and the zygote doing so once it is idle."""

from __future__ import annotations

import ctypes
import mmap
import os
import time

import pytest
from markers import CORPUS

from triton_lens.trace_engine.process import process_tree, runner, zygote_client
from triton_lens.trace_engine.process.runner import RunRequest, run

_MB = 1 << 20
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


class _Isolated:
    """size bytes of private anonymous memory, 2 MB-aligned, between two inaccessible guards: a mapping of
    its own. (A plain mmap may be merged with a neighbouring mapping, whose residency then decides: in a
    long-lived test process, a mostly unresident one.)"""

    def __init__(self, size: int):
        self.total = size + 6 * _MB  # (PROT_NONE: 0) a guard of 2 MB at least on each side, and 2 MB to align
        base = _libc.mmap(None, self.total, 0, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
        assert base not in (None, ctypes.c_void_p(-1).value), ctypes.get_errno()
        self.base = base
        self.lo = -(-(base + 2 * _MB) // (2 * _MB)) * (2 * _MB)
        self.hi = self.lo + size
        assert _libc.mprotect(self.lo, size, mmap.PROT_READ | mmap.PROT_WRITE) == 0, ctypes.get_errno()

    def fill(self, byte: int, size: int | None = None) -> None:
        ctypes.memset(self.lo, byte, self.hi - self.lo if size is None else size)

    def read(self, at: int, n: int) -> bytes:
        return ctypes.string_at(self.lo + at, n)

    def close(self) -> None:
        _libc.munmap(self.base, self.total)


def _collapse_works() -> bool:
    """This kernel (Linux 6.1+, THP not "never") collapses a dense anonymous region on request."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            if "[never]" in f.read():
                return False
    except OSError:
        return False
    m = _Isolated(2 * _MB)
    m.fill(1)
    ok = _libc.madvise(m.lo, 2 * _MB, 25) == 0
    m.close()
    return ok


pytestmark = pytest.mark.skipif(
    not (os.path.exists("/proc/self/smaps") and _collapse_works()), reason="needs Linux 6.1+ with THP"
)


def _huge_kb(pid: int | str = "self") -> int:
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            if line.startswith("AnonHugePages:"):
                return int(line.split()[1])
    raise AssertionError("no AnonHugePages line")


def _mapping_huge_kb(lo: int, hi: int) -> int:
    """AnonHugePages of the part of [lo, hi) on huge pages: of each mapping that meets it (a neighbour the
    kernel merged it with included), as /proc/self/smaps counts them."""
    total, meets = 0, False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()
            if "-" in head[0] and len(head) >= 5:
                a, b = (int(x, 16) for x in head[0].split("-"))
                meets = a < hi and b > lo
            elif meets and head[0] == "AnonHugePages:":
                total += int(head[1])
    return total


def test_a_dense_region_is_asked_and_becomes_huge(monkeypatch):
    monkeypatch.delenv("TRITON_LENS_HUGE_HEAP", raising=False)
    dense = _Isolated(32 * _MB)
    dense.fill(ord("d"))  # every page resident (4 KB pages: not madvised)
    regions = process_tree._resident_anonymous_regions()
    assert all(lo % (2 * _MB) == 0 and hi % (2 * _MB) == 0 and hi > lo for lo, hi in regions)
    assert (dense.lo, dense.hi) in regions
    assert _mapping_huge_kb(dense.lo, dense.hi) == 0
    # A range the kernel finds no free huge page for, for the moment, is left as it is (EAGAIN, ENOMEM: a
    # long-lived test process among others, once in a few CI runs); the next call takes it.
    for _ in range(3):
        collapsed = process_tree.collapse_heap()
        if _mapping_huge_kb(dense.lo, dense.hi) == 32 * 1024:
            break
    assert collapsed >= 32 * _MB
    assert _mapping_huge_kb(dense.lo, dense.hi) == 32 * 1024  # 16 huge pages
    assert dense.read(0, 4) == b"dddd" and dense.read(32 * _MB - 1, 1) == b"d"  # the same bytes
    dense.close()


def test_a_mostly_unresident_region_is_left_as_it_is():
    sparse = _Isolated(512 * _MB)
    sparse.fill(1, 1)  # one page of 131072: collapsing it would make 2 MB resident for each page there
    assert not [r for r in process_tree._resident_anonymous_regions() if r[0] < sparse.hi and r[1] > sparse.lo]
    sparse.close()


def _starts(**gate: bool) -> bool:
    """Whether collapse_heap gets past its gate to its first step (its `stop` is asked before each step:
    stopped there, it changes nothing). Whether the kernel then finds a free huge page for a range is the
    kernel's business (MADV_COLLAPSE fails with EAGAIN or ENOMEM for the moment), not the gate's."""
    asks: list[int] = []
    assert process_tree.collapse_heap(stop=lambda: asks.append(1) is None, **gate) == 0
    return bool(asks)


def test_the_switch_turns_it_off_and_few_cores_leave_it_to_the_switch(monkeypatch):
    dense = _Isolated(16 * _MB)
    dense.fill(ord("d"))  # (a region it would collapse: the gate, not the lack of one, decides below)
    monkeypatch.setenv("TRITON_LENS_HUGE_HEAP", "0")
    assert not _starts() and process_tree.collapse_heap() == 0
    monkeypatch.setattr(process_tree, "default_workers", lambda: 15)  # (16 cores)
    assert not _starts(where_splits_fork_3=True) and process_tree.collapse_heap(where_splits_fork_3=True) == 0
    monkeypatch.delenv("TRITON_LENS_HUGE_HEAP")
    monkeypatch.setattr(process_tree, "default_workers", lambda: 1)  # (2 cores: a split's 2 forks would not repay it)
    assert not _starts(where_splits_fork_3=True) and process_tree.collapse_heap(where_splits_fork_3=True) == 0
    assert _mapping_huge_kb(dense.lo, dense.hi) == 0
    monkeypatch.setenv("TRITON_LENS_HUGE_HEAP", "1")  # (forced, whatever the cores)
    assert _starts(where_splits_fork_3=True)
    monkeypatch.delenv("TRITON_LENS_HUGE_HEAP")
    monkeypatch.setattr(process_tree, "default_workers", lambda: 3)  # (4 cores: a split forks 3)
    assert _starts(where_splits_fork_3=True)
    assert _starts()  # (no gate asked: the benchmarks')
    assert _mapping_huge_kb(dense.lo, dense.hi) == 0  # (each stopped before its first step)
    dense.close()


def test_the_zygote_puts_its_imports_heap_on_huge_pages_once_idle(monkeypatch):
    monkeypatch.setenv("TRITON_LENS_HUGE_HEAP", "1")  # (as on 4 cores or more: the zygote inherits it)
    runner.discard_spares()
    try:
        run(RunRequest(path=str(CORPUS / "vector_add_tail.py"), keep_warm=True))  # (starts the zygote)
        deadline = time.monotonic() + 120
        zs: list[zygote_client.Zygote] = []
        while not zs and time.monotonic() < deadline:
            zs = [z for z in zygote_client._zygotes.values() if z.is_ready()]
            time.sleep(0.1)
        assert zs, "no zygote became ready"
        pid = zs[0].proc.pid
        # torch's and triton's imports leave 100-150 MB of heap: most of it on huge pages after the zygote's
        # first idle second (the select's timeout), where without collapse_heap none of it is.
        deadline = time.monotonic() + 30
        while _huge_kb(pid) < 48 * 1024 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _huge_kb(pid) >= 48 * 1024
        # and a run forked from it afterwards is still a run like any other
        r = run(RunRequest(path=str(CORPUS / "vector_add_tail.py"), keep_warm=True))
        assert r.status == "ok", (r.status, r.error)
    finally:
        runner.discard_spares()


def test_stop_ends_it_between_steps(monkeypatch):
    monkeypatch.setenv("TRITON_LENS_HUGE_HEAP", "1")
    dense = _Isolated(64 * _MB)
    dense.fill(ord("d"))
    asks: list[int] = []

    def stop() -> bool:  # (a spare worker's: its job came after the first step)
        asks.append(1)
        return len(asks) > 1

    collapsed = process_tree.collapse_heap(stop=stop)
    assert collapsed <= process_tree._STEP and len(asks) == 2
    dense.close()
