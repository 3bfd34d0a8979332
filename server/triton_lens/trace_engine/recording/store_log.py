"""What a split launch's children store, and its replay in the parent (parallel.py).

A child logs each store its programs make (`StoreLog`): contiguous runs as (address, bytes), scattered
lanes with their addresses; it writes them to its own copy of the launch's memory (the fork's copy-on-write
pages) only once a load could read them (child_writes.py).
At each chunk's end the child appends the chunk's stored bytes to its slot's `StoreFile` (a file in memory
that the parent opened before the fork) and sends only their place in it, with the runs, in the chunk's
frame (nothing crosses the pipe twice, nothing is read on the parent's one core while 16 children run);
once every chunk is in, the parent writes every chunk's stores in program order (`write_stores`), reading
the bytes from the files straight into their destination.

Invariants (tests/engine/test_store_log.py): replaying a child's logs into the memory as it was before the
split gives exactly the memory the child's stores made, in their order (a later lane or chunk wins);
the bytes read back from a StoreFile are those appended, whatever their length or alignment.
"""

from __future__ import annotations

import ctypes
import os
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..interpreter import compat

# The parent writes the children's stores with up to WRITE_THREADS threads when they are at least
# PARALLEL_WRITE_BYTES (each thread at least half that).
WRITE_THREADS = 8
PARALLEL_WRITE_BYTES = 4 << 20
# A log whose runs are this long on average (and none scattered) is read from its file straight into
# place, run by run; any other is read into memory first, in one read.
DIRECT_RUN_BYTES = 64 << 10


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

    def __call__(
        self, ptrs: np.ndarray, values: np.ndarray, mask: np.ndarray, reach: bool = True
    ) -> tuple[int, int] | None:
        """Log a store; the addresses [lo, hi) its bytes lie in (None: no lane active, or `reach` False: a
        scattered store's reach costs two passes over its lanes)."""
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
            return None
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
                return first, first + n * size
            itemsize.append(size)
            count.append(n)
            kind.append(0)
            start.append(first)
            return first, first + n * size
        self.itemsize.append(size)
        self.count.append(n)
        self.kind.append(1)
        self.start.append(0)
        self.addrs.append(np.ascontiguousarray(p, dtype=np.uint64))  # (a copy only where it must)
        return (int(p.min()), int(p.max()) + size) if reach else None

    def take(self) -> dict[str, np.ndarray]:
        """The stores logged since the last take, as arrays; the log starts again empty. Their "st.vals"
        is the log's own buffer, valid until the next store: the child writes the chunk's frame at once."""
        out = self.logged()
        self._clear()
        return out

    def logged(self) -> dict[str, np.ndarray]:
        """The stores logged since the last take, as take() gives them, left in the log."""
        return {
            "st.kind": np.asarray(self.kind, dtype=np.uint8),
            "st.itemsize": np.asarray(self.itemsize, dtype=np.uint8),
            "st.count": np.asarray(self.count, dtype=np.int64),
            "st.start": np.asarray(self.start, dtype=np.uint64),
            "st.addrs": np.concatenate(self.addrs) if self.addrs else np.empty(0, dtype=np.uint64),
            "st.vals": self.buf[: self.used],
        }


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


class MemoryBytes:
    """A log's stored bytes, back to back, in this process's memory (an array)."""

    def __init__(self, vals: np.ndarray) -> None:
        self.vals = vals.reshape(-1).view(np.uint8)

    def copy_to(self, dst: int, off: int, n: int) -> None:
        ctypes.memmove(dst, self.vals.ctypes.data + off, n)

    def read(self, off: int, n: int) -> np.ndarray:
        return self.vals[off : off + n]


class FileBytes:
    """A log's stored bytes, back to back, at `at` in a StoreFile: read straight into their destination
    (pread: one copy, by the kernel, no mapping of them in this process)."""

    def __init__(self, file: StoreFile, at: int) -> None:
        self.file, self.at = file, at

    def copy_to(self, dst: int, off: int, n: int) -> None:
        self.file.read_into(memoryview((ctypes.c_char * n).from_address(dst)).cast("B"), self.at + off)

    def read(self, off: int, n: int) -> np.ndarray:
        out = np.empty(n, dtype=np.uint8)
        self.file.read_into(out.data, self.at + off)
        return out


Bytes = MemoryBytes | FileBytes


@dataclass
class ChunkStores:
    """One chunk's store log, as the parent replays it: the runs (StoreLog.take's arrays) and where
    their bytes are."""

    kind: np.ndarray
    itemsize: np.ndarray
    count: np.ndarray
    start: np.ndarray
    addrs: np.ndarray
    src: Bytes

    def ready(self) -> ChunkStores:
        """This log for writing in order (apply_stores), its bytes read into memory at once (one read) where
        it has scattered stores or runs of under DIRECT_RUN_BYTES on average: a read from the file per such
        store costs more than its copy."""
        if not isinstance(self.src, FileBytes) or not len(self.count):
            return self
        total = int((self.count * self.itemsize.astype(np.int64)).sum())
        if not self.kind.any() and total >= DIRECT_RUN_BYTES * len(self.count):
            return self
        return ChunkStores(
            self.kind, self.itemsize, self.count, self.start, self.addrs, MemoryBytes(self.src.read(0, total))
        )

    @classmethod
    def of(cls, a: dict[str, np.ndarray], src: Bytes | None = None) -> ChunkStores:
        """From StoreLog.take's arrays; their bytes in `src`, else in a["st.vals"]."""
        return cls(
            a["st.kind"],
            a["st.itemsize"],
            a["st.count"],
            a["st.start"],
            a["st.addrs"],
            src if src is not None else MemoryBytes(a["st.vals"]),
        )


def apply_stores(c: ChunkStores) -> None:
    """Replay a child's store log into this process's memory, in the order the child stored."""
    c = c.ready()
    off = aoff = 0
    addrs = c.addrs
    for kind, size, count, start in zip(c.kind.tolist(), c.itemsize.tolist(), c.count.tolist(), c.start.tolist()):
        nbytes = size * count
        if kind == 0:
            c.src.copy_to(start, off, nbytes)
        else:
            v = np.ascontiguousarray(c.src.read(off, nbytes))
            dt = _UINT.get(size)
            if dt is not None:
                compat.raw_store(addrs[aoff : aoff + count], v.view(dt))
            else:  # an odd item size: lane by lane
                for k, addr in enumerate(addrs[aoff : aoff + count].tolist()):
                    ctypes.memmove(addr, v.ctypes.data + k * size, size)
            aoff += count
        off += nbytes


# A contiguous run of a log: (destination address, the log's index, offset in its bytes, length).
Run = tuple[int, int, int, int]


def _disjoint_runs(logs: list[ChunkStores]) -> list[Run] | None:
    """Every store of the logs as a Run, when all are contiguous runs and no two overlap (then their order
    does not matter); None otherwise."""
    runs: list[Run] = []
    for i, c in enumerate(logs):
        if c.kind.any():  # a scattered store: the logs are written in order
            return None
        nbytes = c.count * c.itemsize.astype(np.int64)
        offs = np.concatenate(([0], np.cumsum(nbytes)[:-1]))
        runs.extend((d, i, o, n) for d, o, n in zip(c.start.tolist(), offs.tolist(), nbytes.tolist()))
    if len(runs) > 1:
        runs.sort()
        for (d0, _, _, n0), (d1, _, _, _) in zip(runs, runs[1:]):
            if d0 + n0 > d1:
                return None
    return runs


def write_stores(logs: list[ChunkStores], threads: int) -> None:
    """Replay the children's store logs (in program order) into this process's memory. A launch's output
    of disjoint contiguous runs (the common case) is written by up to `threads` threads at once: after the
    fork each page's first write is a page fault, and a 64 MB output took 40 ms on one thread, after the
    last child had ended (ctypes' memmove and pread let go of the GIL). Anything else is written in order."""
    runs = _disjoint_runs(logs) if threads > 1 else None
    total = sum(r[3] for r in runs) if runs else 0
    if not runs or total < PARALLEL_WRITE_BYTES:
        for c in logs:
            apply_stores(c)
        return
    k = min(threads, max(1, total // (PARALLEL_WRITE_BYTES // 2)))
    ends = [total * (g + 1) // k for g in range(k)]  # group g writes bytes [ends[g-1], ends[g]) of all
    groups: list[list[Run]] = [[] for _ in range(k)]
    g = done = 0
    for dst, i, off, n in runs:
        while n > 0:  # (a run may be cut between two groups)
            take = min(n, ends[g] - done)
            if take == 0:
                g += 1
                continue
            groups[g].append((dst, i, off, take))
            dst, off, n, done = dst + take, off + take, n - take, done + take

    # Each run is read from its file straight into place, however short (a layer norm's 4-byte row
    # statistics between its rows): the reads' cost is spread over the threads. Reading a log of short runs
    # into memory first, as the in-order path does, took 21 ms after the last child where base's took 6-9
    # (layer norm 410x8192, 2 workers, 2-core VM): one serial read into fresh pages.
    def write(group: list[Run]) -> None:
        for dst, i, off, n in group:
            logs[i].src.copy_to(dst, off, n)

    try:
        with ThreadPoolExecutor(max_workers=k, thread_name_prefix="triton-lens-stores") as pool:
            list(pool.map(write, groups))
    except RuntimeError:  # no new threads (a launch from the script's atexit): the same runs, on this one
        for group in groups:
            write(group)


class StoreFile:
    """One child's stored bytes, chunk after chunk: a file in memory (memfd; an unlinked temporary file
    where there is none) that the parent opens before the fork. The child appends (`append`); the parent
    reads each chunk's bytes straight into their destination when it writes the stores (`FileBytes`).
    The parent maps none of it: a mapping per chunk cost a descriptor each (Python's mmap keeps a dup: a
    launch of 1024 chunks could run out of them), and reading into place is as fast as mapping, then
    copying (2-core VM: ~10 ms for 32 MB either way; the device: 7.3 ms for 64 MB by 8 threads,
    bench/store_write.py).
    The runner's memory limit counts the file's pages (process_tree.footprint_bytes: in-memory files)."""

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
        self.end = at + n
        return at, n

    def read_into(self, out: memoryview, at: int) -> None:
        """(parent) len(out) bytes from `at` into out (any writable memory)."""
        done, n = 0, len(out)
        while done < n:
            got = _pread_into(self.fd, out[done:], at + done)
            if got <= 0:
                raise OSError(f"a split child's stored bytes end at {at + done}, not {at + n}")
            done += got

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def close_later(files: list[StoreFile]) -> None:
    """Close the files on a thread of their own: a file's last close frees its pages (16k for a 64 MB
    output; 1.9 ms on the 2-core VM), which the launch need not wait for. On the device the split's end grew
    9 -> 19-20 ms with the files closed in line, of which the write was 7.3 ms: the freeing is the likely
    rest, not measured there."""

    def close() -> None:
        for f in files:
            f.close()

    try:
        threading.Thread(target=close, name="triton-lens-store-files", daemon=True).start()
    except RuntimeError:  # no new threads (a launch from the script's atexit)
        close()


def _pread_into(fd: int, out: memoryview, at: int) -> int:
    preadv = getattr(os, "preadv", None)
    if preadv is not None:
        return int(preadv(fd, [out], at))
    data = os.pread(fd, len(out), at)  # (no preadv: one more copy)
    out[: len(data)] = data
    return len(data)


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
