"""What recording every autotune config costs (trace_engine/compat._patch_autotuner, analysis/autotune.py):
each autotuned script run side by side with the configs' trial launches recorded (the default) and without
(RunRequest.autotune_trials=False: the trials still run, as the autotuner runs them on a GPU, but only the
config kept is recorded, which is what the tool did before, less its timing), with the ratio of the wall
times, the analysis time of each, the configs tried and the findings each gives. Prints a table; --out
writes it to a results file.

    python bench/autotune_configs.py [--repeat 3] [--out bench/results/autotune_configs.txt] [FILES...]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from pathlib import Path

from triton_lens.analysis import analyze
from triton_lens.trace_engine.process.runner import RunRequest, run

ROOT = Path(__file__).resolve().parent.parent
FILES = [
    ROOT / "tests" / "corpus" / "autotune.py",
    ROOT / "tests" / "corpus" / "autotune_group_scales.py",
    ROOT / "tests" / "engine" / "scripts" / "cuda" / "matmul.py",  # the tutorial's matmul, its 2 CUDA configs
    ROOT / "tests" / "realworld" / "fla_ops.py",  # flash-linear-attention: 4 num_warps configs per kernel
]


def _timed(path: Path, trials: bool) -> tuple[float, float, object, object]:
    """(run seconds, analysis seconds, result, analysis)"""
    t0 = time.perf_counter()
    r = run(RunRequest(path=str(path), timeout_s=300, autotune_trials=trials))
    t1 = time.perf_counter()
    a = analyze(r)
    return t1 - t0, time.perf_counter() - t1, r, a


def _serious(a) -> int:
    return sum(f.severity in ("error", "warning") for f in a.findings)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args()
    files = [Path(f) for f in args.files] or FILES
    head = (
        f"{'file':28} {'configs':>7} {'trial ex':>8} {'off s':>7} {'on s':>7} {'ratio':>6} "
        f"{'an off ms':>9} {'an on ms':>9} {'kernel s kept':>13} {'kernel s trials':>15} {'findings off/on':>15}"
    )
    lines = [head]
    print(head, flush=True)
    ratios = []
    for f in files:
        # alternate the two, so that a busy machine slows both alike; the fastest of each counts
        off_runs, on_runs = [], []
        for _ in range(args.repeat):
            off_runs.append(_timed(f, False))
            on_runs.append(_timed(f, True))
        off, on = min(off_runs, key=lambda x: x[0]), min(on_runs, key=lambda x: x[0])
        r_on, a_on, a_off = on[2], on[3], off[3]
        assert getattr(r_on, "status", "") == "ok", (f, getattr(r_on, "error", None))
        trials = r_on.autotune_trials  # type: ignore[attr-defined]
        ratio = on[0] / off[0]
        ratios.append(ratio)
        lines.append(
            f"{f.name:28} {len(trials):7d} {sum(len(t.ex_site) for t in trials):8d} {off[0]:7.2f} {on[0]:7.2f} "
            f"{ratio:6.2f} {min(x[1] for x in off_runs) * 1e3:9.1f} {min(x[1] for x in on_runs) * 1e3:9.1f} "
            f"{sum(L.seconds for L in r_on.launches):13.3f} {sum(t.seconds for t in trials):15.3f} "  # type: ignore[attr-defined]
            f"{_serious(a_off):>7}/{_serious(a_on):<7}"
        )
        print(lines[-1], flush=True)
    lines.append(
        f"median ratio on/off {statistics.median(ratios):.2f}, max {max(ratios):.2f}; "
        f"{args.repeat} runs each (fastest counted), {os.cpu_count()} cores, {platform.python_version()}"
    )
    print(lines[-1])
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
