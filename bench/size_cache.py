"""The size check across edits (trace_engine/recording/size_cache.py): each file (the corpus's size files and
upstream size kernels by default) copied to a temporary folder and run, then edited below its kernels
(a line appended) and run again, as the language server runs a document on each edit. Side by side, per
file: the size check's time in the second run without the cache (what every run spent before it), with
the cache (the first run filled it), and in the first run with the cache on (a miss: the check plus
computing its key). Timed inside a recorder (SizeCheck.check, every launch), the median of --repeat runs.
Then the whole second run through the runner (a warm worker), without and with the cache.

    python bench/size_cache.py [--repeat 3] [--out bench/results/size_cache.txt] [FILES...]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from triton_lens.trace_engine.process.runner import RunRequest, run
from triton_lens.trace_engine.recording.size_cache import SizeCache

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = [
    "tests/corpus/tail_hidden_by_size.py",
    "tests/corpus/int32_wrap_offsets.py",
    "tests/corpus/row_overrun.py",
    "tests/corpus/attention_4d.py",
    "tests/corpus/layernorm.py",
    "tests/upstream_sizes/kernels/liger_803_bug.py",
    "tests/upstream_sizes/kernels/mamba_1015_bug.py",
    "tests/upstream_sizes/kernels/fla_911_bug.py",
]

# One run of a script under a recorder with the size check on, each launch's check timed; the entries
# it computed written out (the runner's cache, as the worker would send them), the entries given read in.
_TIMED = r"""
import json, runpy, sys, time
from triton_lens.trace_engine.recording import size_probe
from triton_lens.trace_engine.recording.recorder import Recorder
path, given, out = sys.argv[1:4]
cache = json.load(open(given)) if given != "-" else None
times, real = [], size_probe.SizeCheck.check
def timed(self, la, trace):
    t0 = time.perf_counter()
    try:
        return real(self, la, trace)
    finally:
        times.append(time.perf_counter() - t0)
size_probe.SizeCheck.check = timed
entries, hits = {}, [0]
def on_sizes(trace):
    e = rec.size_cache_entry
    if e and "value" in e:
        entries[e["key"]] = e["value"]
    elif e and e.get("hit"):
        hits[0] += 1
rec = Recorder(size_check_gpu="H100", value_limit=0, size_cache=cache, on_sizes=on_sizes)
with rec:
    try:
        runpy.run_path(path, run_name="__main__")
    except BaseException:
        pass
json.dump(entries, open(out, "w"))
print("RESULT " + json.dumps({"times": times, "hits": hits[0], "entries": len(entries)}))
"""


def _timed(path: Path, given: str, out: str) -> dict:
    env = dict(os.environ, TRITON_INTERPRET="1")
    p = subprocess.run(
        [sys.executable, "-c", _TIMED, str(path), given, out],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        cwd=path.parent,
    )
    lines = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")]
    if not lines:
        raise SystemExit(f"{path}: no result\n{p.stderr[-2000:]}")
    return json.loads(lines[-1][7:])


def _ms(xs: list[float]) -> str:
    return f"{sum(xs) * 1e3:9.1f}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out")
    a = ap.parse_args()
    files = [Path(f).resolve() for f in a.files] or [ROOT / f for f in DEFAULT]
    rows = []
    totals = {"off": 0.0, "hit": 0.0, "miss": 0.0, "run_off": 0.0, "run_on": 0.0}
    for f in files:
        tmp = Path(tempfile.mkdtemp(prefix="size-cache-bench-"))
        try:
            path = tmp / f.name
            original = f.read_text()
            edited = original + "\nprint('an edit below the kernels')\n"
            off, hit, miss = [], [], []
            launches = hits = 0
            for _ in range(a.repeat):
                path.write_text(original)
                (tmp / "empty.json").write_text("{}")  # the cache on, empty: every launch a miss
                first = _timed(path, str(tmp / "empty.json"), str(tmp / "entries.json"))
                path.write_text(edited)
                second = _timed(path, str(tmp / "entries.json"), str(tmp / "unused.json"))
                baseline = _timed(path, "-", str(tmp / "unused.json"))
                miss.append(sum(first["times"]))
                hit.append(sum(second["times"]))
                off.append(sum(baseline["times"]))
                launches, hits = len(baseline["times"]), second["hits"]
            # The whole second run through the runner, warm worker, without and with the cache.
            run_off, run_on = [], []
            for _ in range(a.repeat):
                cache = SizeCache()
                path.write_text(original)
                run(RunRequest(path=str(path), timeout_s=300, keep_warm=True, size_cache=cache))
                path.write_text(edited)
                t0 = time.perf_counter()
                run(RunRequest(path=str(path), timeout_s=300, keep_warm=True))
                run_off.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                run(RunRequest(path=str(path), timeout_s=300, keep_warm=True, size_cache=cache))
                run_on.append(time.perf_counter() - t0)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        m = {
            k: statistics.median(v)
            for k, v in dict(off=off, hit=hit, miss=miss, run_off=run_off, run_on=run_on).items()
        }
        for k in totals:
            totals[k] += m[k]
        rows.append(
            f"{f.name:28} {launches:4} {hits:4} {m['off'] * 1e3:9.1f} {m['hit'] * 1e3:9.2f} {m['miss'] * 1e3:9.1f}"
            f" {m['run_off']:8.2f} {m['run_on']:8.2f}"
        )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    head = (
        f"# size check across edits, {time.strftime('%Y-%m-%d %H:%M')}, {platform.node()}, {os.cpu_count()} cores, "
        f"load {load:.1f} at the end, python {sys.version.split()[0]}, median of {a.repeat}\n"
        f"# check ms: the size check's time in the run after an edit below the kernels (all launches), in-process;\n"
        f"#   off = no cache (every run before), hit = the cache the first run filled, miss = that first run\n"
        f"# run s: that whole second run through the runner (warm worker), without and with the cache\n"
        f"{'file':28} {'lnch':>4} {'hits':>4} {'off ms':>9} {'hit ms':>9} {'miss ms':>9} {'run off':>8} {'run on':>8}"
    )
    tail = (
        f"{'total':28} {'':4} {'':4} {totals['off'] * 1e3:9.1f} {totals['hit'] * 1e3:9.2f} {totals['miss'] * 1e3:9.1f}"
        f" {totals['run_off']:8.2f} {totals['run_on']:8.2f}"
    )
    text = "\n".join([head, *rows, tail]) + "\n"
    print(text)
    if a.out:
        with open(a.out, "a") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
