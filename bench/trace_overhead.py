"""CPU time of a traced run over the bare interpreter, and the trace's bytes per element access.

Both run in this one process, alternating (bare, traced, bare, traced, ...), so machine load hits
both alike; the ratio is the median of the per-pair ratios of `time.process_time`. The trace's size
is what the worker streams for each launch (the access records, without the tensors' values).

    python bench/trace_overhead.py [--reps N] [--out FILE]
"""
from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
import sys
import time
from datetime import date

os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import triton  # noqa: E402

from overhead_kernels import workloads  # noqa: E402
from triton_lens.trace import stream  # noqa: E402
from triton_lens.trace.recorder import Recorder  # noqa: E402


def measure(fn, reps: int):
    sizes = {"bytes": 0, "lanes": 0}

    def sink(trace):
        meta, arrays = stream.launch_to_frame(trace)
        buf = io.BytesIO()
        sizes["bytes"] += stream.write_frame(buf, "launch", meta, arrays)
        sizes["lanes"] += int(trace.ex_lanes.sum())

    bare, traced, ratios = [], [], []
    fn()  # warm up: the interpreter rewrites the kernel once
    for _ in range(reps):
        t0 = time.process_time()
        fn()
        t_bare = time.process_time() - t0
        with Recorder(on_launch=sink, value_limit=0):
            t0 = time.process_time()
            fn()
            t_traced = time.process_time() - t0
        bare.append(t_bare)
        traced.append(t_traced)
        ratios.append(t_traced / t_bare)
    return statistics.median(bare), statistics.median(traced), statistics.median(ratios), sizes["bytes"] / max(sizes["lanes"], 1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    lines = [f"# trace overhead, {date.today().isoformat()}, {platform.machine()} {os.cpu_count()} cores, "
             f"Python {platform.python_version()}, triton {triton.__version__}, {args.reps} alternating pairs",
             f"{'workload':<28} {'bare ms':>9} {'traced ms':>10} {'ratio':>7} {'bytes/elem access':>18}"]
    print(lines[0])
    print(lines[1])
    for name, (fn, check) in workloads().items():
        b, t, r, bpe = measure(fn, args.reps)
        assert check(), f"{name}: wrong result"
        line = f"{name:<28} {b * 1e3:>9.0f} {t * 1e3:>10.0f} {r:>6.3f}x {bpe:>18.3f}"
        print(line, flush=True)
        lines.append(line)
    if args.out:
        with open(args.out, "a", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
