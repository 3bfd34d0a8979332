"""Run scheduling without the engine: debounce, cancel, which run's results are adopted."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from triton_lens.lsp.documents import Doc
from triton_lens.lsp.runplan import Plan
from triton_lens.lsp.runs import RunScheduler
from triton_lens.lsp.settings import Settings


class Recorder:
    def __init__(self, run_s: float = 0.2):
        self.run_s = run_s
        self.started: list[int] = []
        self.finished: list[tuple[int, bool, bool]] = []  # (version, got a view, adopted)
        self.executed: list[int] = []
        self.done = asyncio.Event()

    def execute(self, h):
        self.executed.append(h.version)
        if h.cancel.wait(self.run_s):
            return None
        return SimpleNamespace(version=h.version, text=h.text)

    def on_start(self, doc, h):
        self.started.append(h.version)

    def on_finish(self, doc, h, view, adopted):
        self.finished.append((h.version, view is not None, adopted))
        self.done.set()


def make(rec: Recorder, max_workers: int = 2):
    docs = {}
    sched = RunScheduler(
        rec.on_start, rec.on_finish, lambda d: docs.get(d.uri) is d, max_workers=max_workers, execute_fn=rec.execute
    )
    doc = Doc(uri="file:///k.py", path="/k.py", version=1, text="v1", plan=Plan(True))
    docs[doc.uri] = doc
    return sched, doc, docs


async def wait_finished(rec: Recorder, n: int, timeout: float = 5.0):
    async def loop():
        while len(rec.finished) < n:
            rec.done.clear()
            await rec.done.wait()

    await asyncio.wait_for(loop(), timeout)


async def test_debounce_runs_only_the_last_version():
    rec = Recorder()
    sched, doc, _ = make(rec)
    for v in (1, 2, 3):
        doc.update(v, f"v{v}", doc.plan)
        sched.schedule(doc, 0.1, Settings())
        await asyncio.sleep(0.02)
    await wait_finished(rec, 1)
    assert rec.started == [3] and rec.finished == [(3, True, True)] and doc.view.version == 3
    sched.shutdown()


async def test_an_edit_cancels_the_run_in_flight_and_its_result_is_dropped():
    rec = Recorder(run_s=5.0)
    sched, doc, _ = make(rec)
    sched.schedule(doc, 0, Settings())
    await asyncio.sleep(0.05)
    rec.run_s = 0.05
    doc.update(2, "v2", doc.plan)
    sched.schedule(doc, 0.05, Settings())  # the edit: cancels v1 at once, runs v2 after the debounce
    await wait_finished(rec, 2)
    assert (1, False, False) in rec.finished and (2, True, True) in rec.finished
    assert doc.view.version == 2 and doc.run is None
    sched.shutdown()


async def test_the_same_text_does_not_run_twice_and_an_older_view_is_not_adopted():
    rec = Recorder(run_s=0.05)
    sched, doc, _ = make(rec)
    sched.schedule(doc, 0, Settings())
    sched.schedule(doc, 0, Settings())  # same version in flight: nothing new
    await wait_finished(rec, 1)
    sched.start(doc, Settings())  # this text already ran: nothing
    await asyncio.sleep(0.1)
    assert rec.started == [1]
    # a late result of an older version never replaces a newer one
    doc.view = SimpleNamespace(version=5, text="v5")
    doc.update(5, "v5", doc.plan)
    h = sched.start(doc, Settings(), force=True)
    h.version = 4
    await wait_finished(rec, 2)
    assert rec.finished[-1] == (4, True, False) and doc.view.version == 5
    sched.shutdown()


async def test_a_closed_document_adopts_nothing():
    rec = Recorder(run_s=0.3)
    sched, doc, docs = make(rec, max_workers=1)
    other = Doc(uri="file:///o.py", path="/o.py", version=1, text="o", plan=Plan(True))
    docs[other.uri] = other
    sched.schedule(doc, 0, Settings())
    sched.schedule(other, 0, Settings())  # waits for the single runner thread
    sched.cancel(other)
    del docs[other.uri]
    del docs[doc.uri]
    sched.cancel(doc)
    await wait_finished(rec, 2)
    assert doc.view is None and other.view is None
    sched.shutdown()
