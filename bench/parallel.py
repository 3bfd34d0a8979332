"""Wall and CPU time of one launch: the bare interpreter, and the tool with 1, 2, 4, 8, 16 workers
(trace_engine/recording/parallel.py), side by side in one run (issue 13).

Everything runs in this one process: per workload the bare interpreter first, then the tool with
each worker count (the recorder as the worker runs it, each launch's trace serialized as the worker
streams it), `--reps` rounds, median of each. CPU time counts the forked children
(RUSAGE_CHILDREN). Every traced run's outputs are compared with the bare run's (bit for bit).

    python bench/parallel.py [--scale S] [--workers 1,2,4,8,16] [--reps N] [--only NAME] [--out FILE]

--scale 1 is the issue's sizes (vector add 16M, softmax 4096x4096, matmul 1024^3, layer norm
4096x8192, attention B*H=16 seq 1024 d 64); smaller scales shrink the large dimension.
"""

from __future__ import annotations

import argparse
import io
import math
import os
import platform
import resource
import statistics
import sys
import time
from datetime import date

os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from triton_lens.trace_engine.process import process_tree  # noqa: E402  (imports no torch)

# As in the worker's environment (runner._worker_env), before torch's first allocation reads it: the
# script's large tensors on huge pages, so a split's forks are cheap. (An older checkout has none.)
for _name, _value in getattr(process_tree, "FORK_FRIENDLY_ENV", {}).items():
    os.environ.setdefault(_name, _value)

import torch  # noqa: E402
import triton  # noqa: E402
from parallel_kernels import bare_interpreter_fixes, workloads  # noqa: E402

from triton_lens.trace_engine.recording import stream  # noqa: E402
from triton_lens.trace_engine.recording.parallel import ParallelRecorder  # noqa: E402

# As the zygote does once after its imports (process_tree.collapse_heap): the imports' heap on huge pages, so
# a split's forks copy fewer page-table entries. TRITON_LENS_HUGE_HEAP=0: not (A/B runs; an older checkout has none).
HUGE_HEAP_MB = getattr(process_tree, "collapse_heap", lambda: 0)() >> 20


def _ratio(a: float, b: float) -> str:
    """a / b in the table's 8 columns; "-" without a bare run (--skip-bare)."""
    return f"{'-':>8}" if math.isnan(a) or math.isnan(b) else f"{a / b:8.2f}"


def _cpu() -> float:
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + c.ru_utime + c.ru_stime


def _sink(trace) -> None:
    meta, arrays = stream.launch_to_frame(trace)
    stream.write_frame(io.BytesIO(), "launch", meta, arrays)


def _median(values) -> float:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else float("nan")


def _host_ticks() -> list[int] | None:
    """The machine's CPU time so far in ticks, all CPUs together, from /proc/stat's "cpu" line: busy
    (user, nice, system, irq, softirq), idle (idle, iowait) and steal (time the hypervisor gave this VM's
    CPUs to something else while they had work); None where there is no /proc/stat."""
    try:
        with open("/proc/stat") as f:
            t = [int(v) for v in f.readline().split()[1:9]]
    except OSError:
        return None
    return [t[0] + t[1] + t[2] + t[5] + t[6], t[3] + t[4], t[7]]


def timed(launch):
    """Wall and CPU seconds of one launch, and the machine's busy/idle/steal ticks over it."""
    h0, w0, c0 = _host_ticks(), time.perf_counter(), _cpu()
    launch()
    wall, cpu, h1 = time.perf_counter() - w0, _cpu() - c0, _host_ticks()
    return wall, cpu, None if h0 is None or h1 is None else [b - a for a, b in zip(h0, h1)]


def _host_share(runs) -> str:
    """The machine's CPUs over a launch's reps (ticks summed): busy, idle and stolen shares."""
    ticks = [t[2] for t in runs if t[2] is not None]
    if not ticks:
        return ""
    busy, idle, steal = (sum(t[i] for t in ticks) for i in range(3))
    total = busy + idle + steal
    return (
        f"; the machine's CPUs {busy / total:.0%} busy, {idle / total:.0%} idle, {steal / total:.0%} stolen"
        if total
        else ""
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--workers", default="1,2,4,8,16")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--only", default="")
    ap.add_argument(
        "--skip-bare",
        action="store_true",
        help="no bare-interpreter runs (minutes at --scale 1 for matmul): the first launch, untimed, is split over "
        "the most workers, and its output is what each run's must equal bit for bit",
    )
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    counts = [int(w) for w in args.workers.split(",")]
    fixes = bare_interpreter_fixes()
    lines = [
        f"# bench/parallel.py --scale {args.scale} --workers {args.workers} --reps {args.reps}"
        f"{' --skip-bare' if args.skip_bare else ''}{' --only ' + args.only if args.only else ''}  "
        f"({date.today()}, {platform.node()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, "
        f"triton {triton.__version__}, torch {torch.__version__}{', bare interpreter with: ' + fixes if fixes else ''}, "
        f"imports' heap on huge pages: {HUGE_HEAP_MB} MB)",
        "# wall and CPU seconds of one launch (median of reps); speed-up = bare wall / wall; "
        "efficiency = speed-up over workers-1 wall / workers; cpu/bare = CPU time over the bare interpreter's; "
        "same: the outputs bit-identical to one process's (w=1), and w=1's to the bare interpreter's (False where the "
        "kernel's tl.dot is rounded as the GPU's TF32 does: trace_engine/interpreter/semantics.py)",
        f"{'workload':38} {'programs':>8} {'run':>8} {'wall s':>8} {'cpu s':>8} {'speed-up':>8} {'eff':>6} "
        f"{'cpu/bare':>8} {'same':>5} split",
    ]
    print("\n".join(lines), flush=True)
    for name, (launch, outputs, check) in workloads(args.scale).items():
        if args.only and not any(part in name for part in args.only.split(",") if part):
            continue
        if args.skip_bare:  # (the kernel's first launch, untimed, as the bare one below)
            with ParallelRecorder(on_launch=_sink, workers=max(counts)):
                launch()
        else:
            launch()  # the interpreter rewrites the kernel once
        # (traced, a tl.dot is rounded as the GPU's TF32 does: torch's float32 product is no check of it)
        assert check() or args.skip_bare, f"{name}: the bare interpreter's output is wrong"
        reference = [t.clone() for t in outputs]
        rows = {}
        programs = 0
        for _ in range(args.reps):
            if not args.skip_bare:
                rows.setdefault("bare", []).append(timed(launch))
            for w in counts:
                for t in outputs:
                    t.zero_()
                rec = ParallelRecorder(on_launch=_sink, workers=w)
                splits = []
                orig_end = rec.launch_end

                def launch_end(token, error, rec=rec, splits=splits, orig_end=orig_end):
                    orig_end(token, error)
                    splits.append(rec.last_split)

                rec.launch_end = launch_end
                with rec:
                    rows.setdefault(w, []).append(timed(launch))
                programs = rec.launches[-1].n_programs
                one = rows.get(("outputs", 1))  # one process's, once w=1 has run (--workers starts with 1)
                same = all(torch.equal(a, b) for a, b in zip(outputs, reference if w == 1 or one is None else one))
                rows.setdefault(("same", w), []).append(same)
                if w == 1:
                    rows[("outputs", 1)] = [t.clone() for t in outputs]
                rows[("split", w)] = splits[-1]
        bare = rows.get("bare") or [(math.nan, math.nan)]
        bare_wall = statistics.median(t[0] for t in bare)
        bare_cpu = statistics.median(t[1] for t in bare)
        one_wall = None
        one_cpu_program = None
        spread: dict[int, str] = {}  # the walls' range over reps
        paired: dict[int, str] = {}  # the efficiency of each rep's w=1 and w=N, lowest-highest
        out = [
            f"{name:38} {programs:8d} {'bare':>8} {bare_wall:8.2f} {bare_cpu:8.2f} {1.0:8.2f} {'':>6} {1.0:8.2f}"
            if not args.skip_bare
            else f"{name:38} {programs:8d} {'bare':>8}   (not run: --skip-bare)"
        ]
        for w in counts:
            wall = statistics.median(t[0] for t in rows[w])
            cpu = statistics.median(t[1] for t in rows[w])
            if w == 1:
                one_wall = wall
                one_cpu_program = cpu / programs
            eff = f"{one_wall / wall / w:6.0%}" if one_wall else ""
            if one_wall and args.reps > 1 and w != 1:  # each rep's own pair (a noisy host drifts between reps)
                pairs = [a[0] / b[0] / w for a, b in zip(rows[1], rows[w])]
                spread[w] = f"{min(t[0] for t in rows[w]):.2f}-{max(t[0] for t in rows[w]):.2f}"
                paired[w] = f"{min(pairs):.0%}-{max(pairs):.0%}"
            s = rows[("split", w)]
            split = (
                "-"
                if not s
                else (
                    f"{s['workers']} children, probe {s['probe']}, fork {s['fork_s'] * 1e3:.0f} ms, merge "
                    f"{s['merge_s'] * 1e3:.0f} ms after the last child ({s.get('merge_total_s', 0) * 1e3:.0f} in all), "
                    f"{s.get('n_chunks', len(s['chunks']))} chunks, programs a child {min(s['chunks'])}-{max(s['chunks'])}, child cpu "
                    f"{_median(s['child_cpu_s']):.2f} s, {_median(s['child_minflt']) / 1e3:.0f}k faults"
                    + (
                        f", children's CPU a program {sum(c for c in s['child_cpu_s'] if c) / sum(s['chunks']) / one_cpu_program:.2f}x "
                        "one process's"
                        if one_cpu_program and s["merged"] and sum(s["chunks"])
                        else ""
                    )
                    + ("" if s["merged"] else " (ran in one process)")
                )
            )
            if w in spread:
                split += f"; wall over reps {spread[w]} s, each rep's efficiency {paired[w]}"
            if w != 1:
                split += _host_share(rows[w])
            elif w == 1 and args.reps > 1:
                split += f"; wall over reps {min(t[0] for t in rows[1]):.2f}-{max(t[0] for t in rows[1]):.2f} s"
            out.append(
                f"{'':38} {'':8} {f'tool w={w}':>8} {wall:8.2f} {cpu:8.2f} {_ratio(bare_wall, wall)} {eff} "
                f"{_ratio(cpu, bare_cpu)} {str(all(rows[('same', w)])):>5} {split}"
            )
        print("\n".join(out), flush=True)
        lines += out
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
