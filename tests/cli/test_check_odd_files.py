"""`check` on trees with files that are not scripts: a FIFO named *.py, a *.py link to /dev/zero, a
folder link loop under `**`. Only regular files are read, at most 32 MB of one; `**` does not enter
links to folders (as pathlib's `**`); the check ends and runs the real kernel."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from markers import CORPUS


def check(*args: str, cwd: Path):
    return subprocess.run(
        [sys.executable, "-m", "triton_lens", "check", "--json", *args],
        capture_output=True,
        text=True,
        timeout=240,  # a check that hangs fails here
        cwd=cwd,
    )


@pytest.fixture
def tree(tmp_path) -> Path:
    root = tmp_path / "src"
    (root / "sub").mkdir(parents=True)
    shutil.copy(CORPUS / "vector_add.py", root / "sub" / "add.py")
    os.mkfifo(root / "pipe.py")
    os.symlink("/dev/zero", root / "zero.py")
    os.symlink("..", root / "sub" / "loop")  # src/sub/loop/sub/loop/...
    return root


def _ran(p) -> list[str]:
    out = json.loads(p.stdout)
    files = out["files"] if "files" in out else [out]
    return sorted(os.path.basename(f["file"]) for f in files)


@pytest.mark.parametrize("arg", [".", "**/*.py", "./**/*.py"])
def test_a_folder_or_glob_with_a_fifo_a_dev_zero_link_and_a_link_loop_ends(tree, arg):
    p = check(arg, cwd=tree)
    assert p.returncode == 0, p.stderr
    assert _ran(p) == ["add.py"]


@pytest.mark.parametrize("name", ["pipe.py", "zero.py"])
def test_a_named_file_that_is_not_a_regular_file_is_a_tool_error(tree, name):
    p = check(name, cwd=tree)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert "not a regular file" in p.stdout + p.stderr
