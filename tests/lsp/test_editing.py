"""Editing a buffer: diagnostics and hints follow the unsaved text, stale results are never shown as
current, a new edit cancels the run in flight, quick edits are debounced into one run."""

from __future__ import annotations

import asyncio
import time

import pytest
from lsp_harness import Session, session_fixture, worker_children
from lsprotocol import types as lsp

pytestmark = pytest.mark.asyncio(loop_scope="module")
DEBOUNCE_MS = 300

BUGGY = '''"""One load forgets its mask."""
import torch
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


if __name__ == "__main__":
    n = 1000
    x = torch.rand(n)
    y = torch.rand(n)
    out = torch.empty(n)
    add_kernel[(triton.cdiv(n, 128),)](x, y, out, n, BLOCK=128)
'''
X_LINE = 11  # 0-based line of `x = tl.load(x_ptr + offs)`

SLOW = """import time
import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


if __name__ == "__main__":
    x = torch.rand(300)
    out = torch.empty(300)
    copy_kernel[(3,)](x, out, 300, BLOCK=128)
    time.sleep(SECONDS)
"""


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    return tmp_path_factory.mktemp("editing")


client = session_fixture({"debounceMs": DEBOUNCE_MS, "timeLimit": 60}, with_workspace=True)


def _oob(s: Session, uri: str) -> list[lsp.Diagnostic]:
    return [d for d in s.diagnostics(uri) if d.code == "oob"]


async def _publication(s: Session, uri: str, version: int) -> list[lsp.Diagnostic]:
    def pred():
        for u, v, d in reversed(s.published):
            if u == uri and v == version:
                return [d]
        return None

    return (await s.wait_for(pred, 10, f"diagnostics published for v{version}"))[0]


def _is_stale(d: lsp.Diagnostic) -> bool:
    return d.message.startswith("(from an earlier version") and (d.data or {}).get("stale") is True


async def test_diagnostics_follow_the_unsaved_buffer(session: Session, workspace):
    path = workspace / "buggy.py"
    path.write_text(BUGGY)
    uri = session.open(path)
    await session.finished_run(uri, 1)
    oob = _oob(session, uri)
    assert [d.range.start.line for d in oob] == [X_LINE] and not _is_stale(oob[0])
    hints = await session.hints(uri)
    assert {h.position.line for h in hints} == {X_LINE, X_LINE + 1, X_LINE + 2}

    # Lines move (two lines inserted at the top): while the run of v2 is on its way, the old results
    # are shifted onto their lines and marked as from an earlier version.
    v2 = session.edit(uri, 0, 0, 0, 0, "# one\n# two\n")
    diags = await _publication(session, uri, v2)
    oob = [d for d in diags if d.code == "oob"]
    assert [d.range.start.line for d in oob] == [X_LINE + 2] and _is_stale(oob[0])
    hints = await session.hints(uri)
    assert {h.position.line for h in hints} == {X_LINE + 2, X_LINE + 3, X_LINE + 4}
    assert all("earlier version" in h.tooltip.value for h in hints)
    hover = await session.hover(uri, X_LINE + 2, 10)
    assert hover is not None and "earlier version" in hover.contents.value
    await session.finished_run(uri, v2)
    oob = _oob(session, uri)
    assert [d.range.start.line for d in oob] == [X_LINE + 2] and not _is_stale(oob[0])
    assert session.published_version(uri) == v2
    assert all("earlier version" not in h.tooltip.value for h in await session.hints(uri))

    # Fix the bug in place (no line moves): the diagnostic on the edited line is marked stale until
    # the new run ends, the hint of the edited line is withheld, the others stay. No save.
    line = X_LINE + 2
    src = "    x = tl.load(x_ptr + offs)"
    v3 = session.edit(uri, line, 0, line, len(src), "    x = tl.load(x_ptr + offs, mask=mask)")
    diags = await _publication(session, uri, v3)
    assert [_is_stale(d) for d in diags if d.code == "oob"] == [True]
    hint_lines = {h.position.line for h in await session.hints(uri)}
    assert hint_lines == {line + 1, line + 2}
    await session.finished_run(uri, v3)
    assert _oob(session, uri) == []
    assert not [d for d in session.diagnostics(uri) if d.severity in (1, 2)]
    hints = {h.position.line: h.label for h in await session.hints(uri)}
    assert "1000/1024 active" in hints[line]

    # Introduce a bug: the mask lets 16 lanes past the end through, in the two loads and the store.
    mline = line - 1
    v4 = session.edit(uri, mline, len("    mask = offs < n"), mline, len("    mask = offs < n"), " + 16")
    await session.finished_run(uri, v4)
    oob = _oob(session, uri)
    assert sorted(d.range.start.line for d in oob) == [line, line + 1, line + 2]
    assert all("16 lanes" in d.message for d in oob)
    session.close(uri)
    assert path.read_text() == BUGGY  # nothing was saved


async def test_a_new_edit_cancels_the_run_in_flight(session: Session, workspace):
    path = workspace / "slow.py"
    path.write_text(SLOW.replace("SECONDS", "120"))
    uri = session.open(path)
    await session.wait_for(
        lambda: [n for n in session.started if n["uri"] == uri and n["version"] == 1], 60, "runStarted v1"
    )
    await session.wait_for(lambda: worker_children(session.client), 60, "the worker to start")
    await asyncio.sleep(1.0)  # the run is busy (sleeping after its launch)
    t0 = time.monotonic()
    src = "    time.sleep(120)"
    lines = SLOW.replace("SECONDS", "120").splitlines()
    v2 = session.edit(uri, lines.index(src), 0, lines.index(src), len(src), "    time.sleep(0)")
    done = await session.finished_run(uri, v2, timeout=90)
    elapsed = time.monotonic() - t0
    assert done["status"] == "ok" and done["launches"] == 1
    # Well under the 120 s the cancelled run sleeps, with room for a new worker's start on a loaded machine.
    assert elapsed < 90, f"the cancelled run held things up: {elapsed:.1f} s"
    # The cancelled run never reported results, and its worker is gone.
    assert not [n for n in session.finished if n["uri"] == uri and n["version"] == 1 and n["status"] != "cancelled"]
    await session.wait_for(lambda: not worker_children(session.client), 30, "no worker left")
    # A run longer than half a second showed progress: created, begun, ended.
    reports = [r for r in session.client.progress_reports.values() if r]
    assert any(
        isinstance(r[0], lsp.WorkDoneProgressBegin) and isinstance(r[-1], lsp.WorkDoneProgressEnd) for r in reports
    ), session.client.progress_reports
    session.close(uri)


async def test_quick_edits_are_debounced_into_one_run(session: Session, workspace):
    path = workspace / "debounce.py"
    runs = workspace / "debounce-runs.txt"  # the script's own count of its runs
    script = SLOW.replace("    time.sleep(SECONDS)", f"    open({str(runs)!r}, 'a').write('ran\\n')")
    path.write_text(script)
    uri = session.open(path)
    await session.finished_run(uri, 1)
    n_finished = len(session.finished)
    v = 1
    for i in range(5):
        v = session.edit(uri, 0, 0, 0, 0, f"# edit {i}\n")
        await asyncio.sleep(DEBOUNCE_MS / 1000 / 5)
    await session.finished_run(uri, v)
    # The script ran twice: the file's first version, then the last edit's (a short run says nothing before
    # its end, runs.SAY_RUNNING_AFTER_S: the script's own count is what shows that no other version ran).
    assert runs.read_text().splitlines() == ["ran", "ran"]
    assert [n["version"] for n in session.finished[n_finished:] if n["uri"] == uri] == [v]
    # hints are placed on the moved lines of the new text
    text = "".join(f"# edit {i}\n" for i in reversed(range(5))) + script
    hints = await session.hints(uri)
    assert hints and all("tl.load" in text.splitlines()[h.position.line] for h in hints)
    session.close(uri)


async def test_viewer_requests_and_code_lenses(session: Session, workspace):
    path = workspace / "viewer.py"
    path.write_text(BUGGY)
    uri = session.open(path)
    await session.finished_run(uri, 1)
    k = await session.request("tritonLens/kernels", {"uri": uri})
    assert k.version == 1 and k.stale is False and k.status == "ok"
    kern = k.kernels[0]
    assert kern.name == "add_kernel" and len(kern.launches) == 1 and kern.launches[0].programs == 8
    tensors = kern.launches[0].tensors
    x = [t.index for t in tensors if t.name == "x_ptr"][0]
    amap = await session.request("tritonLens/accessMap", {"uri": uri, "launch": 0, "tensor": x})
    assert amap.tensor.name == "x_ptr" and amap.sites and amap.accesses
    assert any(a.oob is not None for a in amap.accesses)  # the last program's out-of-bounds lanes
    vals = await session.request("tritonLens/values", {"uri": uri, "launch": 0, "tensor": x, "start": 0, "count": 4})
    assert vals.start == 0 and (vals.values is None or len(vals.values) == 4)
    with pytest.raises(Exception):
        await session.request("tritonLens/accessMap", {"uri": uri, "launch": 7, "tensor": 0})
    with pytest.raises(Exception):
        await session.request("tritonLens/accessMap", {"uri": "file:///nowhere.py", "launch": 0, "tensor": 0})
    # issue 14: values as a colour map with histograms, tl.dot executions, performance
    vm = await session.request("tritonLens/valueMap", {"uri": uri, "launch": 0, "tensor": x, "when": "before"})
    assert vm.when == "before" and vm.block == 1 and vm.histograms[0].elements == vm.numel == 1000
    perf = await session.request("tritonLens/performance", {"uri": uri, "launch": 0})
    assert [g.name for g in perf.gpus] == ["H100 SXM", "H200", "A100", "MI300X", "RTX 4090"]
    assert perf.launches[0].flops == 0 and perf.launches[0].roofline.h100.bound == "memory"
    dots = await session.request("tritonLens/dots", {"uri": uri, "launch": 0})
    assert list(dots.executions) == []
    with pytest.raises(Exception):
        await session.request("tritonLens/valueMap", {"uri": uri, "launch": 0, "tensor": 99})

    lenses = await session.lenses(uri)
    titles = [lens.command.title for lens in lenses]
    assert titles[0] == "▶ Visualize this kernel" and titles[1] == "Debug this kernel"
    assert lenses[0].command.command == "tritonLens.visualize"
    assert list(lenses[0].command.arguments) == [uri, "add_kernel", 7]  # 0-based def line
    assert lenses[1].command.command == "tritonLens.debugKernel" and list(lenses[1].command.arguments) == [
        uri,
        "add_kernel",
    ]
    assert titles[2].startswith("1 launch · 8 programs") and lenses[2].command.command == "tritonLens.showOutput"
    assert lenses[0].range.start.line == 6  # above the decorator

    # after an edit, until the new run ends, the viewer is told its data is from an earlier version
    v2 = session.edit(uri, 0, 0, 0, 0, "\n")
    k = await session.request("tritonLens/kernels", {"uri": uri})
    assert k.stale is True and k.version == 1 and k.docVersion == v2
    await session.finished_run(uri, v2)
    k = await session.request("tritonLens/kernels", {"uri": uri})
    assert k.stale is False and k.version == v2

    # hover on the load: tensor facts, per-dimension ranges, programs, mask, out of bounds, map
    hover = await session.hover(uri, X_LINE + 1, 10)
    md = hover.contents.value
    for part in (
        "`x_ptr`",
        "float32",
        "shape `(1000,)`",
        "strides `(1,)`",
        "x_ptr[0:1000]",
        "program `(0,)`",
        "x_ptr[0:128]",
        "mask:",
        "out of bounds: 24 active lanes",
        "bytes",
        "█",
    ):
        assert part in md, (part, md)
    assert hover.range.start.line == X_LINE + 1
    assert await session.hover(uri, 2, 0) is None  # not on an access
    session.close(uri)


async def test_inlay_hints_setting(session: Session, workspace):
    path = workspace / "hints.py"
    path.write_text(BUGGY)
    uri = session.open(path)
    await session.finished_run(uri, 1)
    assert await session.hints(uri)
    refreshes = session.refreshes["inlayHint"]
    session.client.set_configuration(
        {"debounceMs": DEBOUNCE_MS, "timeLimit": 60, "inlayHints": False}, section="tritonLens"
    )
    session.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    await session.wait_for(lambda: session.refreshes["inlayHint"] > refreshes, 10, "an inlay hint refresh")
    assert await session.hints(uri) == []
    session.client.set_configuration({"debounceMs": DEBOUNCE_MS, "timeLimit": 60}, section="tritonLens")
    session.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
    await session.wait_for(lambda: session.refreshes["inlayHint"] > refreshes + 1, 10, "an inlay hint refresh")
    assert await session.hints(uri)
    session.close(uri)


async def test_save_runs_at_once_and_a_slow_debounce_waits(session: Session, workspace):
    path = workspace / "save.py"
    path.write_text(BUGGY)
    uri = session.open(path)
    await session.finished_run(uri, 1)
    await session.configure({"debounceMs": 20000, "timeLimit": 60})
    try:
        v2 = session.edit(uri, 0, 0, 0, 0, "# edited\n")
        await asyncio.sleep(1.0)
        ran = lambda v: [n for n in session.started + session.finished if n["uri"] == uri and n["version"] == v]  # noqa: E731
        assert not ran(v2), "ran before the debounce"
        t0 = time.monotonic()
        session.save(uri)
        await session.finished_run(uri, v2)
        assert time.monotonic() - t0 < 15  # (not after the 20 s wait)
        n_runs = len(session.started) + len(session.finished)
        session.save(uri)  # saving text that already ran starts nothing
        await asyncio.sleep(1.5)  # (a run would have ended: its script takes milliseconds, its worker is warm)
        assert len(session.started) + len(session.finished) == n_runs
    finally:
        await session.configure({"debounceMs": DEBOUNCE_MS, "timeLimit": 60})
    session.close(uri)


async def test_kernel_outline_request_serves_the_engine_kernel_finder(session: Session, workspace):
    path = workspace / "outline.py"
    path.write_text(BUGGY)
    uri = session.open(path)
    out = await session.request("tritonLens/kernelOutline", {"uri": uri, "line": 11})  # inside the kernel, 0-based
    assert out.at == 0 and [k.name for k in out.kernels] == ["add_kernel"]
    k = out.kernels[0]
    assert (k.firstLine, k.line, k.bodyLine) == (6, 7, 8)  # 0-based, as LSP positions
    assert [p.name for p in k.params] == ["x_ptr", "y_ptr", "out_ptr", "n", "BLOCK"]
    assert BUGGY.splitlines()[k.params[0].line][k.params[0].col : k.params[0].endCol] == "x_ptr"
    # the editor's text wins (the extension sends what the user sees); a file the server never opened works too
    other = await session.request(
        "tritonLens/kernelOutline", {"uri": "file:///not/open.py", "text": "x = 1\n", "line": 0}
    )
    assert other.kernels == [] and other.at is None
    with pytest.raises(Exception):
        await session.request("tritonLens/kernelOutline", {"uri": "file:///not/open.py"})
    with pytest.raises(Exception):
        await session.request("tritonLens/kernelOutline", {"uri": uri, "line": -1})
    session.close(uri)
