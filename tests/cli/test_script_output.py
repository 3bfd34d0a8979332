"""The script's own stdout and stderr: shown after the findings when its run failed, streamed live
with --show-output, and carried (their tails) in the JSON. The run comment is honoured by check."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

KERNEL = """import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def copy(x):
    y = torch.empty_like(x)
    copy_kernel[(triton.cdiv(x.numel(), 32),)](x, y, x.numel(), 32)
    return y
"""

TEST = """import torch
from kernels import copy


def test_copy_sums():
    y = copy(torch.ones(100))
    assert y.sum().item() == 42, f"the copy summed to {y.sum().item():g}, expected 42"
"""


def check(*args: str, cwd: Path):
    return subprocess.run(
        [sys.executable, "-m", "triton_lens", "check", *args], capture_output=True, text=True, timeout=300, cwd=cwd
    )


def test_a_failing_tests_assert_message_appears_after_the_findings(tmp_path):
    (tmp_path / "kernels.py").write_text(KERNEL + "# triton-lens: run pytest -q -p no:cacheprovider test_copy.py\n")
    (tmp_path / "test_copy.py").write_text(TEST)
    p = check("kernels.py", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "sys.exit(1)" in p.stdout  # the run failed: pytest exited 1
    findings_end = p.stdout.index("--- the script's stdout")
    assert "the copy summed to 100, expected 42" in p.stdout[findings_end:]
    assert "kernels.py (pytest -q -p no:cacheprovider test_copy.py): exception, 1 launch" in p.stdout
    out = json.loads(check("kernels.py", "--json", cwd=tmp_path).stdout)
    assert out["command"] == ["pytest", "-q", "-p", "no:cacheprovider", "test_copy.py"]
    assert len(out["launches"]) == 1 and "the copy summed to 100, expected 42" in out["stdout"]


def test_a_crashed_scripts_prints_are_shown(tmp_path):
    (tmp_path / "k.py").write_text(
        KERNEL
        + """
if __name__ == "__main__":
    import os, sys
    copy(torch.ones(10))
    print("checksum mismatch at row 3", flush=True)
    print("warning: fell back to the slow path", file=sys.stderr, flush=True)
    os._exit(3)
"""
    )
    p = check("k.py", cwd=tmp_path)
    assert p.returncode == 1
    tail = p.stdout[p.stdout.index("[crashed]") :]
    assert "--- the script's stdout ---\nchecksum mismatch at row 3" in tail
    assert "--- the script's stderr ---\nwarning: fell back to the slow path" in tail


def test_show_output_streams_a_clean_runs_prints(tmp_path):
    (tmp_path / "k.py").write_text(
        KERNEL
        + """
if __name__ == "__main__":
    print("max error 0.0")
    copy(torch.ones(10))
"""
    )
    quiet = check("k.py", cwd=tmp_path)
    assert quiet.returncode == 0 and "max error" not in quiet.stdout
    loud = check("k.py", "--show-output", cwd=tmp_path)
    assert loud.returncode == 0 and loud.stdout.startswith("max error 0.0\n")
    js = check("k.py", "--json", "--show-output", cwd=tmp_path)  # stdout stays one JSON object
    assert json.loads(js.stdout)["stdout"] == "max error 0.0\n" and "max error 0.0" in js.stderr
    many = check(".", "--show-output", cwd=tmp_path)  # several files: each line names its file
    assert "[k.py] max error 0.0" in many.stdout


def test_view_runs_the_files_run_comment(tmp_path, monkeypatch):
    from triton_lens.viz.cli_view import run_script

    (tmp_path / "kernels.py").write_text(KERNEL + "# triton-lens: run python launch.py\n")
    (tmp_path / "launch.py").write_text("import torch\nfrom kernels import copy\ncopy(torch.ones(70))\n")
    monkeypatch.chdir(tmp_path)
    r = run_script(str(tmp_path / "kernels.py"))
    assert r.status == "ok" and [L.kernel for L in r.launches] == ["copy_kernel"]  # the file alone launches nothing
