"""@jit helper calls inside a launch skip the interpreter's re-patching of triton.language
(trace_engine/interpreter/device_calls.py): same results, the scan runs once per module per launch, hooks removed after.

The kernels run in a fresh process: whether `@triton.jit` makes an interpreted function is decided when
triton first reads TRITON_INTERPRET, which another test module of this process may have done without it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).parent / "scripts" / "device_calls" / "count_patch_lang.py"


def test_helper_calls_scan_the_language_once_per_launch():
    proc = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    # The bare interpreter: the launch, then every helper call (tl.max, tl.sum, _scaled) of each of 48 rows.
    assert r["bare_calls"] >= 48 * 3, r
    # Under the recorder: the launch's own call, then at most the first call that saw each language module.
    assert 1 <= r["traced_calls"] <= 3, r
    assert r["wrapped"] and r["restored"], r  # wrapped for the run, put back after it
    assert r["same"] and r["softmax"], r  # the results are the bare interpreter's, and right
    assert r["second_launches"] == 2 and r["second_ok"], r  # a second launch patches again
