"""Progressive results (trace_engine/recording/progressive.py): how often a finding of the complete run is missing
from the partial one, over the corpus (tests/corpus) and the real-world scripts (tests/realworld).

Every launch of at least 2 programs gets a sample here (the thresholds lowered through the environment,
as the tests do), so the corpus's small launches count too. For each partial snapshot of launch k:
the findings a sample can prove (analysis.findings.SAMPLE_KINDS) of the complete run's launches 0..k
against those of the snapshot. A complete finding of those kinds the snapshot lacks is a miss; the
snapshot having one the complete run lacks would be a false finding (it must never happen). Findings of
the other kinds (races, unwritten, dead masks, ...) are counted as withheld: never shown from a sample.

    python bench/partial_coverage.py [--out bench/results/partial_coverage_DATE.txt]
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from markers import corpus_files  # noqa: E402

from triton_lens.analysis import analyze  # noqa: E402
from triton_lens.analysis.findings import SAMPLE_KINDS  # noqa: E402
from triton_lens.trace_engine.process.runner import RunRequest, run  # noqa: E402

FORCE = {
    "TRITON_LENS_PARTIAL_MIN_PROGRAMS": "2",
    "TRITON_LENS_PARTIAL_MIN_SECONDS": "0",
    "TRITON_LENS_PARTIAL_PROBE_SECONDS": "0",
}


def keys(findings, kinds) -> set:
    return {(f.kind, os.path.basename(f.file), f.line, f.arg) for f in findings if f.kind in kinds}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--only")
    args = ap.parse_args()
    scripts = [cf.path for cf in corpus_files() if not any(e.kind == "timeout" for e in cf.expects)]
    realworld = ROOT / "tests" / "realworld"
    scripts += sorted(p for p in realworld.glob("*.py") if not p.name.startswith(("test_", "conftest")))
    if args.only:
        scripts = [p for p in scripts if args.only in p.name]
    env = dict(os.environ, **FORCE)
    lines = []
    total = {"snapshots": 0, "expected": 0, "missed": 0, "false": 0, "withheld": 0, "files": 0}
    for path in scripts:
        snaps = []
        r = run(RunRequest(path=str(path), timeout_s=300, env=env, progressive=True), on_partial=snaps.append)
        total["files"] += 1
        missed_here, expected_here, false_here, withheld_here = [], 0, [], 0
        for p in snaps:
            k = p.launch
            upto = [t for t in r.launches if t.index <= k]
            complete = analyze(dataclasses.replace(r, launches=upto, error=None, status="ok", scratch_buffers=None))
            want = keys(complete.findings, SAMPLE_KINDS)
            got = keys(analyze(p.result).findings, SAMPLE_KINDS)
            expected_here += len(want)
            missed_here += sorted(want - got)
            false_here += sorted(got - want)
            withheld_here += len(keys(complete.findings, {f.kind for f in complete.findings} - SAMPLE_KINDS))
        total["snapshots"] += len(snaps)
        total["expected"] += expected_here
        total["missed"] += len(missed_here)
        total["false"] += len(false_here)
        total["withheld"] += withheld_here
        progs = ", ".join(f"{p.programs_done}/{p.programs_total}" for p in snaps[:4]) + (" …" if len(snaps) > 4 else "")
        line = (
            f"{path.parent.name}/{path.name:32s} {r.status:9s} snapshots {len(snaps):3d} [{progs}]  "
            f"per-program findings {expected_here:3d}  missed {len(missed_here)}  false {len(false_here)}  "
            f"withheld {withheld_here}"
        )
        if missed_here:
            line += f"\n    missed: {missed_here}"
        if false_here:
            line += f"\n    FALSE: {false_here}"
        print(line, flush=True)
        lines.append(line)
    rate = total["missed"] / total["expected"] if total["expected"] else 0.0
    summary = (
        f"\n{total['files']} scripts, {total['snapshots']} partial snapshots: {total['expected']} per-program "
        f"findings expected, {total['missed']} missed ({100 * rate:.1f}%), {total['false']} false; "
        f"{total['withheld']} whole-launch findings withheld from the snapshots"
    )
    print(summary)
    if args.out:
        head = [
            f"# bench/partial_coverage.py, {datetime.datetime.now().isoformat(timespec='seconds')}",
            f"# {platform.node()} {platform.machine()}, {os.cpu_count()} cores, python {platform.python_version()}",
            "# load: " + subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
            "# sample: " + ", ".join(f"{k}={v}" for k, v in sorted(os.environ.items()) if "SAMPLE" in k),
        ]
        Path(args.out).write_text("\n".join(head + lines) + summary + "\n")


if __name__ == "__main__":
    main()
