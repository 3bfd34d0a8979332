"""`triton-lens check FOLDER`: wall time of running the files one at a time (--jobs 1) against in
parallel (--jobs N), side by side in one run, alternating, so machine load hits both alike. Each file
runs in its own worker process (most of a short run is the worker importing torch and triton), so the
ratio is bounded by the cores that are free.

    python bench/check_parallel.py [--files K] [--jobs N] [--rounds R] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "corpus"
CLEAN = [
    "vector_add.py",
    "softmax.py",
    "layernorm.py",
    "matmul.py",
    "scalar_args.py",
    "multi_launch.py",
    "block_ptr_copy.py",
    "strided_views.py",
]


def wall(folder: str, jobs: int) -> float:
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "triton_lens", "check", folder, "--jobs", str(jobs)], capture_output=True, text=True
    )
    dt = time.perf_counter() - t0
    if p.returncode not in (0, 1):
        raise SystemExit(f"check failed ({p.returncode}): {p.stderr}")
    return dt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="check-parallel-")
    try:
        for name in CLEAN[: a.files]:
            shutil.copy(CORPUS / name, folder)
        ones, many = [], []
        for _ in range(a.rounds):
            ones.append(wall(folder, 1))
            many.append(wall(folder, a.jobs))
    finally:
        shutil.rmtree(folder)
    ratio = statistics.median(o / m for o, m in zip(ones, many))
    lines = [
        f"# check_parallel {date.today()} {platform.node()} cpus={os.cpu_count()} "
        f"load={os.getloadavg()[0]:.1f} python {platform.python_version()}",
        f"files={a.files} rounds={a.rounds}",
        f"--jobs 1: {statistics.median(ones):.1f} s   --jobs {a.jobs}: {statistics.median(many):.1f} s   "
        f"speed-up (median of per-round ratios): {ratio:.2f}x",
    ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if a.out:
        with open(a.out, "a", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
