"""The analysis of a run against the run itself: ≤ 10% of the run time (or 1 s) on a run with > 100 M
out-of-bounds lanes and > 10 M touched elements (bench/kernels/oob_heavy.py).

Measured side by side in one process: the run (worker, as `triton-lens check` starts it), the whole
analysis (`analyze`), and, for scale, what expanding every out-of-bounds offset per lane costs (what
the analysis did before: concatenate and sort them).

    python bench/analysis_bound.py [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from datetime import date

import numpy as np

from triton_lens.analysis import analyze
from triton_lens.trace_engine.process.runner import RunRequest, run

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    args = ap.parse_args()
    script = os.path.join(HERE, "kernels", "oob_heavy.py")
    t0 = time.perf_counter()
    result = run(RunRequest(path=script, timeout_s=600, memory_mb=16384))
    run_s = time.perf_counter() - t0
    assert result.status == "ok", result.error
    oob_lanes = sum(int(L.ex_oob.sum(dtype=np.int64)) for L in result.launches)
    touched = sum(int(L.touched.count.sum()) for L in result.launches)
    t0 = time.perf_counter()
    a = analyze(result)
    analysis_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for L in result.launches:
        rows = np.flatnonzero(L.ex_oob > 0)
        if rows.size:
            np.unique(np.concatenate(L.oob.gather(rows)))
    per_lane_s = time.perf_counter() - t0
    oob = [f for f in a.findings if f.kind == "oob"]
    import triton

    lines = [
        f"# analysis_bound {date.today()} {platform.node()} python {platform.python_version()} triton {triton.__version__}",
        f"run: {len(result.launches)} launches, {oob_lanes:,} out-of-bounds lanes, {touched:,} touched elements "
        f"(per execution, summed), {len(oob)} oob findings",
        f"run (worker, wall)            {run_s:8.2f} s",
        f"analysis (analyze, whole)     {analysis_s:8.2f} s   ratio to run {analysis_s / run_s:6.3f}   "
        f"(limit: {max(0.1 * run_s, 1.0):.2f} s = max(10% of run, 1 s))",
        f"per-lane offsets (old way)    {per_lane_s:8.2f} s   ratio to run {per_lane_s / run_s:6.3f}",
        f"within limit: {'yes' if analysis_s <= max(0.1 * run_s, 1.0) else 'NO'}",
    ]
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "a") as f:
            f.write(text + "\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
