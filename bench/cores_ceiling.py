"""What the machine itself allows N processes: N forked copies of one bare-interpreter launch run at once,
each doing the same work a lone copy does, side by side with one copy alone (issue 13).

The ratio (one copy's wall time alone / the mean copy's wall time among N) is the parallel efficiency
that any scheme of N processes can reach on this machine at most: shared physical cores (SMT), memory
bandwidth, a VM's page-fault cost. bench/parallel.py's efficiency is to be read against it.

    python bench/cores_ceiling.py [--scale S] [--counts 1,2,4,8,16] [--only NAME] [--traced] [--out FILE]

--traced runs each copy under the tool's recorder in one process (ParallelRecorder with one worker, as
bench/parallel.py's "tool w=1"): if traced copies keep their speed where a split launch's children do
not, the difference is in the split, not in the machine.

--machine first runs three workloads that are no kernel at all, to tell apart what slows N busy copies
down: a pure Python loop (no memory to speak of: the cores' clock, i.e. an all-core turbo lower than a
lone core's), numpy on 64 KB arrays (the interpreter's kind of work, in each core's own cache) and numpy
streaming over 256 MB (the memory bandwidth the copies share).
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import sys
import time
from datetime import date

os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import triton  # noqa: E402
from parallel_kernels import bare_interpreter_fixes, workloads  # noqa: E402


def _traced(launch):
    import io

    from triton_lens.trace_engine.recording import stream
    from triton_lens.trace_engine.recording.parallel import ParallelRecorder

    def sink(trace) -> None:
        meta, arrays = stream.launch_to_frame(trace)
        stream.write_frame(io.BytesIO(), "launch", meta, arrays)

    def run() -> None:
        with ParallelRecorder(on_launch=sink, workers=1):
            launch()

    return run


def _python_loop() -> None:
    total = 0
    for i in range(6_000_000):
        total += i * i & 0xFF


def _numpy_in_cache() -> None:
    import numpy as np

    a = np.arange(8192, dtype=np.float64)  # 64 KB, as a 4096-lane block's offsets and values
    b = np.empty_like(a)
    for _ in range(100_000):
        np.multiply(a, 1.0000001, out=b)
        np.add(b, a, out=b)


def _numpy_stream() -> None:
    import numpy as np

    a = np.ones(32 << 20)  # 256 MB
    for _ in range(24):
        a += 1.0


MACHINE = {
    "machine: python loop (clock)": _python_loop,
    "machine: numpy 64 KB (core cache)": _numpy_in_cache,
    "machine: numpy 256 MB (bandwidth)": _numpy_stream,
}


def _copies(launch, n: int) -> list[tuple[float, float, int]]:
    """(wall, cpu, minor faults) of each of n forked copies of launch(), started together."""
    pipes = []
    go_r, go_w = os.pipe()
    for _ in range(n):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            # Had the parent's torch run parallel regions, a copy's first one would wait forever on
            # OpenMP threads it does not have: its torch runs on one thread.
            torch.set_num_threads(1)
            os.close(go_w)
            os.read(go_r, 1)  # every copy starts when all are forked
            t0 = time.perf_counter()
            launch()
            wall = time.perf_counter() - t0
            u = resource.getrusage(resource.RUSAGE_SELF)
            os.write(w, f"{wall} {u.ru_utime + u.ru_stime} {u.ru_minflt}".encode())
            os._exit(0)
        os.close(w)
        pipes.append((pid, r))
    os.close(go_r)
    os.write(go_w, b"x" * n)
    out = []
    for pid, r in pipes:
        wall, cpu, flt = os.read(r, 200).decode().split()
        os.close(r)
        os.waitpid(pid, 0)
        out.append((float(wall), float(cpu), int(flt)))
    os.close(go_w)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=0.02)
    ap.add_argument("--counts", default="1,2,4,8,16")
    ap.add_argument("--only", default="")
    ap.add_argument("--traced", action="store_true")
    ap.add_argument("--machine", action="store_true", help="first the three workloads that are no kernel")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    fixes = bare_interpreter_fixes()
    lines = [
        f"# bench/cores_ceiling.py --scale {args.scale} --counts {args.counts}{' --traced' if args.traced else ''}"
        f"{' --machine' if args.machine else ''}{' --only ' + args.only if args.only else ''}  "
        f"({date.today()}, "
        f"{platform.node()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, triton {triton.__version__}, "
        f"torch {torch.__version__}{', bare interpreter with: ' + fixes if fixes else ''})",
        "# N forked copies of one bare launch at once; wall/cpu = mean per copy; ceiling = one copy's wall alone / "
        "the mean copy's wall among N",
        f"{'workload':38} {'copies':>6} {'wall s':>8} {'cpu s':>8} {'faults':>8} {'ceiling':>8}",
    ]
    print("\n".join(lines), flush=True)
    machine = [(name, fn, True) for name, fn in MACHINE.items()] if args.machine else []
    kernels = [(name, w[0], False) for name, w in workloads(args.scale).items()]
    for name, launch, is_machine in machine + kernels:
        if not is_machine and args.only and not any(part in name for part in args.only.split(",") if part):
            continue
        launch()  # the interpreter rewrites the kernel once, before any fork
        if args.traced and not is_machine:
            launch = _traced(launch)
            launch()
        alone = None
        for n in counts:
            runs = _copies(launch, n)
            wall = statistics.mean(r[0] for r in runs)
            cpu = statistics.mean(r[1] for r in runs)
            flt = statistics.mean(r[2] for r in runs)
            alone = wall if alone is None else alone
            row = f"{name if n == counts[0] else '':38} {n:6d} {wall:8.3f} {cpu:8.3f} {flt:8.0f} {alone / wall:8.0%}"
            print(row, flush=True)
            lines.append(row)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
