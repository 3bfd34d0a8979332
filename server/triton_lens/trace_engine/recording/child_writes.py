"""What a split launch's child writes to its own memory (parallel.py): its stores are logged for the parent
(store_log.py), and written to the child's own copy of memory only once one of its loads could read them.

A child's memory is a fork's private copy of the parent's: the first write to each page since the fork is a
copy-on-write fault (4 a program for a 16 KB softmax row; a fault costs 2-3 us on a VM, and the copy takes
the page out of the cache the program runs in: the split ran 3-7% slower for it on 2 cores,
bench/results/split_child_writes_2026-12-07_2core.txt). The parent writes every logged store into the real
output anyway, so a child needs its own copy of a store only to read it back: a program that loads what it
(or an earlier program of the same child) stored.

So a child starts logging only, and keeps which storages (the launch's tensors' storage spans, those that
overlap joined into one) hold stores it has not written. Before each load it checks the load's pointers,
all of them, masked or not, against those storages; if any lies in one, it writes every store it logged so
far into its memory, in order (from its slot's file for the chunks it sent, from the log for the current
one) and from then on writes each store through, as it did before. A store to memory outside every known
storage is written through at once, the same way. A load that could not read a pending store never needs
it: the loads of an in-place kernel (each program loads its own block, then stores it) find their bytes
untouched until the program's own store, which comes after them.

Invariant (tests/engine/test_child_writes.py, tests/engine/test_engine_parallel.py): every load a child
makes reads exactly the bytes it would read had every store been written through.
"""

from __future__ import annotations

import bisect

import numpy as np

from .store_log import ChunkStores, FileBytes, StoreFile, StoreLog, apply_stores


def joined_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans [lo, hi), sorted, those that overlap joined into one."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(s for s in spans if s[1] > s[0]):
        if out and lo < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


class ChildWrites:
    """(child) The store and load hooks (compat.tap_memory) that keep a child's stores out of its memory
    until a load could read one of them."""

    def __init__(self, log: StoreLog, spans: list[tuple[int, int]], through: bool = False) -> None:
        self.log = log
        self.spans = joined_spans(spans)
        self.los = [lo for lo, _ in self.spans]
        self.pending: set[int] = set()  # indices into spans holding stores not yet written
        self.sent: list[ChunkStores] = []  # the logs of the chunks sent while any store was pending
        self.through = through  # every store written as it comes (from the start, or since the flush)
        # why it writes through (the split report): "load", "outside" (flushed), "always" (the setting)
        self.flushed_at: str | None = "always" if through else None

    def _span(self, lo: int, hi: int) -> int | None:
        """The index of the span that holds [lo, hi), or None."""
        i = bisect.bisect_right(self.los, lo) - 1
        return i if i >= 0 and hi <= self.spans[i][1] else None

    def on_store(self, ptrs: np.ndarray, values: np.ndarray, mask: np.ndarray) -> bool:
        """Log the store; True where it must be written to memory too."""
        bounds = self.log(ptrs, values, mask)
        if self.through or bounds is None:
            return self.through
        i = self._span(*bounds)
        if i is None:
            self.flush("outside")  # (writes this store as well: it is in the log)
            return False
        self.pending.add(i)
        return False

    def before_load(self, ptrs: np.ndarray) -> None:
        if self.through or not self.pending or ptrs.size == 0:
            return
        lo, hi = int(ptrs.min()), int(ptrs.max()) + 8  # (an item is at most 8 bytes)
        for i in self.pending:
            slo, shi = self.spans[i]
            if lo < shi and slo < hi:
                self.flush("load")
                return

    def chunk_sent(self, logged: dict[str, np.ndarray], file: StoreFile, at: int) -> None:
        """A chunk's log (StoreLog.take's arrays) was sent, its bytes at `at` in the slot's file: kept
        while its stores may be needed here."""
        if not self.through and len(logged["st.count"]):
            self.sent.append(ChunkStores.of(logged, FileBytes(file, at)))

    def flush(self, why: str) -> None:
        """Write every store logged so far into this process's memory, in order; from now on, each as it
        comes."""
        for c in [*self.sent, ChunkStores.of(self.log.logged())]:
            apply_stores(c)
        self.sent, self.pending, self.through, self.flushed_at = [], set(), True, why
