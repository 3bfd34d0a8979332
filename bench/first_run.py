"""The first run of a language-server session, side by side: a cold worker started beside the zygote's
imports (ZYGOTE_WAIT_S = 0, before) against the run waiting for the zygote and forking from it (the
default). Each sample is a fresh process (no zygote yet), the two modes alternate, and the script's own
time is the same in both: what differs is how two imports of torch and triton share the cores.

    python bench/first_run.py [--reps N] [--out FILE] [FILE ...]     (default: the corpus's vector_add.py
                                                                   and the tutorial-sized softmax)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from datetime import date

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CHILD = """
import json, sys, time
from triton_lens.trace_engine.process import runner
from triton_lens.trace_engine import RunRequest, run
runner.ZYGOTE_WAIT_S = float(sys.argv[2])
t0 = time.perf_counter()
r = run(RunRequest(path=sys.argv[1], keep_warm=True, workers=1))
print(json.dumps({"status": r.status, "s": time.perf_counter() - t0, "launches": len(r.launches)}))
"""


def sample(path: str, wait_s: float) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, path, str(wait_s)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out")
    a = ap.parse_args()
    files = a.files or [
        os.path.join(ROOT, "tests", "corpus", "vector_add.py"),
        os.path.join(HERE, "kernels", "softmax_1823x781.py"),
    ]
    lines = [
        f"# First run of a language-server session — {date.today()}",
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        f"load average before: {os.getloadavg()[0]:.2f}",
        f"seconds from run() to its result in a fresh process (no zygote yet), median of {a.reps}; modes alternate",
        "",
        f"{'file':28} {'cold beside zygote':>19} {'wait for zygote':>16} {'ratio':>6}",
    ]
    for path in files:
        cold, warm = [], []
        for _ in range(a.reps):
            c, w = sample(path, 0.0), sample(path, 60.0)
            assert c["status"] == w["status"] and c["launches"] == w["launches"], (c, w)
            cold.append(c["s"])
            warm.append(w["s"])
        mc, mw = statistics.median(cold), statistics.median(warm)
        lines.append(f"{os.path.basename(path):28} {mc:19.2f} {mw:16.2f} {mw / mc:6.2f}")
        lines.append(
            f"  samples: cold {', '.join(f'{x:.2f}' for x in cold)}; wait {', '.join(f'{x:.2f}' for x in warm)}"
        )
    lines.append(f"load average after: {os.getloadavg()[0]:.2f}")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
