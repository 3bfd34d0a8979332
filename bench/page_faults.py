"""What a page fault costs on this machine (issue 23): a split child writes, for the first time since its
fork, the pages of its own copy of the output rows it stores (4 a program for a 16 KB softmax row), of the
heap it reuses and of the memory it grows into; each is a minor fault, which a VM can make many times a
bare machine's (~0.5 us).

Per size: a fresh anonymous mapping's first write to each 4 KB page (zero-fill), the same pages written
again (no fault: the loop's own cost), after MADV_DONTNEED (the pages freed and taken again), and in a
forked child (copy-on-write of a page the parent wrote), in us a page; then the same for a mapping on
transparent huge pages (MADV_HUGEPAGE, a fault per 2 MB), per 4 KB of it.

    python bench/page_faults.py [--mb 1024] [--reps 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import mmap
import os
import platform
import time
from datetime import date

import numpy as np


def _write_pages_us(m: mmap.mmap) -> float:
    """us a 4 KB page to write one byte of each page of m."""
    a = np.frombuffer(m, dtype=np.uint8)
    t = time.perf_counter()
    a[::4096] = 1
    dt = time.perf_counter() - t
    del a
    return dt / (len(m) // 4096) * 1e6


def _in_fork_us(m: mmap.mmap) -> float:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.write(w, repr(_write_pages_us(m)).encode())
        os._exit(0)
    os.close(w)
    out = os.read(r, 100)
    os.close(r)
    os.waitpid(pid, 0)
    return float(out)


def measure(size: int, huge: bool) -> tuple[float, float, float, float]:
    m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if huge:
        m.madvise(mmap.MADV_HUGEPAGE)
    first = _write_pages_us(m)
    again = _write_pages_us(m)
    cow = _in_fork_us(m)
    m.madvise(mmap.MADV_DONTNEED)
    retaken = _write_pages_us(m)
    m.close()
    return first, again, retaken, cow


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    size = args.mb << 20
    lines = [
        f"# bench/page_faults.py --mb {args.mb} --reps {args.reps}  ({date.today()}, {platform.node()}, "
        f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, kernel {platform.release()})",
        "# us per 4 KB page to write one byte in each: first (zero-fill fault), again (no fault), "
        "retaken (after MADV_DONTNEED), cow (in a forked child, the parent's page copied)",
        f"{'pages':10} {'rep':>3} {'first':>8} {'again':>8} {'retaken':>8} {'cow':>8}",
    ]
    print("\n".join(lines), flush=True)
    for huge in (False, True):
        for rep in range(args.reps):
            first, again, retaken, cow = measure(size, huge)
            row = f"{'2 MB (THP)' if huge else '4 KB':10} {rep:3d} {first:8.3f} {again:8.3f} {retaken:8.3f} {cow:8.3f}"
            print(row, flush=True)
            lines.append(row)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
