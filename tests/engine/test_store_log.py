"""A split child's store log (trace_engine/recording/store_log.py `StoreLog`) and its replay in the parent
(`apply_stores`): replaying the log into memory as it was before gives exactly the memory the stores made,
in their order, whatever their shape, mask, item size or layout; runs that go on where the last one ended
are kept as one."""

from __future__ import annotations

import numpy as np
import pytest

from triton_lens.trace_engine.recording import store_log
from triton_lens.trace_engine.recording.store_log import (
    ChunkStores,
    FileBytes,
    StoreFile,
    StoreLog,
    apply_stores,
    write_stores,
)


def _taken(log: StoreLog, file: StoreFile | None = None) -> ChunkStores:
    """The log's chunk as the parent replays it: its bytes in memory, or appended to `file` as a split
    child does (the parent then reads them from the file)."""
    arrays = {k: v.copy() for k, v in log.take().items()}
    if file is None:
        return ChunkStores.of(arrays)
    at, _ = file.append(arrays["st.vals"])
    return ChunkStores.of(arrays, FileBytes(file, at))


def _ptrs(buf: np.ndarray, idx) -> np.ndarray:
    return (buf.ctypes.data + np.asarray(idx, dtype=np.int64) * buf.itemsize).astype(np.uint64)


class _Memory:
    """A child's copy of a buffer and the parent's, at other addresses here (one address after a fork):
    the child writes its copy and logs the stores at the parent's addresses."""

    def __init__(self, before: np.ndarray):
        self.before, self.child, self.parent = before.copy(), before.copy(), np.empty_like(before)

    def replayed(self, log: StoreLog) -> np.ndarray:
        self.parent[:] = self.before
        apply_stores(_taken(log))
        return self.parent


def _store(log: StoreLog, mem: _Memory, idx, values, mask=None) -> None:
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
    log = StoreLog()
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
        log = StoreLog()
        _store(log, mem, np.arange(0, 300), np.arange(300) % 100)
        _store(log, mem, np.arange(300, 600), np.arange(300) % 7)
        _store(log, mem, [599, 0, 17], [5, 6, 7])
        assert np.array_equal(mem.replayed(log), mem.child), dtype


def test_runs_that_go_on_where_the_last_ended_are_one():
    mem = _Memory(np.zeros(1 << 14, dtype=np.float32))
    log = StoreLog()
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
    log = StoreLog()
    file = StoreFile()
    bufs = []
    for chunk in range(4):
        small = _Memory(np.zeros(7, dtype=np.int8))
        wide = _Memory(np.zeros(1 << 15, dtype=np.float32))
        _store(log, small, np.arange(7), np.arange(7) + chunk)  # 7 bytes: the next store starts unaligned
        for p in range(4):  # 128 KB a chunk: more than the log's first buffer
            block = rng.standard_normal(2 * 8192).astype(np.float32)[::2]  # strided values
            _store(log, wide, np.arange(p * 8192, (p + 1) * 8192), block)
        taken = _taken(log, file if chunk % 2 else None)  # (from memory and from a file, in turn)
        bufs.append(log.buf)
        small.parent[:], wide.parent[:] = small.before, wide.before
        apply_stores(taken)
        assert np.array_equal(small.parent, small.child) and np.array_equal(wide.parent, wide.child), chunk
    assert all(b is bufs[0] for b in bufs[1:])  # grown in the first chunk, then kept


class _CountingPool(store_log.ThreadPoolExecutor):
    made: list[int] = []

    def __init__(self, max_workers: int, **kw):
        _CountingPool.made.append(max_workers)
        super().__init__(max_workers=max_workers, **kw)


_read = store_log.FileBytes.read
_FILE = StoreFile()  # (the file-backed logs' bytes, one file for the module's tests)


def _logs_of_chunks(mem: _Memory, chunks, via_file: bool = True) -> list[ChunkStores]:
    """One log per chunk, as the parent receives them: each chunk a list of (indices, values); their bytes
    in a StoreFile as a split child leaves them (or in memory)."""
    logs = []
    for chunk in chunks:
        log = StoreLog()
        for idx, values in chunk:
            _store(log, mem, idx, values)
        logs.append(_taken(log, _FILE if via_file else None))
    return logs


@pytest.mark.parametrize("via_file", [True, False], ids=["bytes in a store file", "bytes in memory"])
def test_disjoint_runs_are_written_by_threads_and_give_the_same_memory(monkeypatch, via_file):
    monkeypatch.setattr(store_log, "PARALLEL_WRITE_BYTES", 4096)
    monkeypatch.setattr(store_log, "ThreadPoolExecutor", _CountingPool)
    reads = []
    monkeypatch.setattr(store_log.FileBytes, "read", lambda self, off, n: reads.append(n) or _read(self, off, n))
    _CountingPool.made.clear()
    rng = np.random.default_rng(1)
    mem = _Memory(np.zeros(1 << 16, dtype=np.float32))
    # Chunks arrive in program order but cover the output out of order (rows of a transposed grid); the
    # last has a 4-byte run between longer ones (a layer norm's row statistics).
    chunks = [[(np.arange(r * 4096, (r + 1) * 4096), rng.standard_normal(4096))] for r in (3, 0, 15, 7, 1)]
    chunks.append([(np.arange(9 * 4096 + 5, 9 * 4096 + 1000), 2.5), (np.arange(60000, 60001), 1.0)])
    logs = _logs_of_chunks(mem, chunks, via_file)
    mem.parent[:] = mem.before
    write_stores(logs, threads=4)
    assert np.array_equal(mem.parent, mem.child)
    assert _CountingPool.made == [4]
    assert reads == []  # (every run read from the file straight into place, by the threads)


def test_in_order_a_log_of_short_runs_is_read_in_one_read_and_a_long_one_straight_into_place(monkeypatch):
    monkeypatch.setattr(store_log, "DIRECT_RUN_BYTES", 1024)
    reads = []
    monkeypatch.setattr(store_log.FileBytes, "read", lambda self, off, n: reads.append(n) or _read(self, off, n))
    mem = _Memory(np.zeros(1 << 14, dtype=np.float32))
    short = [(np.arange(i * 64, i * 64 + 8), float(i)) for i in range(20)]  # 20 runs of 32 bytes
    long = [(np.arange(8192, 8192 + 2048), 5.0)]  # one run of 8 KB
    logs = _logs_of_chunks(mem, [short, long])
    mem.parent[:] = mem.before
    write_stores(logs, threads=1)  # (one thread: the in-order path)
    assert np.array_equal(mem.parent, mem.child)
    assert reads == [20 * 32]


def test_overlapping_or_scattered_stores_are_written_in_program_order(monkeypatch):
    monkeypatch.setattr(store_log, "PARALLEL_WRITE_BYTES", 1024)
    monkeypatch.setattr(store_log, "ThreadPoolExecutor", _CountingPool)
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

    class Shut(store_log.ThreadPoolExecutor):
        def submit(self, *a, **kw):
            raise RuntimeError("cannot schedule new futures after interpreter shutdown")

    monkeypatch.setattr(store_log, "PARALLEL_WRITE_BYTES", 4096)
    monkeypatch.setattr(store_log, "ThreadPoolExecutor", Shut)
    mem = _Memory(np.zeros(1 << 15, dtype=np.float32))
    logs = _logs_of_chunks(mem, [[(np.arange(r * 4096, (r + 1) * 4096), float(r + 1))] for r in (2, 0, 5)])
    mem.parent[:] = mem.before
    write_stores(logs, threads=4)
    assert np.array_equal(mem.parent, mem.child)


def test_a_store_file_gives_back_each_chunk_a_forked_child_appended():
    """The child appends chunk after chunk (odd lengths, an empty one); the parent, after the child ended,
    reads each from the place the child's frame named, into memory of its own, and gets exactly its bytes."""
    import json
    import os

    f = StoreFile()
    rng = np.random.default_rng(2)
    chunks = [rng.integers(0, 256, n, dtype=np.uint8) for n in (7, 0, 4096, 70001, 1, 3 << 20)]
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its places in the file go back through the pipe, as a frame's meta would
        try:
            places = [f.append(c) for c in chunks]
            os.write(w, json.dumps(places).encode())
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    places = json.loads(os.read(r, 1 << 16))
    os.close(r)
    assert [n for _, n in places] == [c.size for c in chunks]
    for (at, n), c in zip(places, chunks):
        out = np.full(n + 2, 0xEE, dtype=np.uint8)
        f.read_into(out[1:-1].data, at)  # (into the middle: nothing written around it)
        assert np.array_equal(out[1:-1], c) and out[0] == out[-1] == 0xEE
        assert np.array_equal(FileBytes(f, at).read(0, n), c)
    f.close()


def test_a_store_file_takes_any_layout_of_values_and_says_when_bytes_are_missing():
    f = StoreFile()
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    at, n = f.append(a[:, ::2].copy().view(np.uint8).reshape(-1))
    assert n == 48 and np.array_equal(FileBytes(f, at).read(0, n).view(np.float32), a[:, ::2].reshape(-1))
    with pytest.raises(OSError, match="stored bytes end"):
        f.read_into(np.empty(100, dtype=np.uint8).data, at)
    f.close()


def test_store_files_are_closed_on_a_thread_of_their_own(monkeypatch):
    """The split's end does not wait for the files' pages to be freed; at the interpreter's shutdown (no
    new thread) they are closed at once."""
    import threading
    import time

    files = [StoreFile() for _ in range(3)]
    for f in files:
        f.append(np.ones(1 << 20, dtype=np.uint8))
    store_log.close_later(files)
    deadline = time.monotonic() + 10
    while any(f.fd >= 0 for f in files) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert all(f.fd == -1 for f in files)

    class NoThreads(threading.Thread):
        def start(self):
            raise RuntimeError("can't create new thread at interpreter shutdown")

    monkeypatch.setattr(store_log.threading, "Thread", NoThreads)
    f = StoreFile()
    store_log.close_later([f])
    assert f.fd == -1
