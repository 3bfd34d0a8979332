"""A wrong option value is a tool error: exit 2 and one line that says what is wrong and what to pass,
before anything runs; not a traceback (exit 1, which CI reads as findings) nor a limit switched off."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from markers import CORPUS


@pytest.fixture
def script(tmp_path) -> Path:
    """A clean kernel script that leaves a file `ran` next to itself when it runs."""
    p = tmp_path / "k.py"
    shutil.copy(CORPUS / "vector_add.py", p)
    p.write_text(p.read_text() + "\nimport pathlib\npathlib.Path(__file__).with_name('ran').write_text('')\n")
    return p


def cli(*args: str, cwd: Path):
    return subprocess.run(
        [sys.executable, "-m", "triton_lens", *args], capture_output=True, text=True, timeout=300, cwd=cwd
    )


@pytest.mark.parametrize(
    "option, value, says",
    [
        ("--timeout", "nan", "finite number of seconds greater than 0"),  # was: no time limit at all
        ("--timeout", "inf", "finite number of seconds greater than 0"),
        ("--timeout", "0", "finite number of seconds greater than 0"),
        ("--timeout", "-5", "finite number of seconds greater than 0"),
        ("--timeout", "soon", "finite number of seconds greater than 0"),
        ("--jobs", "-1", "whole number of at least 1"),  # was: a ValueError traceback, exit 1
        ("--jobs", "0", "whole number of at least 1"),
        ("--workers", "-2", "whole number of at least 1 (or 0: the default)"),
        ("--memory", "0", "whole number of at least 1"),  # was: the memory limit off
        ("--memory", "-100", "whole number of at least 1"),
        ("-o", "no/such/folder/report.txt", "does not exist: create it first"),  # was: a traceback, exit 1
        ("-o", ".", "is a folder: pass a file"),
    ],
)
def test_a_wrong_value_is_exit_2_with_one_line_before_anything_runs(script, option, value, says):
    p = cli("check", script.name, option, value, cwd=script.parent)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    (line,) = p.stderr.splitlines()
    assert line.startswith("triton-lens check: error: argument ") and option in line and says in line, line
    assert p.stdout == ""
    assert not (script.parent / "ran").exists()  # the script never ran


@pytest.mark.parametrize("option, value", [("--timeout", "nan"), ("--memory", "0"), ("--workers", "-1")])
def test_view_checks_the_same_values(script, option, value):
    p = cli("view", script.name, "--no-block", option, value, cwd=script.parent)
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    (line,) = p.stderr.splitlines()
    assert line.startswith("triton-lens view: error: argument ") and option in line, line
    assert not (script.parent / "ran").exists()


def test_good_values_still_run(script, tmp_path):
    (tmp_path / "out").mkdir()
    p = cli(
        "check", script.name, "--timeout", "30.5", "--jobs", "1", "--workers", "0", "--memory", "4096",
        "-o", "out/report.txt", cwd=script.parent,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert (script.parent / "ran").exists() and "k.py: ok" in (tmp_path / "out" / "report.txt").read_text()


@pytest.mark.parametrize("name", ["-x.py", "-o.py", "--json.py"])
def test_a_script_whose_name_starts_with_a_dash_is_that_file(tmp_path, name):
    shutil.copy(CORPUS / "oob_missing_mask.py", tmp_path / name)
    p = cli("check", name, cwd=tmp_path)
    assert p.returncode == 1, (p.returncode, p.stderr)  # its findings, not a usage error
    assert f"{name}:" in p.stdout and "[oob]" in p.stdout, p.stdout
    assert sorted(x.name for x in tmp_path.iterdir()) == [name]  # -o.py wrote no report to ".py"
