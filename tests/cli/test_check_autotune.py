"""`triton-lens check` on an autotuned kernel: a finding of one config names it in the text and in the
JSON witness, a note says which config the table shows, and the JSON launch carries the configs tried."""

from __future__ import annotations

import json
import subprocess
import sys

from markers import CORPUS

SCALES = CORPUS / "autotune_group_scales.py"


def check(*args: str):
    return subprocess.run(
        [sys.executable, "-m", "triton_lens", "check", *args], capture_output=True, text=True, timeout=300
    )


def test_text_and_json_name_the_config():
    text = check(str(SCALES))
    assert text.returncode == 1, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0] == (
        "note: dequant_kernel autotuned at line 32: the table and hints show BLOCK=64, the first of 3 configs "
        "tried (BLOCK = 64, 128, 256); the findings cover every one."
    )
    (oob,) = [x for x in lines if x.endswith("[oob]")]
    assert f"{SCALES.name}:23:9: error: s_ptr: 128 lanes of program (2,) would read past the end" in oob
    assert "Autotune: only with BLOCK=256 (1 of 3 configs tried; the hints show BLOCK=64, which does not" in oob
    out = json.loads(check(str(SCALES), "--json").stdout)
    (f,) = [f for f in out["findings"] if f["kind"] == "oob"]
    assert f["witness"]["autotune"] == {"configs": ["BLOCK=256"], "of": 3, "shown": "BLOCK=64"}
    (launch,) = out["launches"]
    assert launch["autotune"]["config"] == "BLOCK=64"
    assert launch["autotune"]["configs"] == ["BLOCK=64", "BLOCK=128", "BLOCK=256"]
