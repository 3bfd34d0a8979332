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


def test_the_parents_frames_are_read_into_large_aligned_blocks():
    import io

    import numpy as np

    from triton_lens.trace_engine.recording import stream

    rng = np.random.default_rng(3)
    sent = [
        {"st.vals": rng.integers(0, 255, 3000, dtype=np.uint8), "ex_vhash": rng.integers(0, 1 << 60, 77)},
        {"st.vals": rng.standard_normal(5000).astype(np.float32), "dot_dev": rng.standard_normal((3, 2))},
    ]
    buf = io.BytesIO()
    for arrays in sent:
        stream.write_frame(buf, "chunk", {}, arrays)
    buf.seek(0)
    arena = parallel._Arena()
    got = [stream.read_frame(buf, arena.take) for _ in sent]
    for arrays, frame in zip(sent, got):
        assert frame is not None
        for name, a in arrays.items():
            assert np.array_equal(frame[2][name], a), name
    bodies = [a for frame in got if frame is not None for a in frame[2].values()]
    assert all(a.ctypes.data % parallel._Arena.ALIGN == 0 for a in bodies)  # every dtype's alignment
    assert bodies[0].ctypes.data % parallel._Arena.HUGE == 0  # from a huge page's start
    assert all(np.shares_memory(b, arena.block) for b in bodies if b.size)  # one block for both frames
    big = arena.take(2 * parallel._Arena.BLOCK + 10)  # larger than a block: a block of its own
    assert big.size == 2 * parallel._Arena.BLOCK + 10 and big.ctypes.data % parallel._Arena.HUGE == 0
    assert not np.shares_memory(big, bodies[0])
