"""What a split launch's children store, and its replay in the parent (parallel.py).

A child's programs write their own copy of the launch's memory (the fork's copy-on-write pages); it also
logs each store (`StoreLog`): contiguous runs as (address, bytes), scattered lanes with their addresses.
At each chunk's end the child appends the chunk's stored bytes to its slot's `StoreFile` (a file in memory
that the parent opened before the fork) and sends only their place in it, with the runs, in the chunk's
frame; the parent maps those bytes (no copy through the pipe, nothing read on its one core while 16
children run) and, once every chunk is in, writes every chunk's stores in program order (`write_stores`).

Invariants (tests/engine/test_store_log.py): replaying a child's logs into the memory as it was before the
split gives exactly the memory the child's stores made, in their order (a later lane or chunk wins);
the bytes read back from a StoreFile are those appended, whatever their length or alignment.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..interpreter import compat

# The parent writes the children's stores with up to WRITE_THREADS threads when they are at least
# PARALLEL_WRITE_BYTES (each thread at least half that).
WRITE_THREADS = 8
PARALLEL_WRITE_BYTES = 4 << 20
# Where each chunk's bytes start in a StoreFile: a multiple of the mapping granularity, so the parent maps
# exactly one chunk's bytes.
_ALIGN = max(mmap.ALLOCATIONGRANULARITY, mmap.PAGESIZE)


class StoreLog:
    """The bytes a child's programs stored, in order: contiguous runs as (address, bytes), scattered
    lanes with their addresses."""

    def __init__(self) -> None:
        # The stored bytes since the last take, back to back, in one buffer that the child keeps for all
        # its chunks (a bytes object per store, joined at each take, copied every byte twice: a child's
        # frames took 30 ms, now 17, of its 0.9 s; softmax 2048x4096, 2 workers, bench/split_profile.py).
        self.buf = np.empty(1 << 16, dtype=np.uint8)
        self._clear()

    def _clear(self) -> None:
        self.kind: list[int] = []  # 0: contiguous from `start`; 1: scattered, addresses in `addrs`
        self.itemsize: list[int] = []
        self.count: list[int] = []
        self.start: list[int] = []
        self.addrs: list[np.ndarray] = []
        self.used = 0

    def __call__(self, ptrs: np.ndarray, values: np.ndarray, mask: np.ndarray) -> None:
        # (Called once per store of every program a child runs: each numpy call here is a share of the
        # split's overhead, so the common case, values and mask of the pointers' shape, takes no copies.)
        p = ptrs.reshape(-1)
        shape = ptrs.shape
        v = (values if values.shape == shape else np.broadcast_to(values, shape)).reshape(-1)
        m = (mask if mask.shape == shape else np.broadcast_to(mask, shape)).reshape(-1)
        if not m.all():
            p, v = p[m], v[m]
        n = p.size
        if n == 0:
            return
        size = v.dtype.itemsize
        used, end = self.used, self.used + n * size
        if end > self.buf.size:
            grown = np.empty(max(end, 2 * self.buf.size), dtype=np.uint8)
            grown[:used] = self.buf[:used]
            self.buf = grown
        self.buf[used:end].view(v.dtype)[...] = v  # (one copy, whatever v's strides)
        self.used = end
        # Contiguous when the last lane is where the first's run would end and every step is one item.
        first = int(p[0])
        if n == 1 or (int(p[-1]) - first == (n - 1) * size and bool((p[1:] - p[:-1] == size).all())):
            kind, itemsize, count, start = self.kind, self.itemsize, self.count, self.start
            if kind and kind[-1] == 0 and itemsize[-1] == size and start[-1] + count[-1] * size == first:
                # It goes on where the last store ended (the next block of a row, the next program's
                # block): one longer run, so the parent writes a chunk's output in a few copies.
                count[-1] += n
                return
            itemsize.append(size)
            count.append(n)
            kind.append(0)
            start.append(first)
        else:
            self.itemsize.append(size)
            self.count.append(n)
            self.kind.append(1)
            self.start.append(0)
            self.addrs.append(np.ascontiguousarray(p, dtype=np.uint64))  # (a copy only where it must)

    def take(self) -> dict[str, np.ndarray]:
        """The stores logged since the last take, as arrays; the log starts again empty. Their "st.vals"
        is the log's own buffer, valid until the next store: the child writes the chunk's frame at once."""
        out: dict[str, np.ndarray] = {
            "st.kind": np.asarray(self.kind, dtype=np.uint8),
            "st.itemsize": np.asarray(self.itemsize, dtype=np.uint8),
            "st.count": np.asarray(self.count, dtype=np.int64),
            "st.start": np.asarray(self.start, dtype=np.uint64),
            "st.addrs": np.concatenate(self.addrs) if self.addrs else np.empty(0, dtype=np.uint64),
            "st.vals": self.buf[: self.used],
        }
        self._clear()
        return out


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def apply_stores(a: dict[str, np.ndarray]) -> None:
    """Replay a child's store log into this process's memory, in the order the child stored."""
    vals = a["st.vals"]
    base = vals.ctypes.data
    off = aoff = 0
    addrs = a["st.addrs"]
    for kind, size, count, start in zip(
        a["st.kind"].tolist(), a["st.itemsize"].tolist(), a["st.count"].tolist(), a["st.start"].tolist()
    ):
        nbytes = size * count
        if kind == 0:
            ctypes.memmove(start, base + off, nbytes)
        else:
            v = vals[off : off + nbytes]
            dt = _UINT.get(size)
            if dt is not None:
                compat.raw_store(addrs[aoff : aoff + count], v.view(dt))
            else:  # an odd item size: lane by lane
                for k, addr in enumerate(addrs[aoff : aoff + count].tolist()):
                    ctypes.memmove(addr, base + off + k * size, size)
            aoff += count
        off += nbytes


def _disjoint_runs(logs: list[dict[str, np.ndarray]]) -> list[tuple[int, int, int]] | None:
    """Every store of the logs as (destination, source address, bytes), when all are contiguous runs and
    no two overlap (then their order does not matter); None otherwise."""
    runs: list[tuple[int, int, int]] = []
    for a in logs:
        kind = a["st.kind"]
        if kind.any():  # a scattered store: the logs are written in order
            return None
        nbytes = a["st.count"] * a["st.itemsize"].astype(np.int64)
        src = a["st.vals"].ctypes.data + np.concatenate(([0], np.cumsum(nbytes)[:-1]))
        runs.extend(zip(a["st.start"].tolist(), src.tolist(), nbytes.tolist()))
    if len(runs) > 1:
        runs.sort()
        for (d0, _, n0), (d1, _, _) in zip(runs, runs[1:]):
            if d0 + n0 > d1:
                return None
    return runs


def write_stores(logs: list[dict[str, np.ndarray]], threads: int) -> None:
    """Replay the children's store logs (in program order) into this process's memory. A launch's output
    of disjoint contiguous runs (the common case) is written by up to `threads` threads at once: after the
    fork each page's first write is a page fault, and a 64 MB output took 40 ms on one thread, after the
    last child had ended (ctypes' memmove lets go of the GIL). Anything else is written in order."""
    runs = _disjoint_runs(logs) if threads > 1 else None
    total = sum(n for _, _, n in runs) if runs else 0
    if not runs or total < PARALLEL_WRITE_BYTES:
        for a in logs:
            apply_stores(a)
        return
    k = min(threads, max(1, total // (PARALLEL_WRITE_BYTES // 2)))
    ends = [total * (g + 1) // k for g in range(k)]  # group g writes bytes [ends[g-1], ends[g]) of all
    groups: list[list[tuple[int, int, int]]] = [[] for _ in range(k)]
    g = done = 0
    for dst, src, n in runs:
        while n > 0:  # (a run may be cut between two groups)
            take = min(n, ends[g] - done)
            if take == 0:
                g += 1
                continue
            groups[g].append((dst, src, take))
            dst, src, n, done = dst + take, src + take, n - take, done + take

    def write(group: list[tuple[int, int, int]]) -> None:
        for dst, src, n in group:
            ctypes.memmove(dst, src, n)

    try:
        with ThreadPoolExecutor(max_workers=k, thread_name_prefix="triton-lens-stores") as pool:
            list(pool.map(write, groups))
    except RuntimeError:  # no new threads (a launch from the script's atexit): the same runs, on this one
        for group in groups:
            write(group)


class StoreFile:
    """One child's stored bytes, chunk after chunk: a file in memory (memfd; an unlinked temporary file
    where there is none) that the parent opens before the fork. The child appends (`append`) and the
    parent maps each chunk's part (`view`), read-only, once the chunk's frame says where it is."""

    def __init__(self) -> None:
        self.fd = _memory_file()
        self.end = 0  # (child) where the next chunk's bytes go

    def append(self, data: np.ndarray) -> tuple[int, int]:
        """(child) data's bytes at the file's end: (offset, length)."""
        at, n = self.end, data.nbytes
        view = data.reshape(-1).view(np.uint8).data
        done = 0
        while done < n:  # (a write of more than 2 GB is cut short; any other stops only on an error)
            done += os.pwrite(self.fd, view[done:], at + done)
        self.end = -(-(at + n) // _ALIGN) * _ALIGN
        return at, n

    def view(self, at: int, n: int) -> np.ndarray:
        """(parent) The n bytes appended at `at`, read-only. The mapping is the array's: it is unmapped
        when the last view of it goes. Its pages are this process's at once (MAP_POPULATE: one call, not a
        page fault per 4 KB when the stores are written), and so in its resident size, which the runner's
        memory limit counts."""
        if n == 0:
            a = np.empty(0, dtype=np.uint8)
        else:
            flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
            m = mmap.mmap(self.fd, n, flags=flags, prot=mmap.PROT_READ, offset=at)
            a = np.frombuffer(m, dtype=np.uint8, count=n)
        a.flags.writeable = False  # (the pages are read-only: a write would be a segfault, not an error)
        return a

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _memory_file() -> int:
    memfd_create = getattr(os, "memfd_create", None)
    if memfd_create is not None:
        try:
            return int(memfd_create("triton-lens-stores", os.MFD_CLOEXEC))
        except OSError:
            pass
    f = tempfile.TemporaryFile()  # not Linux (or memfd refused): a file unlinked at once
    fd = os.dup(f.fileno())
    f.close()
    os.set_inheritable(fd, False)
    return fd
