"""What a split launch's child writes to its own memory (parallel.py): its stores are logged for the parent
(store_log.py), and written to the child's own copy of memory only once one of its loads could read them.

A child's memory is a fork's private copy of the parent's: the first write to each page since the fork is a
copy-on-write fault (4 a program for a 16 KB softmax row; a fault costs 2-3 us on a VM, and the copy takes
the page out of the cache the program runs in: the split ran 3-7% slower for it on 2 cores,
bench/results/split_child_writes_2026-12-07_2core.txt). The parent writes every logged store into the real
output anyway, so a child needs its own copy of a store only to read it back: a program that loads what it
(or an earlier program of the same child) stored.

So a child starts logging only, and keeps the addresses its logged stores cover and it has not written
(`PendingBytes`: a program's block, or a scattered store's whole reach; neighbouring blocks join). Before
each load it checks the load's reach (its lowest pointer to its highest, masked lanes too) against them; if
they meet, it writes every store it logged so far into its memory, in order (from its slot's file for the
chunks it sent, from the log for the current one), and from then on writes each store through, as it did
before. A load that meets no pending byte never needs them: the loads of an in-place kernel (each program
loads its own block, then stores it) find their bytes untouched until the program's own store, which comes
after them; a kernel that reads what another program of the child wrote (a stencil in place, a read-back)
writes through from its first such load.

What it holds while it waits (the sent chunks' run arrays, a scattered store's addresses among them, and the
pending ranges) is bounded: past HOLD_BYTES it writes through the same way, so a child of a scatter-heavy
launch never holds more than that on top of what the parent holds anyway.

Invariant (tests/engine/test_child_writes.py, tests/engine/test_engine_parallel.py): every load a child
makes reads exactly the bytes it would read had every store been written through.
"""

from __future__ import annotations

import bisect
from typing import Any

import numpy as np

from .store_log import ChunkStores, FileBytes, StoreFile, StoreLog, apply_stores

# The most a child holds to write its stores later (their logs' arrays, the pending ranges at 16 bytes each):
# past it, it writes them and every later one through ("held").
HOLD_BYTES = 64 << 20


class PendingBytes:
    """The addresses of the stores logged but not written: sorted, disjoint [lo, hi) ranges (a range that
    meets or overlaps another joins it). A store's range is its bytes' lowest to highest address: a
    program's block, or the whole of a scattered store's reach."""

    def __init__(self) -> None:
        self.los: list[int] = []
        self.his: list[int] = []

    def __bool__(self) -> bool:
        return bool(self.los)

    def add(self, lo: int, hi: int) -> None:
        los, his = self.los, self.his
        if not los or lo > his[-1]:  # (the common case: programs store in address order)
            los.append(lo)
            his.append(hi)
            return
        if lo >= los[-1]:  # meets or overlaps the last range
            his[-1] = max(his[-1], hi)
            return
        i = bisect.bisect_left(his, lo)  # the first range that ends at or after lo
        j = bisect.bisect_right(los, hi)  # past the last range that starts at or before hi
        if i < j:
            lo, hi = min(lo, los[i]), max(hi, his[j - 1])
        los[i:j], his[i:j] = [lo], [hi]

    def meets(self, lo: int, hi: int) -> bool:
        """Whether [lo, hi) shares a byte with a pending range."""
        i = bisect.bisect_right(self.his, lo)  # the first range that ends past lo
        return i < len(self.los) and self.los[i] < hi

    def clear(self) -> None:
        self.los, self.his = [], []


class ChildWrites:
    """(child) The store and load hooks (compat.tap_memory) that keep a child's stores out of its memory
    until a load could read one of them."""

    def __init__(self, log: StoreLog, through: bool = False, hold_bytes: int = HOLD_BYTES) -> None:
        self.log = log
        self.pending = PendingBytes()
        self.sent: list[ChunkStores] = []  # the logs of the chunks sent while any store was pending
        self.held, self.hold_bytes = 0, hold_bytes  # the bytes of the sent logs' arrays, and their bound
        self.through = through  # every store written as it comes (from the start, or since the flush)
        # why it writes through (the split report): "load" or "held" (flushed), "always" (the setting), None: it
        # does not
        self.flushed_at: str | None = "always" if through else None

    def on_store(self, ptrs: np.ndarray, values: np.ndarray, mask: np.ndarray) -> bool:
        """Log the store; True where it must be written to memory too."""
        if self.through:
            self.log(ptrs, values, mask, reach=False)
            return True
        bounds = self.log(ptrs, values, mask)
        if bounds is not None:
            self.pending.add(*bounds)
        return False

    def before_load(self, ptrs: np.ndarray, dtype: Any) -> None:
        """A load of `dtype` items (a numpy dtype or type) at `ptrs` comes next."""
        if self.through or not self.pending or ptrs.size == 0:
            return
        lo, hi = int(ptrs.min()), int(ptrs.max()) + np.dtype(dtype).itemsize
        if self.pending.meets(lo, hi):
            self.flush("load")

    def chunk_sent(self, logged: dict[str, np.ndarray], file: StoreFile, at: int) -> None:
        """A chunk's log (StoreLog.take's arrays) was sent, its bytes at `at` in the slot's file: kept
        while its stores may be needed here."""
        if self.through or not len(logged["st.count"]):
            return
        self.sent.append(ChunkStores.of(logged, FileBytes(file, at)))
        self.held += sum(a.nbytes for a in logged.values())
        if self.held + 16 * len(self.pending.los) > self.hold_bytes:
            self.flush("held")

    def flush(self, why: str) -> None:
        """Write every store logged so far into this process's memory, in order; from now on, each as it
        comes."""
        for c in [*self.sent, ChunkStores.of(self.log.logged())]:
            apply_stores(c)
        self.sent, self.held, self.through, self.flushed_at = [], 0, True, why
        self.pending.clear()
