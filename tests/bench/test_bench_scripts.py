"""Every benchmark script still starts: its imports resolve and its arguments parse.

The benchmarks are not run by `make test` (they measure, they do not assert), so a rename elsewhere
(tests/corpus.py -> tests/markers.py once broke bench/lsp_latency.py) would otherwise go unnoticed
until someone needs the numbers.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPTS = sorted(p for p in BENCH.glob("*.py") if '__name__ == "__main__"' in p.read_text())


def test_there_are_benchmarks():
    assert len(SCRIPTS) >= 5, SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_benchmark_starts(script: Path):
    proc = subprocess.run(
        [sys.executable, str(script), "--help"], capture_output=True, text=True, timeout=120, cwd=BENCH.parent
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "usage:" in proc.stdout
