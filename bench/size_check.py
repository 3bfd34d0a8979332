"""What the size check (trace_engine/recording/size_probe.py) adds to a run: each corpus file (or the files given)
run twice side by side, with the check and without, and the ratio of the two wall times (a run's worker
start-up dominates them); and the check itself, timed per launch inside a recorder (median and max over
every launch). Prints a table; --out appends it to a results file.

    python bench/size_check.py [--repeat 1] [--out bench/results/size_check.txt] [FILES...]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from triton_lens.analysis import analyze
from triton_lens.trace_engine.process.runner import RunRequest, run
from triton_lens.trace_engine.recording import size_probe

ROOT = Path(__file__).resolve().parent.parent


def _timed(path: Path, check: bool) -> tuple[float, object]:
    t0 = time.perf_counter()
    r = run(RunRequest(path=str(path), timeout_s=120, size_check=check))
    return time.perf_counter() - t0, r


# Runs one script under a recorder with the size check on, timing each launch's check (SizeCheck.check).
_TIMED = r"""
import json, runpy, sys, time
from triton_lens.trace_engine.recording import size_probe
from triton_lens.trace_engine.recording.recorder import Recorder
times, real = [], size_probe.SizeCheck.check
def timed(self, la, trace):
    t0 = time.perf_counter()
    n = len(self.spent)
    try:
        return real(self, la, trace)
    finally:
        if len(self.spent) > n:  # a check that ran (not one answered from the run's cache)
            times.append((time.perf_counter() - t0, self.spent[-1]))
size_probe.SizeCheck.check = timed
with Recorder(size_check_gpu="H100", value_limit=0):
    try:
        runpy.run_path(sys.argv[1], run_name="__main__")
    except BaseException:
        pass
print(json.dumps(times))
"""


def _check_costs(path: Path) -> list[tuple[float, int]]:
    env = dict(os.environ, TRITON_INTERPRET="1")
    out = subprocess.run(
        [sys.executable, "-c", _TIMED, str(path)], capture_output=True, text=True, timeout=300, env=env, cwd=path.parent
    )
    lines = [x for x in out.stdout.splitlines() if x.startswith("[")]
    return [tuple(x) for x in json.loads(lines[-1])] if lines else []


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--out")
    a = ap.parse_args()
    files = [Path(f).resolve() for f in a.files] or sorted((ROOT / "tests" / "corpus").glob("*.py"))
    rows, ratios, per_launch = [], [], []
    for f in files:
        if "hangs" in f.name:
            continue
        off = min(_timed(f, False)[0] for _ in range(a.repeat))
        on_runs = [_timed(f, True) for _ in range(a.repeat)]
        on = min(t for t, _ in on_runs)
        r = on_runs[0][1]
        kinds = sorted({x.kind for x in analyze(r).findings if x.kind in ("oob-sizes", "wrap")})
        ratios.append(on / off)
        per_launch.extend(_check_costs(f))
        rows.append(f"{f.name:32} {len(r.launches):4} {off:7.2f} {on:7.2f} {on / off:6.2f}  {','.join(kinds)}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    head = (
        f"# size check, {time.strftime('%Y-%m-%d')}, {platform.node()}, {os.cpu_count()} cores, "
        f"load {load:.1f}, python {sys.version.split()[0]}\n"
        f"{'file':32} {'launches':>4} {'off s':>7} {'on s':>7} {'ratio':>6}  findings"
    )
    tail = (
        f"median ratio {statistics.median(ratios):.2f}, max {max(ratios):.2f} over {len(ratios)} files"
        if ratios
        else "no files"
    )
    if per_launch:
        seconds = [t for t, _ in per_launch]
        spent = [n for _, n in per_launch]
        tail += (
            f"\nthe check per launch, in-process: median {statistics.median(seconds) * 1e3:.1f} ms, "
            f"max {max(seconds) * 1e3:.1f} ms over {len(per_launch)} launches; accesses spent: median "
            f"{statistics.median(spent):.0f}, max {max(spent)} of the budget's {size_probe.ACCESS_BUDGET}"
        )
    text = "\n".join([head, *rows, tail]) + "\n"
    print(text)
    if a.out:
        with open(a.out, "a") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
