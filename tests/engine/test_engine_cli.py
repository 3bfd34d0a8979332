"""`triton-lens check`: compiler-style output, one JSON object with --json, exit codes 0/1/2."""

from __future__ import annotations

import json
import subprocess
import sys

from markers import CORPUS


def check(*args: str):
    return subprocess.run([sys.executable, "-m", "triton_lens", *args], capture_output=True, text=True, timeout=300)


def test_json_has_the_documented_shape_and_exit_code_1_on_an_error():
    p = check("check", str(CORPUS / "oob_missing_mask.py"), "--json")
    assert p.returncode == 1, p.stderr
    out = json.loads(p.stdout)  # exactly one JSON object
    assert out["file"].endswith("oob_missing_mask.py") and out["status"] == "ok"
    assert out["launches"] == [dict(out["launches"][0], kernel="add_kernel", grid=[8, 1, 1])]
    acc = {(a["line"], a["arg"]): a for a in out["accesses"]}
    assert set(acc[(12, "x_ptr")]) >= {
        "file",
        "line",
        "arg",
        "kind",
        "launches",
        "programs",
        "lanes",
        "active",
        "unique",
        "oob",
        "bytes",
    }
    assert acc[(12, "x_ptr")]["oob"] == 24 and acc[(13, "y_ptr")]["bytes"] == 4000
    (f,) = out["findings"]
    assert {k: f[k] for k in ("kind", "severity", "line", "arg", "access", "lanes", "programs")} == {
        "kind": "oob",
        "severity": "error",
        "line": 12,
        "arg": "x_ptr",
        "access": "load",
        "lanes": 24,
        "programs": 1,
    }
    assert "program (7,)" in f["message"] and "mask" in f["message"]


def test_human_output_is_file_line_col_like_a_compiler():
    p = check("check", str(CORPUS / "oob_missing_mask.py"))
    assert p.returncode == 1
    first = p.stdout.splitlines()[0]
    assert ":12:9: error: x_ptr: 24 lanes of program (7,)" in first
    assert "x_ptr[0:1000]" in p.stdout  # the per-line table


def test_clean_file_exits_0():
    p = check("check", str(CORPUS / "vector_add.py"), "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["findings"] == []


def test_tool_errors_exit_2():
    assert check("check", "/nonexistent/kernel.py").returncode == 2
    p = check("check", str(CORPUS / "vector_add.py"), "--python", "/nonexistent/python")
    # the command line's own words for the fix (model/remedies.py), not the editor's setting
    assert p.returncode == 2 and "Pass --python a Python that has triton" in p.stderr, p.stderr
    assert "tritonLens" not in p.stderr


def test_timeout_option_and_status():
    p = check("check", str(CORPUS / "hangs_after_launch.py"), "--json", "--timeout", "6")
    out = json.loads(p.stdout)
    assert p.returncode == 1 and out["status"] == "timeout"
    assert any(f["kind"] == "timeout" for f in out["findings"])
    assert [a["active"] for a in out["accesses"] if a["line"] == 10] == [200]


def test_triton_version():
    import triton

    p = check("--triton-version")
    assert p.returncode == 0 and p.stdout.strip() == triton.__version__
