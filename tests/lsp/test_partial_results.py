"""Progressive results over stdio (trace_engine/recording/progressive.py, lsp/runs.py): on a launch of 1024
programs, a partial publication (a sample of the programs, marked partial with its program counts)
comes first, the complete one replaces it and equals a run without progressive results; findings that
need the whole launch (a race between programs) are never published from the sample; a new edit
cancels the run at once."""

from __future__ import annotations

import asyncio
import time

import pytest
from lsp_harness import Session, session_fixture, worker_children

pytestmark = pytest.mark.asyncio(loop_scope="module")

KERNEL = '''"""1024 programs; the last one's unmasked load runs past the end; every program stores to flag[0]."""
import torch
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, out_ptr, flag_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(12):
        acc += tl.load(x_ptr + offs, mask=offs < n)
    y = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, acc + y, mask=offs < n)
    tl.store(flag_ptr, pid)


if __name__ == "__main__":
    n = 1024 * 64 - 5
    x = torch.rand(n)
    out = torch.empty(n)
    flag = torch.zeros(1, dtype=torch.int32)
    k[(triton.cdiv(n, 64),)](x, out, flag, n, BLOCK=64)
'''
OOB_LINE = 13  # 0-based: y = tl.load(x_ptr + offs)
RACE_LINE = 15  # tl.store(flag_ptr, pid)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    return tmp_path_factory.mktemp("progressive")


client = session_fixture({"debounceMs": 0, "timeLimit": 120, "workers": 1}, with_workspace=True)


def _pubs(session: Session, uri: str, version: int) -> list[list]:
    return [d for u, v, d in session.published if u == uri and v == version]


def _key(diags) -> list:
    return sorted(
        (d.range.start.line, d.range.start.character, d.range.end.line, d.code, int(d.severity or 0), d.message)
        for d in diags
    )


async def test_partial_first_then_complete_equal_to_a_plain_run(session: Session, workspace):
    path = workspace / "many.py"
    path.write_text(KERNEL)
    uri = session.open(path)
    partial = await session.wait_for(
        lambda: [p for p in session.partials if p["uri"] == uri and p["version"] == 1], 120, "runPartial v1"
    )
    p = partial[0]
    assert p["kernel"] == "k" and p["launch"] == 0 and p["programsTotal"] == 1024
    assert 2 <= p["programsDone"] < 1024 * 0.2, p
    # While the partial results are shown (if the run has not finished meanwhile): hints and lens say so.
    hints = await session.hints(uri)
    lenses = await session.lenses(uri)
    if not [n for n in session.finished if n["uri"] == uri and n["version"] == 1]:
        assert hints and all("partial:" in h.tooltip.value for h in hints), [h.tooltip for h in hints]
        assert any("of 1024 programs" in (ln.command.title if ln.command else "") for ln in lenses)
    done = await session.finished_run(uri, 1, timeout=120)
    assert done["status"] == "ok" and done["launches"] == 1
    pubs = _pubs(session, uri, 1)
    first_partial = next(i for i, d in enumerate(pubs) if any("partial:" in x.message for x in d))
    shown = pubs[first_partial]
    # the sample has the last program: its out-of-bounds lanes are real, and shown at once ...
    assert any(d.code == "oob" and d.range.start.line == OOB_LINE for d in shown), _key(shown)
    assert all("of 1024 programs" in d.message for d in shown)
    # ... the race between programs needs every program: never from the sample
    assert not any(d.code == "race" for d in shown), _key(shown)
    final = pubs[-1]
    assert final is not shown and not any("partial:" in d.message for d in final)
    assert any(d.code == "race" and d.range.start.line == RACE_LINE for d in final), _key(final)
    assert any(d.code == "oob" and d.range.start.line == OOB_LINE for d in final), _key(final)
    final_hints = [(h.position.line, h.label, h.tooltip.value) for h in await session.hints(uri)]
    assert final_hints and not any("partial:" in t for _, _, t in final_hints)
    lens_titles = [ln.command.title for ln in await session.lenses(uri) if ln.command]
    assert not any("partial" in t for t in lens_titles), lens_titles

    # The same text without progressive results: the very same diagnostics and hints, and no partial.
    await session.configure({"debounceMs": 0, "timeLimit": 120, "workers": 1, "progressive": False})
    plain_path = workspace / "many_plain.py"
    plain_path.write_text(KERNEL)
    plain = session.open(plain_path)
    await session.finished_run(plain, 1, timeout=120)
    assert not [x for x in session.partials if x["uri"] == plain]
    assert _key(_pubs(session, plain, 1)[-1]) == _key(final)
    assert [(h.position.line, h.label, h.tooltip.value) for h in await session.hints(plain)] == final_hints
    session.close(plain)
    session.close(uri)
    await session.configure({"debounceMs": 0, "timeLimit": 120, "workers": 1, "progressive": True})


async def test_a_new_edit_cancels_a_run_showing_partial_results(session: Session, workspace):
    path = workspace / "cancel.py"
    slow = KERNEL.replace("range(12)", "range(200)")  # minutes to complete: only the sample comes back
    path.write_text(slow)
    uri = session.open(path)
    await session.wait_for(
        lambda: [p for p in session.partials if p["uri"] == uri and p["version"] == 1], 120, "runPartial v1"
    )
    assert any("partial:" in d.message for d in session.diagnostics(uri))
    # This run takes minutes, so the partial results are still what is shown: hints and lens say so.
    hints = await session.hints(uri)
    assert hints and all("partial:" in h.tooltip.value for h in hints), [h.tooltip for h in hints]
    titles = [ln.command.title for ln in await session.lenses(uri) if ln.command]
    assert any("partial results" in t and "of 1024 programs" in t for t in titles), titles
    t0 = time.monotonic()
    v2 = session.edit(uri, 0, 0, 0, 0, "# edited\n")  # the same kernel, one line down
    published_before = len(session.published)
    # the old run's worker is gone at once (the new run's worker is a new process)
    old = set(worker_children(session.client))
    await session.wait_for(lambda: not (old & set(worker_children(session.client))), 10, "the old worker to end")
    assert time.monotonic() - t0 < 10
    await session.wait_for(
        lambda: [p for p in session.partials if p["uri"] == uri and p["version"] == v2], 120, "runPartial v2"
    )
    # nothing of version 1 was published after the edit; version 2's partial is on the moved line
    later = [(u, v) for u, v, _ in session.published[published_before:] if u == uri]
    assert all(v == v2 for _, v in later), later
    assert any(d.code == "oob" and d.range.start.line == OOB_LINE + 1 for d in session.diagnostics(uri))
    session.close(uri)  # the run of version 2 is cancelled with it
    await session.wait_for(lambda: not worker_children(session.client), 30, "no worker left")
    await asyncio.sleep(0)
