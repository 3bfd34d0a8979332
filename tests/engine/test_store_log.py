"""A split child's store log (trace_engine/recording/parallel.py `_StoreLog`) and its replay in the parent
(`apply_stores`): replaying the log into memory as it was before gives exactly the memory the stores made,
in their order, whatever their shape, mask, item size or layout; runs that go on where the last one ended
are kept as one."""

from __future__ import annotations

import numpy as np

from triton_lens.trace_engine.recording import parallel
from triton_lens.trace_engine.recording.parallel import _StoreLog, apply_stores, write_stores


def _ptrs(buf: np.ndarray, idx) -> np.ndarray:
    return (buf.ctypes.data + np.asarray(idx, dtype=np.int64) * buf.itemsize).astype(np.uint64)


class _Memory:
    """A child's copy of a buffer and the parent's, at other addresses here (one address after a fork):
    the child writes its copy and logs the stores at the parent's addresses."""

    def __init__(self, before: np.ndarray):
        self.before, self.child, self.parent = before.copy(), before.copy(), np.empty_like(before)

    def replayed(self, log: _StoreLog) -> np.ndarray:
        self.parent[:] = self.before
        apply_stores({k: v.copy() for k, v in log.take().items()})
        return self.parent


def _store(log: _StoreLog, mem: _Memory, idx, values, mask=None) -> None:
    """What the interpreter does for a store in a child: write the lanes, then log them."""
    buf = mem.child
    ptrs = _ptrs(mem.parent, idx)
    values = np.asarray(values, dtype=buf.dtype)
    mask = np.ones(ptrs.shape, dtype=bool) if mask is None else np.asarray(mask)
    lanes = np.broadcast_to(mask, ptrs.shape)
    flat = np.asarray(idx).reshape(-1)[lanes.reshape(-1)]
    buf[flat] = np.broadcast_to(values, ptrs.shape).reshape(-1)[lanes.reshape(-1)]
    log(ptrs, values, mask)


def test_replay_gives_the_memory_the_stores_made_in_their_order():
    rng = np.random.default_rng(0)
    mem = _Memory(rng.standard_normal(4096).astype(np.float32))
    log = _StoreLog()
    _store(log, mem, np.arange(0, 1024), rng.standard_normal(1024))  # program 0's block
    _store(log, mem, np.arange(1024, 2048), rng.standard_normal(1024))  # the next one's
    _store(log, mem, np.arange(100, 164).reshape(8, 8), rng.standard_normal((8, 8)))  # 2-D, over the first
    _store(log, mem, np.arange(3000, 3128), 7.0)  # a scalar broadcast to the lanes
    _store(log, mem, np.arange(2048, 2176), rng.standard_normal(128), mask=np.arange(128) < 100)  # a tail
    _store(log, mem, [4000, 17, 4000, 3], [1.0, 2.0, 3.0, 4.0])  # scattered, one address twice
    _store(log, mem, np.arange(0, 512, 2), rng.standard_normal(256))  # strided
    _store(log, mem, np.arange(64), 0.0, mask=np.zeros(64, dtype=bool))  # all lanes off: nothing
    assert np.array_equal(mem.replayed(log), mem.child)
    assert mem.parent[4000] == 3.0  # the later lane wins, as on the one process's run


def test_item_sizes_other_than_four():
    for dtype in (np.int8, np.float16, np.float64):
        mem = _Memory(np.zeros(600, dtype=dtype))
        log = _StoreLog()
        _store(log, mem, np.arange(0, 300), np.arange(300) % 100)
        _store(log, mem, np.arange(300, 600), np.arange(300) % 7)
        _store(log, mem, [599, 0, 17], [5, 6, 7])
        assert np.array_equal(mem.replayed(log), mem.child), dtype


def test_runs_that_go_on_where_the_last_ended_are_one():
    mem = _Memory(np.zeros(1 << 14, dtype=np.float32))
    log = _StoreLog()
    for p in range(16):  # sixteen programs, each the next 1024-element block
        _store(log, mem, np.arange(p * 1024, (p + 1) * 1024), float(p))
    assert log.kind == [0] and log.count == [1 << 14]
    _store(log, mem, np.arange(0, 4), 1.0)  # back to the start: a run of its own
    _store(log, mem, np.arange(4, 8), 2.0)  # and on from it
    assert log.kind == [0, 0] and log.count == [1 << 14, 8]
    wide = _Memory(np.zeros(8, dtype=np.float64))
    wide.parent = mem.parent[8:24].view(np.float64)  # where the last run ended, but 8-byte items: not joined
    _store(log, wide, [0], 1.0)
    assert len(log.kind) == 3 and log.count[-1] == 1
    expect = mem.child.copy()
    expect[8:10] = np.array([1.0], dtype=np.float64).view(np.float32)
    assert np.array_equal(mem.replayed(log), expect)


def test_one_log_over_many_chunks_keeps_its_buffer_and_each_chunks_bytes():
    # A child logs chunk after chunk into one buffer (not a bytes object per store, joined per chunk);
    # each take's bytes are that chunk's, whatever the item sizes before them (an odd offset included).
    rng = np.random.default_rng(2)
    log = _StoreLog()
    bufs = []
    for chunk in range(4):
        small = _Memory(np.zeros(7, dtype=np.int8))
        wide = _Memory(np.zeros(1 << 15, dtype=np.float32))
        _store(log, small, np.arange(7), np.arange(7) + chunk)  # 7 bytes: the next store starts unaligned
        for p in range(4):  # 128 KB a chunk: more than the log's first buffer
            block = rng.standard_normal(2 * 8192).astype(np.float32)[::2]  # strided values
            _store(log, wide, np.arange(p * 8192, (p + 1) * 8192), block)
        arrays = {k: v.copy() for k, v in log.take().items()}
        bufs.append(log.buf)
        small.parent[:], wide.parent[:] = small.before, wide.before
        apply_stores(arrays)
        assert np.array_equal(small.parent, small.child) and np.array_equal(wide.parent, wide.child), chunk
    assert all(b is bufs[0] for b in bufs[1:])  # grown in the first chunk, then kept


class _CountingPool(parallel.ThreadPoolExecutor):
    made: list[int] = []

    def __init__(self, max_workers: int, **kw):
        _CountingPool.made.append(max_workers)
        super().__init__(max_workers=max_workers, **kw)


def _logs_of_chunks(mem: _Memory, chunks) -> list[dict[str, np.ndarray]]:
    """One log per chunk, as the parent receives them: each chunk a list of (indices, values)."""
    logs = []
    for chunk in chunks:
        log = _StoreLog()
        for idx, values in chunk:
            _store(log, mem, idx, values)
        logs.append({k: v.copy() for k, v in log.take().items()})
    return logs


def test_disjoint_runs_are_written_by_threads_and_give_the_same_memory(monkeypatch):
    monkeypatch.setattr(parallel, "PARALLEL_WRITE_BYTES", 4096)
    monkeypatch.setattr(parallel, "ThreadPoolExecutor", _CountingPool)
    _CountingPool.made.clear()
    rng = np.random.default_rng(1)
    mem = _Memory(np.zeros(1 << 16, dtype=np.float32))
    # Chunks arrive in program order but cover the output out of order (rows of a transposed grid).
    chunks = [[(np.arange(r * 4096, (r + 1) * 4096), rng.standard_normal(4096))] for r in (3, 0, 15, 7, 1)]
    chunks.append([(np.arange(9 * 4096 + 5, 9 * 4096 + 1000), 2.5), (np.arange(60000, 60001), 1.0)])
    logs = _logs_of_chunks(mem, chunks)
    mem.parent[:] = mem.before
    write_stores(logs, threads=4)
    assert np.array_equal(mem.parent, mem.child)
    assert _CountingPool.made == [4]


def test_overlapping_or_scattered_stores_are_written_in_program_order(monkeypatch):
    monkeypatch.setattr(parallel, "PARALLEL_WRITE_BYTES", 1024)
    monkeypatch.setattr(parallel, "ThreadPoolExecutor", _CountingPool)
    _CountingPool.made.clear()
    mem = _Memory(np.zeros(1 << 14, dtype=np.float32))
    # Two chunks write the same block (a race the analysis reports): the later chunk's values stay.
    overlapping = [[(np.arange(0, 4096), 1.0)], [(np.arange(2048, 6144), 2.0)], [(np.arange(0, 1024), 3.0)]]
    logs = _logs_of_chunks(mem, overlapping)
    mem.parent[:] = mem.before
    write_stores(logs, threads=4)
    assert np.array_equal(mem.parent, mem.child) and mem.parent[0] == 3.0 and mem.parent[3000] == 2.0
    before = mem.child.copy()
    scattered = _logs_of_chunks(mem, [[(np.arange(8192, 16384), 4.0)], [([8192, 100, 8192], [5.0, 6.0, 7.0])]])
    mem.parent[:] = before
    write_stores(scattered, threads=4)
    assert np.array_equal(mem.parent, mem.child) and mem.parent[8192] == 7.0 and mem.parent[100] == 6.0
    assert _CountingPool.made == []


def test_without_threads_the_runs_are_still_written(monkeypatch):
    """At the interpreter's shutdown (a launch from the script's atexit) no thread can start."""

    class Shut(parallel.ThreadPoolExecutor):
        def submit(self, *a, **kw):
            raise RuntimeError("cannot schedule new futures after interpreter shutdown")

    monkeypatch.setattr(parallel, "PARALLEL_WRITE_BYTES", 4096)
    monkeypatch.setattr(parallel, "ThreadPoolExecutor", Shut)
    mem = _Memory(np.zeros(1 << 15, dtype=np.float32))
    logs = _logs_of_chunks(mem, [[(np.arange(r * 4096, (r + 1) * 4096), float(r + 1))] for r in (2, 0, 5)])
    mem.parent[:] = mem.before
    write_stores(logs, threads=4)
    assert np.array_equal(mem.parent, mem.child)
