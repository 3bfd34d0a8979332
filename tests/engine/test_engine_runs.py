"""What runs: the unsaved buffer instead of the file, another script or a pytest command that
launches this file's kernels, and hooks that leave nothing behind after an in-process run."""

from __future__ import annotations

from pathlib import Path

import pytest
from markers import CORPUS

from triton_lens.analysis import analyze
from triton_lens.trace_engine.process.runner import RunRequest, run

PROJECT = Path(__file__).parent / "scripts" / "project"


def test_unsaved_buffer_runs_with_its_own_lines():
    path = CORPUS / "vector_add_tail.py"
    text = path.read_text()
    # Remove the load's mask in the buffer only, and push it down two lines.
    buffer = text.replace("x = tl.load(x_ptr + offs, mask=mask)", "\n\nx = tl.load(x_ptr + offs)")
    lines = buffer.splitlines()
    i = next(n for n, l in enumerate(lines) if "x = tl.load(x_ptr + offs)" in l)
    lines[i] = "    " + lines[i].strip()
    buffer = "\n".join(lines) + "\n"
    a = analyze(run(RunRequest(path=str(path), source=buffer)))
    (f,) = [f for f in a.findings if f.kind == "oob"]
    assert f.line == i + 1 and f.arg == "x_ptr" and f.lanes == 24
    assert f.file == str(path)


def test_another_script_launching_this_files_kernel_is_attributed_here():
    kernels = PROJECT / "kernels.py"
    r = run(RunRequest(path=str(kernels), command=["python", "launch_it.py"], cwd=str(PROJECT)))
    assert r.status == "ok", r.error
    a = analyze(r)
    rows = {(s.line, s.arg): s for s in a.accesses if s.file == str(kernels)}
    assert rows[(8, "x_ptr")].active == 300 and rows[(9, "out_ptr")].programs == 3


def test_pytest_command_with_selection():
    kernels = PROJECT / "kernels.py"
    r = run(
        RunRequest(path=str(kernels), command=["pytest", "-q", "tests/test_scale.py", "-k", "small"], cwd=str(PROJECT))
    )
    assert r.status == "ok", (r.error, r.stdout[-2000:])
    assert len(r.launches) == 1 and r.launches[0].grid == (1, 1, 1)


def test_buffer_is_used_when_another_script_imports_the_file():
    kernels = PROJECT / "kernels.py"
    buffer = kernels.read_text().replace("mask=offs < n)\n    tl.store", ")\n    tl.store")
    r = run(RunRequest(path=str(kernels), source=buffer, command=["python", "launch_it.py"], cwd=str(PROJECT)))
    a = analyze(r)
    (f,) = [f for f in a.findings if f.kind == "oob"]
    assert f.line == 8 and f.lanes == 84  # 3 programs x 128 lanes over 300 elements
    assert "mask=offs < n)" in kernels.read_text()  # the file on disk is untouched


def test_in_process_recorder_removes_its_hooks():
    import triton.runtime.interpreter as interp

    from triton_lens.trace_engine.recording.recorder import Recorder

    before = {name: interp.InterpreterBuilder.__dict__.get(name) for name in dir(interp.InterpreterBuilder)}
    call, cvt = interp.GridExecutor.__call__, interp._implicit_cvt
    with Recorder():
        assert interp.GridExecutor.__call__ is not call
        assert interp.InterpreterBuilder.create_masked_load is not before["create_masked_load"]
    after = {name: interp.InterpreterBuilder.__dict__.get(name) for name in dir(interp.InterpreterBuilder)}
    assert before == after
    assert interp.GridExecutor.__call__ is call and interp._implicit_cvt is cvt


def test_the_language_servers_bundled_libraries_are_not_on_the_scripts_path(tmp_path, monkeypatch):
    bundled = tmp_path / "bundled" / "libs"
    bundled.mkdir(parents=True)
    (bundled / "attrs_marker.py").write_text("")
    script = tmp_path / "show_path.py"
    script.write_text("import sys\nprint('PATH', sys.path)\n")
    monkeypatch.setenv("PYTHONPATH", str(bundled))
    monkeypatch.setenv("TRITON_LENS_BUNDLED_LIBS", str(bundled))
    r = run(RunRequest(path=str(script)))
    line = next(l for l in r.stdout.splitlines() if l.startswith("PATH"))
    assert str(bundled) not in line and "server" in line


def test_the_same_file_gives_the_same_run(tmp_path):
    # Inputs drawn without a seed do not change between runs (the worker seeds random, numpy and torch);
    # a script that seeds them itself gets its own seed.
    script = tmp_path / "draws.py"
    script.write_text(
        "import random, numpy, torch\n"
        "print(random.random(), numpy.random.rand(), torch.randn(3).tolist())\n"
        "torch.manual_seed(1234)\n"
        "print(torch.randn(1).tolist())\n"
    )
    first, second = (run(RunRequest(path=str(script))) for _ in range(2))
    assert first.status == second.status == "no-launch", (first.status, first.error)
    assert first.stdout == second.stdout and first.stdout.count("\n") == 2
    import torch

    torch.manual_seed(1234)
    assert first.stdout.splitlines()[1] == str(torch.randn(1).tolist())


def test_the_scripts_annotations_are_its_own_not_the_workers_future_import(tmp_path):
    # The worker's own `from __future__ import annotations` must not reach the script it compiles:
    # annotations stay objects, as under `python FILE` (dataclasses, run-time checks).
    script = tmp_path / "annotations_at_run_time.py"
    script.write_text(
        "import dataclasses\n"
        "import torch\n"
        "import triton\n"
        "import triton.language as tl\n"
        "@triton.jit\n"
        "def copy(x_ptr, y_ptr):\n"
        "    tl.store(y_ptr + tl.arange(0, 8), tl.load(x_ptr + tl.arange(0, 8)))\n"
        "def f(x: int) -> float:\n"
        "    return x\n"
        "@dataclasses.dataclass\n"
        "class C:\n"
        "    n: int = 0\n"
        "assert f.__annotations__['x'] is int, f.__annotations__\n"
        "assert f.__annotations__['return'] is float\n"
        "assert dataclasses.fields(C)[0].type is int\n"
        "x = torch.arange(8.0)\n"
        "y = torch.empty(8)\n"
        "copy[(1,)](x, y)\n"
        "assert torch.equal(x, y)\n"
        "print('annotations ok')\n"
    )
    r = run(RunRequest(path=str(script)))
    assert r.status == "ok", r.error
    assert "annotations ok" in r.stdout
    # The unsaved buffer goes through the same compile.
    r = run(RunRequest(path=str(script), source=script.read_text().replace("ok')", "ok in buffer')")))
    assert r.status == "ok", r.error
    assert "annotations ok in buffer" in r.stdout


_THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")
# Prints the worker's THP_MEM_ALLOC_ENABLE and whether a 32 MB tensor's mapping is advised huge pages ("hg"
# in its VmFlags: torch's madvise(MADV_HUGEPAGE), whatever pages the kernel could give it).
_HUGE_ADVICE_SCRIPT = """\
import os, torch
t = torch.ones(8 << 20)
addr, inside, flags = t.data_ptr(), False, ""
for line in open("/proc/self/smaps"):
    head = line.split()
    if "-" in head[0] and ":" not in head[0]:
        lo, hi = (int(x, 16) for x in head[0].split("-"))
        inside = lo <= addr < hi
    elif inside and head[0] == "VmFlags:":
        flags = head[1:]
print("THP", os.environ.get("THP_MEM_ALLOC_ENABLE"), "hg" in flags)
"""


def _huge_advice(tmp_path: Path) -> str:
    script = tmp_path / "huge_advice.py"
    script.write_text(_HUGE_ADVICE_SCRIPT)
    r = run(RunRequest(path=str(script)))
    return next(l for l in r.stdout.splitlines() if l.startswith("THP"))


@pytest.mark.skipif(not _THP.exists(), reason="transparent huge pages are Linux's (CI runs on Linux)")
def test_the_scripts_large_tensors_are_on_huge_pages_so_a_split_forks_fast(tmp_path):
    # process_tree.FORK_FRIENDLY_ENV: a fork copies one page-table entry per 2 MB of such a tensor
    assert _huge_advice(tmp_path) == "THP 1 True"


@pytest.mark.skipif(not _THP.exists(), reason="transparent huge pages are Linux's (CI runs on Linux)")
def test_the_users_own_huge_page_setting_is_kept(tmp_path, monkeypatch):
    monkeypatch.setenv("THP_MEM_ALLOC_ENABLE", "0")
    assert _huge_advice(tmp_path) == "THP 0 False"
