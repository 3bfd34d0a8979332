"""What a split child writes to its own memory (trace_engine/recording/child_writes.py): its stores are logged
and kept out of its memory until a load could read one of them; then every store logged so far is written,
in order, and every later one as it comes. Invariant: each load reads exactly the bytes it would read had
every store been written through. Here the child's memory is this process's (numpy buffers), the hooks
called as compat.tap_memory's tap calls them."""

from __future__ import annotations

import numpy as np

from triton_lens.trace_engine.recording.child_writes import ChildWrites, PendingBytes
from triton_lens.trace_engine.recording.store_log import StoreFile, StoreLog


def _ptrs(a: np.ndarray, idx) -> np.ndarray:
    return (a.ctypes.data + np.asarray(idx, dtype=np.int64) * a.itemsize).astype(np.uint64)


def _store(w: ChildWrites, a: np.ndarray, idx, values, mask=None) -> None:
    """A store as the interpreter makes it, through the hooks: written to memory only where they say."""
    p = _ptrs(a, idx)
    v = np.asarray(values, dtype=a.dtype)
    m = np.ones(p.shape, dtype=bool) if mask is None else np.asarray(mask)
    if w.on_store(p, v, m):
        a.reshape(-1)[np.asarray(idx)[m]] = v[m]


def test_pending_ranges_join_where_they_meet_and_stay_sorted():
    p = PendingBytes()
    for lo, hi in [(100, 110), (110, 120), (200, 210), (50, 60), (300, 310), (55, 105), (150, 150), (400, 420)]:
        p.add(lo, hi)
    assert list(zip(p.los, p.his)) == [(50, 120), (150, 150), (200, 210), (300, 310), (400, 420)]
    p.add(140, 305)  # one range over three
    assert list(zip(p.los, p.his)) == [(50, 120), (140, 310), (400, 420)]
    assert p.meets(119, 125) and not p.meets(120, 140) and not p.meets(0, 50) and p.meets(0, 51)
    assert p.meets(309, 400) and not p.meets(310, 400) and not p.meets(420, 10**9) and p.meets(0, 10**9)
    # Against a brute force over random ranges: the pending bytes are the union of those added.
    rng = np.random.default_rng(0)
    for _ in range(50):
        p, bytes_ = PendingBytes(), np.zeros(300, dtype=bool)
        for lo in rng.integers(0, 280, 12):
            hi = int(lo + rng.integers(1, 20))
            p.add(int(lo), hi)
            bytes_[lo:hi] = True
        assert all(a < b for a, b in zip(p.his, p.los[1:]))  # sorted, disjoint, apart
        union = np.zeros(300, dtype=bool)
        for lo, hi in zip(p.los, p.his):
            union[lo:hi] = True
        assert np.array_equal(union, bytes_)
        for lo in range(0, 300, 7):
            assert p.meets(lo, lo + 5) == bool(bytes_[lo : lo + 5].any())


def test_stores_stay_out_of_memory_until_a_load_could_read_them():
    x, out = np.arange(16, dtype=np.float32), np.zeros(16, dtype=np.float32)
    log = StoreLog()
    w = ChildWrites(log)
    _store(w, out, range(0, 8), np.arange(8) + 100)
    _store(w, out, [12, 9], [7, 8])  # scattered: pending from element 9 to 12
    assert not out.any() and w.pending and not w.through  # logged only
    w.before_load(_ptrs(x, range(16)), x.dtype)  # a load of x cannot read them
    w.before_load(_ptrs(out, [8]), out.dtype)  # nor one of the element between
    w.before_load(_ptrs(out, [13, 15]), out.dtype)  # nor one past them
    assert not out.any() and not w.through
    w.before_load(_ptrs(out, [15, 10]), out.dtype)  # its reach meets them: all logged so far is written first
    expect = np.zeros(16, dtype=np.float32)
    expect[:8], expect[12], expect[9] = np.arange(8) + 100, 7, 8
    assert np.array_equal(out, expect) and w.through and w.flushed_at == "load"
    _store(w, out, [15], [5])  # and from then on each store as it comes
    _store(w, out, [14, 11], [4, 1])  # (a scattered one too: logged without its reach, which nothing needs)
    assert out[15] == 5 and out[14] == 4 and out[11] == 1
    logged = log.take()
    assert logged["st.count"].sum() == 13 and logged["st.addrs"].size == 4  # every store, for the parent


def test_the_flush_writes_the_chunks_sent_and_the_current_one_in_order():
    out = np.zeros(8, dtype=np.int32)
    log, file = StoreLog(), StoreFile()
    try:
        w = ChildWrites(log)
        _store(w, out, range(8), range(8))
        logged = log.take()
        at, _ = file.append(logged.pop("st.vals"))
        w.chunk_sent(logged, file, at)  # the first chunk went to the parent; its bytes are in the file
        _store(w, out, [3, 4], [-3, -4])  # the next chunk overwrites two of them
        _store(w, out, [4], [40], mask=[False])  # (a store with no lane active changes nothing)
        assert not out.any()
        w.before_load(_ptrs(out, [0]), out.dtype)
        assert out.tolist() == [0, 1, 2, -3, -4, 5, 6, 7]
    finally:
        file.close()


def test_a_masked_lane_s_pointer_counts_too():
    # The check takes every lane's pointer, masked or not: the C load gets the mask, the check does not
    # need to (a masked lane reads nothing, so this only ever writes through sooner than needed).
    out = np.zeros(8, dtype=np.float64)
    w = ChildWrites(StoreLog())
    _store(w, out, [3], [1.0])
    w.before_load(_ptrs(out, [0, 7]), out.dtype)
    assert w.through and out[3] == 1.0


def test_an_in_place_kernel_s_loads_never_meet_its_stores():
    # Each program loads its block and stores it back; the blocks of the programs before it are pending,
    # its own is not yet: nothing is written until the end, and the log holds every store.
    p = np.arange(64, dtype=np.float32)
    log = StoreLog()
    w = ChildWrites(log)
    for prog in range(8):
        idx = range(prog * 8, prog * 8 + 8)
        w.before_load(_ptrs(p, idx), p.dtype)
        assert not w.through
        _store(w, p, idx, p[list(idx)] * 2)
    assert np.array_equal(p, np.arange(64)) and list(zip(w.pending.los, w.pending.his)) == [_reach(p)]
    assert log.take()["st.count"].sum() == 64


def _reach(a: np.ndarray) -> tuple[int, int]:
    return a.ctypes.data, a.ctypes.data + a.nbytes


def test_the_setting_writes_every_store_through():
    out = np.zeros(4, dtype=np.uint8)
    w = ChildWrites(StoreLog(), through=True)
    _store(w, out, [0, 1], [9, 8])
    assert out.tolist() == [9, 8, 0, 0] and w.flushed_at == "always" and not w.pending


def test_past_its_bound_on_what_it_holds_it_writes_through():
    # Scattered stores keep their addresses (8 bytes a lane) in each sent chunk's log: a child holds them
    # only up to its bound, then writes every store so far and each later one as it comes.
    out = np.zeros(4096, dtype=np.int32)
    log, file = StoreLog(), StoreFile()
    try:
        w = ChildWrites(log, hold_bytes=20_000)
        for chunk in range(4):
            idx = np.arange(chunk * 1024, (chunk + 1) * 1024)[::-1]  # descending: scattered
            _store(w, out, idx, idx)
            logged = log.take()
            at, _ = file.append(logged.pop("st.vals"))
            w.chunk_sent(logged, file, at)
            if chunk < 2:  # 8 KB of addresses a chunk: the third passes the bound
                assert not w.through and not out.any() and w.held >= 8192 * (chunk + 1)
        assert w.flushed_at == "held" and not w.sent and w.held == 0
        assert np.array_equal(out, np.arange(4096))
    finally:
        file.close()
