"""What a split child writes to its own memory (trace_engine/recording/child_writes.py): its stores are logged
and kept out of its memory until a load could read one of them; then every store logged so far is written,
in order, and every later one as it comes. Invariant: each load reads exactly the bytes it would read had
every store been written through. Here the child's memory is this process's (numpy buffers), the hooks
called as compat.tap_memory's tap calls them."""

from __future__ import annotations

import numpy as np

from triton_lens.trace_engine.recording.child_writes import ChildWrites, joined_spans
from triton_lens.trace_engine.recording.store_log import StoreFile, StoreLog


def _span(a: np.ndarray) -> tuple[int, int]:
    return a.ctypes.data, a.ctypes.data + a.nbytes


def _ptrs(a: np.ndarray, idx) -> np.ndarray:
    return (a.ctypes.data + np.asarray(idx, dtype=np.int64) * a.itemsize).astype(np.uint64)


def _store(w: ChildWrites, a: np.ndarray, idx, values, mask=None) -> None:
    """A store as the interpreter makes it, through the hooks: written to memory only where they say."""
    p = _ptrs(a, idx)
    v = np.asarray(values, dtype=a.dtype)
    m = np.ones(p.shape, dtype=bool) if mask is None else np.asarray(mask)
    if w.on_store(p, v, m):
        a.reshape(-1)[np.asarray(idx)[m]] = v[m]


def test_spans_that_overlap_are_joined():
    assert joined_spans([(50, 60), (0, 10), (5, 20), (20, 30), (70, 70)]) == [(0, 20), (20, 30), (50, 60)]


def test_stores_stay_out_of_memory_until_a_load_could_read_them():
    x, out = np.arange(16, dtype=np.float32), np.zeros(16, dtype=np.float32)
    log = StoreLog()
    w = ChildWrites(log, [_span(x), _span(out)])
    _store(w, out, range(0, 8), np.arange(8) + 100)
    _store(w, out, [12, 9], [7, 8])  # scattered
    assert not out.any() and w.pending and not w.through  # logged only
    w.before_load(_ptrs(x, range(16)))  # a load of x cannot read them
    assert not out.any() and not w.through
    w.before_load(_ptrs(out, [15]))  # one of out's: every store logged so far is written first
    expect = np.zeros(16, dtype=np.float32)
    expect[:8], expect[12], expect[9] = np.arange(8) + 100, 7, 8
    assert np.array_equal(out, expect) and w.through and w.flushed_at == "load"
    _store(w, out, [15], [5])  # and from then on each store as it comes
    assert out[15] == 5
    assert log.take()["st.count"].sum() == 11  # the log has every store, for the parent


def test_the_flush_writes_the_chunks_sent_and_the_current_one_in_order():
    out = np.zeros(8, dtype=np.int32)
    log, file = StoreLog(), StoreFile()
    try:
        w = ChildWrites(log, [_span(out)])
        _store(w, out, range(8), range(8))
        logged = log.take()
        at, _ = file.append(logged.pop("st.vals"))
        w.chunk_sent(logged, file, at)  # the first chunk went to the parent; its bytes are in the file
        _store(w, out, [3, 4], [-3, -4])  # the next chunk overwrites two of them
        _store(w, out, [4], [40], mask=[False])  # (a store with no lane active changes nothing)
        assert not out.any()
        w.before_load(_ptrs(out, [0]))
        assert out.tolist() == [0, 1, 2, -3, -4, 5, 6, 7]
    finally:
        file.close()


def test_a_masked_lane_s_pointer_counts_too():
    # The check takes every lane's pointer, masked or not: the C load gets the mask, the check does not
    # need to (a masked lane reads nothing, so this only ever writes through sooner than needed).
    out = np.zeros(8, dtype=np.float64)
    w = ChildWrites(StoreLog(), [_span(out)])
    _store(w, out, [0], [1.0])
    w.before_load(_ptrs(out, [7]))
    assert w.through and out[0] == 1.0


def test_a_store_outside_every_known_storage_is_written_through_at_once():
    known, other = np.zeros(4, dtype=np.int16), np.zeros(4, dtype=np.int16)
    w = ChildWrites(StoreLog(), [_span(known)])
    _store(w, known, [1], [11])
    _store(w, other, [2], [22])  # memory no tensor argument holds: written, and everything before it
    assert known.tolist() == [0, 11, 0, 0] and other.tolist() == [0, 0, 22, 0]
    assert w.through and w.flushed_at == "outside"


def test_the_setting_writes_every_store_through():
    out = np.zeros(4, dtype=np.uint8)
    w = ChildWrites(StoreLog(), [_span(out)], through=True)
    _store(w, out, [0, 1], [9, 8])
    assert out.tolist() == [9, 8, 0, 0] and w.flushed_at == "always"
