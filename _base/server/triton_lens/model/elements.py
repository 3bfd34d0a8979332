"""Compact sets of element indices: one per execution of an access, never one int64 per lane.

A set is stored as one of
- EMPTY;
- RANGE: the contiguous run [lo, lo + count) (the common case: a vector tile) -- no payload;
- RUNS: sorted disjoint (start, length) int64 pairs (2-D tiles: one run per row);
- BITMAP: bits over [lo, lo + span) (gathers, scattered indices), little bit order.
The encoder picks the smallest. Indices may be negative (offsets before a tensor's start).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import numpy as np

EMPTY, RANGE, RUNS, BITMAP = 0, 1, 2, 3

_EMPTY_BYTES = b""


def encode(idx: np.ndarray) -> tuple[int, int, int, bytes]:
    """(kind, lo, count, payload) for the distinct values of a 1-D int64 array (any order, duplicates ok)."""
    n = idx.size
    if n == 0:
        return EMPTY, 0, 0, _EMPTY_BYTES
    first = int(idx[0])
    if n == 1:
        return RANGE, first, 1, _EMPTY_BYTES
    d = np.diff(idx)
    if int(idx[-1]) - first == n - 1 and bool((d == 1).all()):
        return RANGE, first, n, _EMPTY_BYTES
    if bool((d > 0).all()):
        u = idx  # already sorted and distinct
        breaks = np.flatnonzero(d != 1)
    else:
        u = np.unique(idx)
        if u.size == 1:
            return RANGE, int(u[0]), 1, _EMPTY_BYTES
        breaks = np.flatnonzero(np.diff(u) != 1)
    lo = int(u[0])
    count = int(u.size)
    if breaks.size == 0:
        return RANGE, lo, count, _EMPTY_BYTES
    span = int(u[-1]) - lo + 1
    runs_bytes = 16 * (breaks.size + 1)
    if span // 8 + 1 < runs_bytes:
        bits = np.zeros(span, dtype=bool)
        bits[u - lo] = True
        return BITMAP, lo, count, np.packbits(bits, bitorder="little").tobytes()
    starts = np.empty(breaks.size + 1, dtype=np.int64)
    starts[0] = u[0]
    starts[1:] = u[breaks + 1]
    ends = np.empty(breaks.size + 1, dtype=np.int64)
    ends[:-1] = u[breaks]
    ends[-1] = u[-1]
    pairs = np.empty(2 * starts.size, dtype=np.int64)
    pairs[0::2] = starts
    pairs[1::2] = ends - starts + 1
    return RUNS, lo, count, pairs.tobytes()


def decode(kind: int, lo: int, count: int, payload: bytes | memoryview) -> np.ndarray:
    """The sorted distinct indices of one set."""
    if kind == EMPTY:
        return np.empty(0, dtype=np.int64)
    if kind == RANGE:
        return np.arange(lo, lo + count, dtype=np.int64)
    if kind == RUNS:
        pairs = np.frombuffer(payload, dtype=np.int64)
        return runs_to_indices(pairs[0::2], pairs[1::2])
    bits = np.unpackbits(np.frombuffer(payload, dtype=np.uint8), bitorder="little")
    return np.flatnonzero(bits).astype(np.int64) + lo


def runs_to_indices(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    total = int(lengths.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    # Each run contributes start, start+1, ...: a cumulative sum of ones with a jump at each run start.
    steps = np.ones(total, dtype=np.int64)
    heads = np.concatenate(([0], np.cumsum(lengths[:-1])))
    steps[heads] = starts - np.concatenate(([0], starts[:-1] + lengths[:-1] - 1))
    return np.cumsum(steps)


def indices_to_runs(u: np.ndarray) -> np.ndarray:
    """Sorted distinct indices -> flat [start0, len0, start1, len1, ...] int64 array."""
    if u.size == 0:
        return np.empty(0, dtype=np.int64)
    breaks = np.flatnonzero(np.diff(u) != 1)
    starts = np.concatenate((u[:1], u[breaks + 1]))
    ends = np.concatenate((u[breaks], u[-1:]))
    pairs = np.empty(2 * starts.size, dtype=np.int64)
    pairs[0::2] = starts
    pairs[1::2] = ends - starts + 1
    return pairs


def to_json(u: np.ndarray) -> dict[str, Any] | None:
    """The viewer's ENC form of sorted distinct indices: null, {"runs": [...]}, or a base64 bitmap."""
    if u.size == 0:
        return None
    runs = indices_to_runs(u)
    lo = int(u[0])
    span = int(u[-1]) - lo + 1
    # A run costs two JSON numbers (~12 bytes); a bitmap costs span/6 base64 characters.
    if runs.size * 6 <= span // 6 + 16:
        return {"runs": runs.tolist()}
    bits = np.zeros(span, dtype=bool)
    bits[u - lo] = True
    return {
        "lo": lo,
        "n": span,
        "bits": base64.b64encode(np.packbits(bits, bitorder="little").tobytes()).decode("ascii"),
    }


class ElementSetsBuilder:
    """Appends one encoded set per execution on the hot path; `finish()` packs them into arrays."""

    __slots__ = ("kinds", "los", "counts", "chunks")

    def __init__(self) -> None:
        self.kinds: list[int] = []
        self.los: list[int] = []
        self.counts: list[int] = []
        self.chunks: list[bytes] = []

    def add(self, idx: np.ndarray) -> None:
        kind, lo, count, payload = encode(idx)
        self.kinds.append(kind)
        self.los.append(lo)
        self.counts.append(count)
        self.chunks.append(payload)

    def add_empty(self) -> None:
        self.kinds.append(EMPTY)
        self.los.append(0)
        self.counts.append(0)
        self.chunks.append(_EMPTY_BYTES)

    def add_range(self, lo: int, count: int) -> None:
        self.kinds.append(RANGE)
        self.los.append(lo)
        self.counts.append(count)
        self.chunks.append(_EMPTY_BYTES)

    def finish(self) -> ElementSets:
        sizes = np.fromiter((len(c) for c in self.chunks), dtype=np.int64, count=len(self.chunks))
        starts = np.zeros(len(self.chunks) + 1, dtype=np.int64)
        np.cumsum(sizes, out=starts[1:])
        return ElementSets(
            kind=np.asarray(self.kinds, dtype=np.uint8),
            lo=np.asarray(self.los, dtype=np.int64),
            count=np.asarray(self.counts, dtype=np.int64),
            start=starts,
            data=np.frombuffer(b"".join(self.chunks), dtype=np.uint8),
        )


@dataclass
class ElementSets:
    """Many compact sets, columnar. Set i is (kind[i], lo[i], count[i], data[start[i]:start[i+1]])."""

    kind: np.ndarray
    lo: np.ndarray
    count: np.ndarray
    start: np.ndarray
    data: np.ndarray

    def __len__(self) -> int:
        return int(self.kind.size)

    @property
    def nbytes(self) -> int:
        return int(self.kind.nbytes + self.lo.nbytes + self.count.nbytes + self.start.nbytes + self.data.nbytes)

    def get(self, i: int) -> np.ndarray:
        return decode(
            int(self.kind[i]),
            int(self.lo[i]),
            int(self.count[i]),
            self.data[self.start[i] : self.start[i + 1]].tobytes(),
        )

    def union(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Sorted distinct indices of the union of the given sets (all sets when rows is None)."""
        if rows is not None and len(rows) == 1:  # one set is already sorted and distinct
            return self.get(int(rows[0]))
        parts = self.gather(rows)
        if not parts:
            return np.empty(0, dtype=np.int64)
        return np.unique(np.concatenate(parts))

    def gather(self, rows: np.ndarray | None = None) -> list[np.ndarray]:
        """The indices of each given set (RANGE sets without a Python loop over elements)."""
        if rows is None:
            rows = np.arange(len(self))
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size == 0:
            return []
        kinds = self.kind[rows]
        out: list[np.ndarray] = []
        ranges = rows[kinds == RANGE]
        if ranges.size:
            out.append(runs_to_indices(self.lo[ranges], self.count[ranges]))
        for i in rows[(kinds == RUNS) | (kinds == BITMAP)]:
            out.append(self.get(int(i)))
        return out

    def merged_runs(self, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(starts, ends), sorted, disjoint, half-open: the union of the given sets as runs.

        Costs time by the sets' compact size (ranges and runs, a bitmap's bytes), never by lanes.
        """
        if rows is None:
            rows = np.arange(len(self))
        rows = np.asarray(rows, dtype=np.int64)
        kinds = self.kind[rows] if rows.size else np.empty(0, np.uint8)
        starts, lens = [], []
        r = rows[kinds == RANGE]
        if r.size:
            starts.append(self.lo[r])
            lens.append(self.count[r])
        for i in rows[kinds == RUNS]:
            pairs = np.frombuffer(self.data[self.start[i] : self.start[i + 1]].tobytes(), dtype=np.int64)
            starts.append(pairs[0::2])
            lens.append(pairs[1::2])
        for i in rows[kinds == BITMAP]:
            bits = np.unpackbits(
                np.frombuffer(self.data[self.start[i] : self.start[i + 1]].tobytes(), dtype=np.uint8), bitorder="little"
            ).astype(np.int8)
            edges = np.flatnonzero(np.diff(np.concatenate(([0], bits, [0]))))
            starts.append(edges[0::2] + self.lo[i])
            lens.append(edges[1::2] - edges[0::2])
        if not starts:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        st = np.concatenate(starts).astype(np.int64)
        en = st + np.concatenate(lens).astype(np.int64)
        keep = en > st
        st, en = st[keep], en[keep]
        if st.size == 0:
            return st, en
        order = np.argsort(st, kind="stable")
        st, en = st[order], np.maximum.accumulate(en[order])
        heads = np.flatnonzero(np.concatenate(([True], st[1:] > en[:-1])))
        tails = np.append(heads[1:] - 1, st.size - 1)
        return st[heads], en[tails]

    def cover(self, rows: np.ndarray | None, size: int) -> np.ndarray:
        """Boolean mask over [0, size) of the union of the given sets (indices outside are ignored).

        Merged runs are marked as slices, so a million-element tile costs no index array.
        """
        out = np.zeros(size, dtype=bool)
        if size == 0:
            return out
        st, en = self.merged_runs(rows)
        st, en = np.clip(st, 0, size), np.clip(en, 0, size)
        for lo, hi in zip(st.tolist(), en.tolist()):
            out[lo:hi] = True
        return out

    def runs(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row, start, length) of every run of the given sets: ranges stay ranges, others are split."""
        rows = np.asarray(rows, dtype=np.int64)
        kinds = self.kind[rows]
        r_rows = [rows[kinds == RANGE]]
        r_start = [self.lo[r_rows[0]]]
        r_len = [self.count[r_rows[0]]]
        for i in rows[(kinds == RUNS) | (kinds == BITMAP)]:
            pairs = indices_to_runs(self.get(int(i)))
            r_rows.append(np.full(pairs.size // 2, i, dtype=np.int64))
            r_start.append(pairs[0::2])
            r_len.append(pairs[1::2])
        return np.concatenate(r_rows), np.concatenate(r_start), np.concatenate(r_len)

    def arrays(self) -> dict[str, np.ndarray]:
        return {"kind": self.kind, "lo": self.lo, "count": self.count, "start": self.start, "data": self.data}

    @staticmethod
    def from_arrays(a: dict[str, np.ndarray]) -> ElementSets:
        return ElementSets(a["kind"], a["lo"], a["count"], a["start"], a["data"])
