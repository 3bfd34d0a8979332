"""What a split launch's child is to the system (trace_engine/recording/parallel.py): batch work that
yields the CPU to the parent, the editor and the language server when they wake."""

from __future__ import annotations

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
