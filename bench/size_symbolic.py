"""What the z3 extra (trace_engine/recording/size_symbolic.py) costs and finds: each file's size check timed per
launch inside a recorder (SizeCheck.check), with z3 off (TRITON_LENS_SYMBOLIC=0: the cheap path alone) and
on, side by side, with the size findings of each, how many of them z3 found, and how many accesses z3 proved in
bounds over a range of sizes (the hover's "in bounds for every n ≤ …"). Median of --repeat runs.

    python bench/size_symbolic.py [--repeat 3] [--out bench/results/size_symbolic.txt] [FILES...]
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

ROOT = Path(__file__).resolve().parent.parent

_TIMED = r"""
import json, runpy, sys, time
from triton_lens.trace_engine.recording import size_probe
from triton_lens.trace_engine.recording.recorder import Recorder
times, found, proved, real = [], [], [], size_probe.SizeCheck.check
def timed(self, la, trace):
    t0 = time.perf_counter()
    try:
        out = real(self, la, trace)
        found.extend(f.get("found_by", "cheap") for f in out)
        proved.extend(p["limit"] for e in self.last_checked for p in e.get("proved") or [])
        return out
    finally:
        times.append(time.perf_counter() - t0)
size_probe.SizeCheck.check = timed
with Recorder(size_check_gpu="H100", value_limit=0):
    try:
        runpy.run_path(sys.argv[1], run_name="__main__")
    except BaseException:
        pass
print("RESULT " + json.dumps({"times": times, "found": found, "proved": proved}))
"""


def _timed(path: Path, z3: bool) -> dict:
    env = dict(os.environ, TRITON_INTERPRET="1", TRITON_LENS_SYMBOLIC="1" if z3 else "0")
    p = subprocess.run(
        [sys.executable, "-c", _TIMED, str(path)], capture_output=True, text=True, timeout=600, env=env, cwd=path.parent
    )
    lines = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")]
    return json.loads(lines[-1][7:]) if lines else {"times": [], "found": [], "proved": []}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out")
    a = ap.parse_args()
    files = [Path(f).resolve() for f in a.files] or sorted((ROOT / "tests" / "corpus").glob("*.py"))
    rows, per_off, per_on = [], [], []
    for f in files:
        if "hangs" in f.name:
            continue
        off = [_timed(f, False) for _ in range(a.repeat)]
        on = [_timed(f, True) for _ in range(a.repeat)]
        n = len(off[0]["times"])
        if n == 0:
            continue
        mid_off = sorted(off, key=lambda r: sum(r["times"]))[len(off) // 2]  # the run of median total
        mid_on = sorted(on, key=lambda r: sum(r["times"]))[len(on) // 2]
        t_off, t_on = sum(mid_off["times"]), sum(mid_on["times"])
        per_off += mid_off["times"]
        per_on += mid_on["times"]
        z3_found = sum(1 for x in on[0]["found"] if x == "z3")
        rows.append(
            f"{f.name:28} {n:4} {t_off * 1e3:9.1f} {t_on * 1e3:9.1f} {len(off[0]['found']):6} {len(on[0]['found']):6}"
            f" {z3_found:6} {len(on[0]['proved']):6}"
        )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    head = (
        f"# the z3 extra's cost, {time.strftime('%Y-%m-%d %H:%M')}, {platform.node()}, {os.cpu_count()} cores, load "
        f"{load:.1f} at the end, python {sys.version.split()[0]}, median of {a.repeat}\n"
        f"# ms: the size check of all the file's launches, in-process; found: size findings (z3: of them, z3's);\n"
        f"# proved: accesses z3 proved in bounds over a range of sizes (one per launch and access)\n"
        f"{'file':28} {'lnch':>4} {'off ms':>9} {'z3 ms':>9} {'found':>6} {'w/ z3':>6} {'z3':>6} {'proved':>6}"
    )
    tail = ""
    if per_off:
        tail = (
            f"per launch: median {statistics.median(per_off) * 1e3:.1f} ms without z3, "
            f"{statistics.median(per_on) * 1e3:.1f} ms with it; max {max(per_off) * 1e3:.1f} / "
            f"{max(per_on) * 1e3:.1f} ms over {len(per_off)} launches"
        )
    text = "\n".join([head, *rows, tail]) + "\n"
    print(text)
    if a.out:
        with open(a.out, "a") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
