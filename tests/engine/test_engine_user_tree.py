"""A run through a `pytest` run comment runs the editor's buffer, as a plain script run does, and
writes nothing into the user's tree (no .pytest_cache, no __pycache__): the user asked for findings,
not for files, and pytest's own cache (--lf/--ff) is the user's."""

from __future__ import annotations

import os
from pathlib import Path

from triton_lens.trace_engine.process.runner import RunRequest, run

TEST_FILE = """\
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * FACTOR, mask=offs < n)


def test_scale():
    x = torch.ones(100)
    out = torch.empty(100)
    scale_kernel[(1,)](x, out, 100, BLOCK=128)
    assert out[0].item() == FACTOR
"""


# The user's environment, as a shell has it: CI sets PYTHONDONTWRITEBYTECODE, which would hide the writes.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_a_pytest_run_comment_runs_the_unsaved_buffer_not_the_file_on_disk(tmp_path):
    path = tmp_path / "test_scale.py"
    # On disk the test fails (the kernel is 3x, the assert reads the constant before it); the buffer fixes it.
    path.write_text("FACTOR = 3\n" + TEST_FILE.replace("== FACTOR", "== 2"))
    buffer = "FACTOR = 2\n" + TEST_FILE
    r = run(
        RunRequest(path=str(path), source=buffer, command=["pytest", "-q", "test_scale.py"], cwd=str(tmp_path), env=ENV)
    )
    assert r.status == "ok", (r.error, r.stdout[-2000:])
    assert len(r.launches) == 1
    # And a failing buffer fails, with pytest's own assertion message (the assert is rewritten).
    bad = "FACTOR = 2\n" + TEST_FILE.replace("== FACTOR", "== 5")
    r = run(
        RunRequest(path=str(path), source=bad, command=["pytest", "-q", "test_scale.py"], cwd=str(tmp_path), env=ENV)
    )
    assert r.status != "ok" and "assert 2.0 == 5" in r.stdout, r.stdout[-2000:]


def test_a_buffer_run_ignores_bytecode_pytest_cached_from_the_file_on_disk(tmp_path):
    path = tmp_path / "test_scale.py"
    path.write_text("FACTOR = 3\n" + TEST_FILE.replace("== FACTOR", "== 2"))
    # The user's own pytest run leaves its rewritten bytecode of the disk file in __pycache__.
    import subprocess
    import sys

    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--collect-only", "test_scale.py"],
        cwd=tmp_path,
        capture_output=True,
        env={**ENV, "TRITON_INTERPRET": "1"},
    )
    assert any(p.name.endswith(".pyc") for p in tmp_path.rglob("*.pyc"))
    buffer = "FACTOR = 2\n" + TEST_FILE
    r = run(
        RunRequest(path=str(path), source=buffer, command=["pytest", "-q", "test_scale.py"], cwd=str(tmp_path), env=ENV)
    )
    assert r.status == "ok", (r.error, r.stdout[-2000:])


def test_a_pytest_run_writes_nothing_into_the_users_tree(tmp_path):
    (tmp_path / "test_scale.py").write_text("FACTOR = 2\n" + TEST_FILE)
    (tmp_path / "helper.py").write_text("VALUE = 1\n")
    (tmp_path / "test_scale.py").write_text("import helper\n" + (tmp_path / "test_scale.py").read_text())
    before = _tree(tmp_path)
    r = run(
        RunRequest(
            path=str(tmp_path / "test_scale.py"), command=["pytest", "-q", "test_scale.py"], cwd=str(tmp_path), env=ENV
        )
    )
    assert r.status == "ok", (r.error, r.stdout[-2000:])
    assert _tree(tmp_path) == before  # no .pytest_cache/, no __pycache__/
    # From the buffer too (the editor's background run on every edit).
    r = run(
        RunRequest(
            path=str(tmp_path / "test_scale.py"),
            source=(tmp_path / "test_scale.py").read_text(),
            command=["pytest", "-q", "--lf", "test_scale.py"],  # the user's own cache options still parse
            cwd=str(tmp_path),
            env=ENV,
        )
    )
    assert r.status == "ok", (r.error, r.stdout[-2000:])
    assert _tree(tmp_path) == before


def test_a_script_run_writes_no_bytecode_into_the_users_tree(tmp_path):
    (tmp_path / "helper.py").write_text("VALUE = 1\n")
    (tmp_path / "k.py").write_text("import helper\nprint(helper.VALUE)\n")
    before = _tree(tmp_path)
    r = run(RunRequest(path=str(tmp_path / "k.py"), env=ENV))
    assert r.error is None or r.status == "no-launch", r.error
    assert _tree(tmp_path) == before
