"""Scripts that hang, raise, exit, segfault; files that do not parse or define no kernel; runs
chosen by a comment or by the runCommands setting. The server shows each for what it is and never dies."""

from __future__ import annotations

import asyncio
import sys

import pytest
from lsp_harness import Session, server_alive, session_fixture
from lsprotocol import types as lsp

pytestmark = pytest.mark.asyncio(loop_scope="module")
TIME_LIMIT_S = 8
SETTINGS = {"timeLimit": TIME_LIMIT_S, "runCommands": {"viaset/*.py": "python viaset_launch.py"}}

KERNEL = """import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x, mask=offs < n)
"""
LOAD_LINE = 8  # 0-based
LAUNCH = """

if __name__ == "__main__":
    x = torch.rand(200)
    out = torch.empty(200)
    copy_kernel[(2,)](x, out, 200, BLOCK=128)
"""


def script(tail: str, head: str = "") -> str:
    return head + KERNEL + LAUNCH + "".join(f"    {line}\n" for line in tail.splitlines())


def line_of(text: str, needle: str) -> int:
    return next(i for i, s in enumerate(text.splitlines()) if needle in s)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("failures")
    (root / "lib_kernels.py").write_text(KERNEL + "# triton-lens: run python launch_lib.py\n")
    (root / "launch_lib.py").write_text(
        "import torch\nfrom lib_kernels import copy_kernel\n"
        "x = torch.rand(200)\nout = torch.empty(200)\ncopy_kernel[(2,)](x, out, 200, BLOCK=128)\n"
    )
    (root / "launch_raises.py").write_text(
        "import torch\nfrom raising_kernels import copy_kernel\n"
        "x = torch.rand(200)\nout = torch.empty(200)\ncopy_kernel[(2,)](x, out, 200, BLOCK=128)\n"
        "raise LookupError('the launcher failed')\n"
    )
    (root / "raising_kernels.py").write_text(KERNEL + "# triton-lens: run python launch_raises.py\n")
    (root / "unlaunched_kernels.py").write_text(KERNEL + "# triton-lens: run python launch_lib.py\n")
    (root / "viaset").mkdir()
    (root / "viaset" / "k.py").write_text(KERNEL)
    (root / "viaset_launch.py").write_text(
        "import torch\nfrom viaset.k import copy_kernel\n"
        "x = torch.rand(300)\nout = torch.empty(300)\ncopy_kernel[(3,)](x, out, 300, BLOCK=128)\n"
    )
    return root


client = session_fixture(SETTINGS, with_workspace=True)


async def run_file(s: Session, path, text: str) -> tuple[str, dict, list[lsp.Diagnostic]]:
    path.write_text(text)
    uri = s.open(path, text)
    done = await s.finished_run(uri, 1, timeout=60)
    return uri, done, s.diagnostics(uri)


def codes(diags) -> list:
    return [d.code for d in diags]


async def test_hang_is_stopped_at_the_time_limit_and_the_launch_stays(session: Session, workspace):
    text = script("while True:\n    pass")
    uri, done, diags = await run_file(session, workspace / "hang.py", text)
    assert done["status"] == "timeout" and done["launches"] == 1
    # "ms" counts from the run's start, the worker's start-up (torch, triton) included, which took 10+ s
    # on a loaded 2-core machine; the limit itself counts from the script's start. Only "it stopped".
    assert done["ms"] < (TIME_LIMIT_S + 60) * 1000
    t = [d for d in diags if d.code == "timeout"]
    assert t and "time limit" in t[0].message
    assert t[0].range.start.line in (line_of(text, "while True"), line_of(text, "pass"))
    hints = await session.hints(uri)
    assert any(h.position.line == LOAD_LINE and "200/256 active · 2 prog" in h.label for h in hints)
    session.close(uri)


async def test_exception_at_its_line(session: Session, workspace):
    text = script('raise RuntimeError("the check failed")')
    uri, done, diags = await run_file(session, workspace / "raises.py", text)
    assert done["status"] == "exception"
    e = [d for d in diags if d.code == "exception"]
    assert len(e) == 1 and e[0].severity == lsp.DiagnosticSeverity.Error
    assert e[0].range.start.line == line_of(text, "raise RuntimeError")
    assert "RuntimeError: the check failed" in e[0].message
    assert any(h.position.line == LOAD_LINE for h in await session.hints(uri))  # the launch before stays
    session.close(uri)


async def test_exception_raised_elsewhere_goes_at_the_top_with_the_traceback(session: Session, workspace):
    path = workspace / "raising_kernels.py"
    uri = session.open(path)
    done = await session.finished_run(uri, 1, timeout=60)
    assert done["status"] == "exception" and done["launches"] == 1
    e = [d for d in session.diagnostics(uri) if d.code == "exception"]
    assert e and e[0].range.start.line == 0
    assert "LookupError" in e[0].message and "launch_raises.py" in e[0].message and "Traceback" in e[0].message
    session.close(uri)


async def test_sys_exit_and_os_exit(session: Session, workspace):
    text = script("import sys\nsys.exit(3)")
    uri, done, diags = await run_file(session, workspace / "exits.py", text)
    e = [d for d in diags if d.code in ("exception", "crashed")]
    assert e and "sys.exit(3)" in e[0].message and e[0].range.start.line == line_of(text, "sys.exit(3)")
    session.close(uri)
    text = script("import os\nos._exit(4)")
    uri, done, diags = await run_file(session, workspace / "os_exit.py", text)
    assert done["status"] == "crashed" and done["launches"] == 1
    e = [d for d in diags if d.code == "crashed"]
    assert e and "status 4" in e[0].message
    assert e[0].range.start.line == line_of(text, "os._exit(4)")  # at the call, not at the top
    session.close(uri)


async def test_a_script_that_kills_its_parent_does_not_kill_the_server(session: Session, workspace):
    text = script("import os, signal, time\nos.kill(os.getppid(), signal.SIGKILL)\ntime.sleep(30)")
    uri, done, diags = await run_file(session, workspace / "kills_parent.py", text)
    assert server_alive(session.client)
    assert done["status"] == "crashed" and done["launches"] == 1
    assert [d for d in diags if d.code == "crashed" and "SIGKILL" in d.message]
    session.close(uri)


async def test_segfault(session: Session, workspace):
    text = script("import ctypes\nctypes.string_at(0)")
    uri, done, diags = await run_file(session, workspace / "segv.py", text)
    assert done["status"] == "crashed" and done["launches"] == 1
    e = [d for d in diags if d.code == "crashed"]
    assert e and "SIGSEGV" in e[0].message and e[0].severity == lsp.DiagnosticSeverity.Error
    assert e[0].range.start.line == line_of(text, "ctypes.string_at(0)")
    assert any(h.position.line == LOAD_LINE for h in await session.hints(uri))
    session.close(uri)


async def _no_run(s: Session, uri: str) -> None:
    await asyncio.sleep(1.5)  # (a run would have said so by now: a short one only at its end, runs.SAY_RUNNING_AFTER_S)
    assert not [n for n in s.started + s.finished if n["uri"] == uri], "a run started"


async def test_syntax_error_is_shown_and_nothing_runs(session: Session, workspace):
    text = script("print('done')").replace("offs = tl.program_id(0)", "offs = (tl.program_id(0)", 1)
    path = workspace / "syntax.py"
    path.write_text(text)
    uri = session.open(path, text)
    await session.wait_for(lambda: session.diagnostics(uri), 10, "the syntax error")
    d = session.diagnostics(uri)
    assert codes(d) == ["syntax"] and d[0].severity == lsp.DiagnosticSeverity.Error
    assert d[0].range.start.line in (7, 8)
    await _no_run(session, uri)
    lenses = await session.lenses(uri)  # the kernel's lenses stay, and say why nothing ran
    assert any("does not parse" in lens.command.title for lens in lenses)
    # fixing it runs the file
    v2 = session.replace_all(uri, script("print('done')"))
    await session.finished_run(uri, v2)
    assert [x for x in session.diagnostics(uri) if x.severity in (1, 2)] == []
    session.close(uri)


async def test_a_python_file_without_kernels_is_not_run(session: Session, workspace):
    path = workspace / "plain.py"
    path.write_text("import os\nprint(os.getcwd())\nraise SystemExit(1)\n")
    uri = session.open(path)
    await _no_run(session, uri)
    assert session.diagnostics(uri) == []
    assert await session.hints(uri) == [] and await session.lenses(uri) == []
    session.close(uri)


async def test_run_comment_runs_another_script_on_the_unsaved_buffer(session: Session, workspace):
    path = workspace / "lib_kernels.py"
    disk = path.read_text()
    buffer = disk.replace("x = tl.load(x_ptr + offs, mask=offs < n)", "x = tl.load(x_ptr + offs)")
    assert buffer != disk
    uri = session.open(path, buffer)
    done = await session.finished_run(uri, 1, timeout=60)
    assert done["launches"] == 1
    oob = [d for d in session.diagnostics(uri) if d.code == "oob"]
    assert [d.range.start.line for d in oob] == [LOAD_LINE] and "56 lanes" in oob[0].message
    assert any(h.position.line == LOAD_LINE + 1 for h in await session.hints(uri))
    assert path.read_text() == disk
    session.close(uri)


async def test_run_comment_that_launches_no_kernel_of_the_file_says_so(session: Session, workspace):
    path = workspace / "unlaunched_kernels.py"
    uri = session.open(path)
    done = await session.finished_run(uri, 1, timeout=60)
    assert done["status"] == "ok" and done["launches"] == 1  # lib_kernels' kernel, not this file's
    d = [x for x in session.diagnostics(uri) if x.code == "no-launch"]
    text = path.read_text().splitlines()
    assert {x.range.start.line for x in d} == {6, len(text) - 1}  # the kernel's def and the comment
    assert all(x.severity == lsp.DiagnosticSeverity.Information for x in d)
    assert any("none of them defined in this file" in x.message for x in d)
    assert await session.hints(uri) == []
    session.close(uri)


async def test_run_command_from_the_setting(session: Session, workspace):
    uri = session.open(workspace / "viaset" / "k.py")
    done = await session.finished_run(uri, 1, timeout=60)
    assert done["status"] == "ok" and done["launches"] == 1
    hints = await session.hints(uri)
    assert any(h.position.line == LOAD_LINE and "300/384 active · 3 prog" in h.label for h in hints)
    session.close(uri)


async def test_a_script_importing_a_workspace_kernel_runs(session: Session, workspace):
    uri = session.open(workspace / "launch_lib.py")
    done = await session.finished_run(uri, 1, timeout=60)
    assert done["status"] == "ok" and done["launches"] == 1
    session.close(uri)


async def test_a_missing_interpreter_is_reported_not_fatal(session: Session, workspace):
    await session.configure(dict(SETTINGS, python="/nonexistent/bin/python3"))
    try:
        uri, done, diags = await run_file(session, workspace / "nopython.py", script("pass"))
        assert done["status"] == "error"
        d = [x for x in diags if x.code == "tool-error"]
        assert d and "/nonexistent/bin/python3" in d[0].message and "tritonLens.python" in d[0].message
        session.close(uri)
    finally:
        await session.configure(SETTINGS)
    assert server_alive(session.client)
    assert sys.executable  # the settings are back; later modules start their own server
