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
_PRIVATE = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS  # (mmap(-1) alone is shared memory: not heap)


def _collapse_works() -> bool:
    """This kernel (Linux 6.1+, THP not "never") collapses a dense anonymous region on request."""
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            if "[never]" in f.read():
                return False
    except OSError:
        return False
    m = mmap.mmap(-1, 8 * _MB, flags=_PRIVATE)
    m.write(b"x" * (8 * _MB))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
    a = -(-addr // (2 * _MB)) * (2 * _MB)
    ok = libc.madvise(a, 2 * _MB, 25) == 0
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


def _span(m: mmap.mmap) -> tuple[int, int]:
    addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
    return addr, addr + len(m)


def test_a_dense_region_is_asked_and_becomes_huge(monkeypatch):
    monkeypatch.delenv("TRITON_LENS_HUGE_HEAP", raising=False)
    dense = mmap.mmap(-1, 32 * _MB, flags=_PRIVATE)
    dense.write(b"d" * (32 * _MB))  # every page resident (4 KB pages: not madvised)
    dlo, dhi = _span(dense)
    regions = process_tree._resident_anonymous_regions()
    # Each region is 2 MB-aligned: 30-32 MB of the mapping are among them (the kernel may have merged it
    # with a neighbouring mapping into one region).
    assert all(lo % (2 * _MB) == 0 and hi % (2 * _MB) == 0 and hi > lo for lo, hi in regions)
    assert sum(min(hi, dhi) - max(lo, dlo) for lo, hi in regions if lo < dhi and hi > dlo) >= 30 * _MB
    before = _huge_kb()
    assert process_tree.collapse_heap() >= 30 * _MB
    assert _huge_kb() - before >= 30 * 1024  # the mapping alone: 15 huge pages at least
    assert dense[:4] == b"dddd" and dense[-1] == ord("d")  # the same bytes, now on huge pages
    dense.close()


def test_a_mostly_unresident_region_is_left_as_it_is():
    sparse = mmap.mmap(-1, 512 * _MB, flags=_PRIVATE)  # (even merged with a neighbour: under half resident)
    sparse[0] = 1  # one page of 131072: collapsing it would make 2 MB resident for each page there
    slo, shi = _span(sparse)
    assert not [r for r in process_tree._resident_anonymous_regions() if r[0] < shi and r[1] > slo]
    sparse.close()


def test_the_switch_turns_it_off_and_few_cores_leave_it_to_the_switch(monkeypatch):
    dense = mmap.mmap(-1, 16 * _MB, flags=_PRIVATE)
    dense.write(b"d" * (16 * _MB))
    before = _huge_kb()
    monkeypatch.setenv("TRITON_LENS_HUGE_HEAP", "0")
    assert process_tree.collapse_heap() == 0
    assert process_tree.collapse_heap(cores=16) == 0
    monkeypatch.delenv("TRITON_LENS_HUGE_HEAP")
    assert process_tree.collapse_heap(cores=2) == 0  # (a split's 2 forks would not repay it)
    assert _huge_kb() - before < 4 * 1024  # (other threads may fault in a huge page meanwhile)
    monkeypatch.setenv("TRITON_LENS_HUGE_HEAP", "1")
    assert process_tree.collapse_heap(cores=2) >= 14 * _MB
    assert _huge_kb() - before >= 14 * 1024
    dense.close()


@pytest.mark.skipif(not zygote_client.supported(), reason="the zygote needs Linux")
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
    dense = mmap.mmap(-1, 64 * _MB, flags=_PRIVATE)
    dense.write(b"d" * (64 * _MB))
    asks: list[int] = []

    def stop() -> bool:  # (a spare worker's: its job came after the first step)
        asks.append(1)
        return len(asks) > 1

    asked = process_tree.collapse_heap(stop=stop)
    assert 0 < asked <= process_tree._STEP and len(asks) == 2
    dense.close()
