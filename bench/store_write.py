"""The split parent's last step (trace_engine/recording/store_log.py `write_stores`): the children's stored
bytes written into the launch's output after the last child ended, from the slots' files (pread, as the
tool does) or from the parent's memory (as when the parent had read them during the split), by 1 to N
threads, side by side in one run.

Like a split: the output is on huge pages (torch, THP_MEM_ALLOC_ENABLE=1), a forked child writes its copy
(copy-on-write) and leaves the bytes in a StoreFile, then exits; the parent's output pages are then
write-protected, as after a real split. Median of --reps.

    python bench/store_write.py [--mb 64] [--chunks 145] [--threads 1,8,16] [--reps 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "server"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from triton_lens.trace_engine.recording.store_log import (  # noqa: E402
    ChunkStores,
    FileBytes,
    MemoryBytes,
    StoreFile,
    write_stores,
)


def _split_once(out: np.ndarray, vals: np.ndarray, chunks: int) -> tuple[StoreFile, list[tuple[int, int, int]]]:
    """A child writes `vals` into its copy of `out` and leaves them in a StoreFile, chunk by chunk:
    (destination offset, file offset, bytes) per chunk."""
    f = StoreFile()
    bounds = np.linspace(0, out.nbytes, chunks + 1).astype(np.int64)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            places = []
            for lo, hi in zip(bounds[:-1], bounds[1:]):
                out[lo:hi] = vals[lo:hi]
                at, n = f.append(vals[lo:hi])
                places.append((int(lo), at, n))
            os.write(w, json.dumps(places).encode())
        finally:
            os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 1 << 20):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    return f, [tuple(p) for p in json.loads(data)]


def _logs(out: np.ndarray, places, src) -> list[ChunkStores]:
    one = np.ones(1, np.uint8)
    return [
        ChunkStores(
            np.zeros(1, np.uint8),
            one,
            np.array([n], np.int64),
            np.array([out.ctypes.data + d], np.uint64),
            np.empty(0, np.uint64),
            src(at, n),
        )
        for d, at, n in places
    ]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=64)
    ap.add_argument("--chunks", type=int, default=145)
    ap.add_argument("--threads", default="1,8,16")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    n = args.mb << 20
    out = torch.zeros(n, dtype=torch.uint8).numpy()
    out[:] = 1
    vals = np.random.default_rng(0).integers(0, 255, n, dtype=np.uint8)
    print(f"# bench/store_write.py {' '.join(sys.argv[1:])}: {os.cpu_count()} cpus; ms to write {args.mb} MB of stores")
    for threads in [int(t) for t in args.threads.split(",")]:
        times: dict[str, list[float]] = {"from files (pread)": [], "from memory (memmove)": []}
        for _ in range(args.reps):
            for how in times:
                out[:] = 1  # (the parent's own pages again, then shared by the fork)
                f, places = _split_once(out, vals, args.chunks)
                if how.startswith("from files"):
                    logs = _logs(out, places, lambda at, k: FileBytes(f, at))
                else:
                    logs = _logs(out, places, lambda at, k: MemoryBytes(FileBytes(f, at).read(0, k)))
                t = time.perf_counter()
                write_stores(logs, threads)
                times[how].append((time.perf_counter() - t) * 1e3)
                assert np.array_equal(out, vals)
                f.close()
        print(f"threads {threads:2d}: " + "; ".join(f"{k} {statistics.median(v):6.1f}" for k, v in times.items()))


if __name__ == "__main__":
    main()
