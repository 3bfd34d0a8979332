"""The re-check of quick fixes without the engine (lsp/fixcheck.py): one at a time, after the document's
own runs (which stop it), dropped by an edit, at most MAX_CHECKS edits a run."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

from triton_lens.lsp.documents import Doc
from triton_lens.lsp.fixcheck import MAX_CHECKS, FixChecker
from triton_lens.lsp.runplan import Plan
from triton_lens.lsp.settings import Settings
from triton_lens.model import Finding


def _source(n: int) -> str:
    return "".join(f"    x{i} = tl.load(x{i}_ptr + offs)\n" for i in range(n))


def _finding(text: str, i: int) -> Finding:
    row = text.split("\n")[i]
    col = row.index("tl.load")
    return Finding(
        "oob-sizes", "warning", "/k.py", i + 1, "", col, i + 1, len(row), arg=f"x{i}_ptr", access="load",
        witness={"size": "n = 4097"},
    )  # fmt: skip


def _view(version: int, text: str) -> SimpleNamespace:
    """A run's view: an unmasked load is out of bounds at n = 4097, a masked one is not."""
    findings = [_finding(text, i) for i, row in enumerate(text.split("\n")) if "tl.load" in row and "mask=" not in row]
    return SimpleNamespace(
        version=version,
        text=text,
        partial=None,
        plan=Plan(True),
        result=SimpleNamespace(file="/k.py", status="ok", error=None),
        analysis=SimpleNamespace(findings=findings),
    )


class Engine:
    """Runs re-checks as the pool would; a run can be held until released, and counts as stopped when cancelled."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.release = threading.Event()
        self.release.set()

    def execute(self, h):
        self.texts.append(h.text)
        while not self.release.wait(0.01):
            if h.cancel.is_set():
                return None
        return None if h.cancel.is_set() else _view(h.version, h.text)


def _make(n: int = 1):
    engine = Engine()
    pool = ThreadPoolExecutor(max_workers=2)
    doc = Doc(uri="file:///k.py", path="/k.py", version=1, text=_source(n), plan=Plan(True))
    docs = {doc.uri: doc}
    checked: list = []
    busy = [False]
    loop = asyncio.get_running_loop()
    fc = FixChecker(
        pool.submit,
        lambda: loop,
        lambda d: docs.get(d.uri) is d,
        lambda: busy[0],
        lambda d, c: checked.append(c),
        execute_fn=engine.execute,
    )
    return fc, doc, engine, checked, busy


async def _until(pred, timeout: float = 5.0) -> None:
    for _ in range(int(timeout / 0.01)):
        if pred():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("timed out")


def _fix(doc: Doc, i: int = 0) -> dict:
    from triton_lens.analysis.fixes import fix_for

    fix = fix_for(_finding(doc.text, i), doc.text.split("\n"))
    assert fix is not None
    return {"key": fix.key}


async def test_a_fix_is_offered_once_its_re_check_shows_it_right_and_waits_for_the_documents_runs():
    fc, doc, engine, checked, busy = _make()
    busy[0] = True  # a document's own run is in flight
    fc.after_run(doc, _view(1, doc.text), Settings())
    await asyncio.sleep(0.1)
    assert engine.texts == [] and fc.offered(doc, _fix(doc)) is None
    busy[0] = False
    fc.kick()  # (the server kicks when a run ends)
    await _until(lambda: checked)
    assert engine.texts == [doc.text.replace("offs)", "offs, mask=offs < n)")]
    assert fc.offered(doc, _fix(doc)) == (
        "Mask the load against n: `mask=offs < n` (re-checked: in bounds at n = 4097 with this edit)"
    )


async def test_a_run_that_starts_stops_the_re_check_which_goes_on_after_it():
    fc, doc, engine, checked, busy = _make()
    engine.release.clear()
    fc.after_run(doc, _view(1, doc.text), Settings())
    await _until(lambda: engine.texts)
    busy[0] = True
    fc.preempt()
    await _until(lambda: fc.current is None)
    assert checked == [] and len(fc.queue) == 1  # stopped, and queued again
    engine.release.set()
    busy[0] = False
    fc.kick()
    await _until(lambda: checked)
    assert len(engine.texts) == 2 and fc.offered(doc, _fix(doc)) is not None


async def test_an_edit_drops_the_re_checks_of_the_old_text():
    fc, doc, engine, checked, busy = _make(2)
    engine.release.clear()
    fc.after_run(doc, _view(1, doc.text), Settings())
    await _until(lambda: engine.texts)
    doc.update(2, doc.text + "# edited\n", doc.plan)
    fc.forget(doc)
    engine.release.set()
    await _until(lambda: fc.current is None)
    await asyncio.sleep(0.1)
    assert len(engine.texts) == 1 and checked == [] and fc.offered(doc, _fix(doc)) is None


async def test_at_most_max_checks_edits_are_re_checked_a_run_and_the_rest_not_offered():
    fc, doc, engine, checked, busy = _make(MAX_CHECKS + 2)
    fc.after_run(doc, _view(1, doc.text), Settings())
    await _until(lambda: checked)
    (c,) = checked
    assert len(engine.texts) == MAX_CHECKS and len(c.offered) == MAX_CHECKS and c.total == MAX_CHECKS + 2
    assert [w.split(": ")[-1] for w in c.why_not] == [f"not re-checked (at most {MAX_CHECKS} a run)"] * 2
    assert fc.offered(doc, _fix(doc, MAX_CHECKS)) is None


async def test_a_second_run_of_the_same_text_starts_its_re_checks_afresh():
    fc, doc, engine, checked, busy = _make()
    engine.release.clear()
    fc.after_run(doc, _view(1, doc.text), Settings())
    await _until(lambda: engine.texts)
    fc.after_run(doc, _view(1, doc.text), Settings())  # e.g. a forced run after a settings change
    engine.release.set()
    await _until(lambda: checked)
    await asyncio.sleep(0.1)
    (c,) = checked  # the first run's stopped re-check counted for nothing
    assert len(engine.texts) == 2 and c.why_not == [] and fc.offered(doc, _fix(doc)) is not None
