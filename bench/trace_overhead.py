"""CPU time of a traced run over the bare interpreter, and the trace's bytes per element access.

All run in this one process, alternating (bare, hooks only, as shipped, bare, ...), so machine load
hits them alike; each ratio is the median of the per-round ratios of `time.process_time`.
- "hooks only": the recorder's cost alone (every access recorded, provenance, bounds checks).
- "as shipped": the same, plus what the tool leaves out of the bare interpreter's work: the int32
  overflow checks it builds for every integer add/sub/mul and then discards (their only consumer,
  device_assert, is a no-op unless debug is on, and the interpreter never turns it on), and the scan
  of triton.language that every @jit helper call (tl.max, tl.sum, ...) repeats to patch modules the
  launch has already patched (trace_engine/interpreter/device_calls.py).
The trace's size is what the worker streams for each launch (access records, without tensor values).

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

from triton_lens.trace_engine.recording import stream  # noqa: E402
from triton_lens.trace_engine.recording.recorder import Recorder  # noqa: E402


def measure(fn, reps: int):
    sizes = {"bytes": 0, "lanes": 0}

    def sink(trace):
        meta, arrays = stream.launch_to_frame(trace)
        buf = io.BytesIO()
        sizes["bytes"] += stream.write_frame(buf, "launch", meta, arrays)
        sizes["lanes"] += int(trace.ex_lanes.sum())

    times = {"bare": [], "hooks": [], "shipped": []}
    fn()  # warm up: the interpreter rewrites the kernel once
    for _ in range(reps):
        t0 = time.process_time()
        fn()
        times["bare"].append(time.process_time() - t0)
        for name, skip in (("hooks", False), ("shipped", True)):
            with Recorder(on_launch=sink, value_limit=0, skip_dead_work=skip):
                t0 = time.process_time()
                fn()
                times[name].append(time.process_time() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    ratio = {k: statistics.median([t / b for t, b in zip(times[k], times["bare"])]) for k in ("hooks", "shipped")}
    return med, ratio, sizes["bytes"] / max(sizes["lanes"], 1)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    lines = [
        f"# trace overhead, {date.today().isoformat()}, {platform.machine()} {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, triton {triton.__version__}, {args.reps} alternating pairs",
        f"{'workload':<28} {'bare ms':>8} {'hooks only':>11} {'ratio':>7} {'as shipped':>11} {'ratio':>7}"
        f" {'bytes/elem access':>18}",
    ]
    print(lines[0])
    print(lines[1])
    for name, (fn, check) in workloads().items():
        med, ratio, bpe = measure(fn, args.reps)
        assert check(), f"{name}: wrong result"
        line = (
            f"{name:<28} {med['bare'] * 1e3:>8.0f} {med['hooks'] * 1e3:>8.0f} ms {ratio['hooks']:>6.3f}x "
            f"{med['shipped'] * 1e3:>8.0f} ms {ratio['shipped']:>6.3f}x {bpe:>18.3f}"
        )
        print(line, flush=True)
        lines.append(line)
    if args.out:
        with open(args.out, "a", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
