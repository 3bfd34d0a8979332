"""What a split launch's child is to the system (trace_engine/recording/parallel.py): batch work that
yields the CPU to the parent, the editor and the language server when they wake; and, before its result,
a process that maps none of the launch's tensors' pages any more."""

from __future__ import annotations

import ctypes
import mmap
import os
import sys

import pytest

from triton_lens.trace_engine.recording import parallel


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="scheduling classes are Linux's (CI runs on Linux)")
def test_a_child_runs_as_batch_work_and_its_parent_does_not():
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # as _become_child does, in a process of its own
        try:
            parallel._run_as_batch_work()
            os.write(w, str(os.sched_getscheduler(0)).encode())
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    with os.fdopen(r) as f:
        assert int(f.read()) == os.SCHED_BATCH
    assert os.sched_getscheduler(0) == os.SCHED_OTHER


def test_a_child_releases_the_whole_pages_of_a_span_and_the_parent_keeps_its_own():
    page = mmap.PAGESIZE
    buf = mmap.mmap(-1, 4 * page, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)  # as a tensor's storage
    buf.write(b"\x01" * (4 * page))
    base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # as a split's child before its result: the span starts mid-page and ends mid-page
        try:
            released = parallel.release_pages([(base + 100, base + 3 * page + 7)])
            sums = [sum(buf[k * page : (k + 1) * page]) for k in range(4)]
            os.write(w, f"{released} {sums}".encode())
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    with os.fdopen(r) as f:
        released, sums = f.read().split(" ", 1)
    # pages 1 and 2 lie wholly inside: the child's copies are gone (it reads zeros); 0 and 3 it shares
    assert int(released) == 2 * page and sums == str([page, 0, 0, page])
    assert buf[:] == b"\x01" * (4 * page)  # the parent's memory is its own
