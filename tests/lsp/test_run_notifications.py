"""The run notifications agree with the code lens: a run whose result comes after a newer run of the same
document started (cancelled too late) says that the newer one is still running, so the status bar does not
say "done" while the lens says "⟳ running…". The server's own callbacks, the engine replaced by a fake."""

from __future__ import annotations

import asyncio
import threading

from triton_lens.analysis import Analysis
from triton_lens.lsp.documents import Doc
from triton_lens.lsp.runplan import plan
from triton_lens.lsp.runs import RunScheduler
from triton_lens.lsp.server import RUN_FINISHED, RUN_STARTED, TritonLensServer
from triton_lens.lsp.settings import Settings
from triton_lens.lsp.view import build_view
from triton_lens.model import OK, RunResult

KERNEL = """import triton
import triton.language as tl


@triton.jit
def k(x_ptr):
    tl.store(x_ptr, 1.0)


k[(1,)](None)
"""


def _view(h):
    result = RunResult(file=h.path, status=OK)  # a run that launched nothing: only its status matters here
    return build_view(h.version, h.text, result, Analysis(result=result), h.plan)


async def test_a_late_result_says_a_newer_run_is_on_and_the_last_one_says_done():
    server = TritonLensServer()
    sent: list[tuple[str, dict]] = []
    running_lens: list[bool] = []  # at each runFinished: does the kernel's code lens say running?
    doc = Doc(
        uri="file:///w/k.py", path="/w/k.py", version=1, text=KERNEL, plan=plan("/w/k.py", KERNEL, Settings(), [])
    )
    assert doc.plan.runnable and doc.plan.kernels
    server.docs[doc.uri] = doc

    def notify(method, params):
        sent.append((method, params))
        if method == RUN_FINISHED:
            running_lens.append(any("running…" in lens.command.title for lens in doc.code_lenses(trusted=True)))

    server.protocol.notify = notify  # type: ignore[method-assign]
    server.publish = lambda *a, **k: None  # type: ignore[method-assign]
    server._refresh = lambda *a, **k: None  # type: ignore[method-assign]
    server.log = lambda *a, **k: None  # type: ignore[method-assign]
    gates = {1: threading.Event(), 2: threading.Event()}
    calls = iter((1, 2))

    def execute(h):  # ignores its cancel: a worker that had finished when the cancel came
        gates[next(calls)].wait(5)
        return _view(h)

    server.scheduler = RunScheduler(
        server._run_started, server._run_finished, lambda d: server.docs.get(d.uri) is d, execute_fn=execute
    )
    try:
        server.scheduler.schedule(doc, 0, Settings())
        server.scheduler.schedule(doc, 0, Settings(), force=True)  # a setting changed: the same version again
        gates[1].set()
        for _ in range(100):
            if sum(m == RUN_FINISHED for m, _ in sent) == 1:
                break
            await asyncio.sleep(0.02)
        gates[2].set()
        for _ in range(100):
            if sum(m == RUN_FINISHED for m, _ in sent) == 2:
                break
            await asyncio.sleep(0.02)
        assert [m for m, _ in sent] == [RUN_STARTED, RUN_STARTED, RUN_FINISHED, RUN_FINISHED]
        first, last = (p for m, p in sent if m == RUN_FINISHED)
        assert first["running"] is True and last["running"] is False
        assert running_lens == [True, False]  # the notification says what the lens says
    finally:
        server.scheduler.shutdown()


async def test_a_short_run_of_an_edit_goes_from_one_result_to_the_next_without_saying_it_runs():
    # runs.SAY_RUNNING_AFTER_S: with a result shown, an edit's run says it runs (runStarted, the lens's
    # "⟳ running…") only once it has taken that long, or when its first results (a sample's) come; a
    # shorter one is never announced, so the status bar and the lens do not flicker on each keystroke.
    from triton_lens.lsp.runs import SAY_RUNNING_AFTER_S
    from triton_lens.lsp.server import RUN_PARTIAL
    from triton_lens.lsp.view import PartialInfo

    server = TritonLensServer()
    sent: list[str] = []
    lens_running: list[bool] = []
    doc = Doc(
        uri="file:///w/k.py", path="/w/k.py", version=1, text=KERNEL, plan=plan("/w/k.py", KERNEL, Settings(), [])
    )
    server.docs[doc.uri] = doc

    def notify(method, params):
        sent.append(method)
        lens_running.append(any("running…" in lens.command.title for lens in doc.code_lenses(trusted=True)))

    server.protocol.notify = notify  # type: ignore[method-assign]
    server.publish = lambda *a, **k: None  # type: ignore[method-assign]
    server._refresh = lambda *a, **k: None  # type: ignore[method-assign]
    server.log = lambda *a, **k: None  # type: ignore[method-assign]
    hold: dict[int, float] = {1: 0.0, 2: 0.05, 3: SAY_RUNNING_AFTER_S + 0.4, 4: 0.3}

    def execute(h):
        if h.version == 4 and h.on_partial is not None:  # a sample's results at once, the rest later
            h.on_partial(build_view(h.version, h.text, *_empty(h), partial=PartialInfo("k", 0, 1, 8)))
        threading.Event().wait(hold[h.version])
        return _view(h)

    server.scheduler = RunScheduler(
        server._run_started,
        server._run_finished,
        lambda d: server.docs.get(d.uri) is d,
        execute_fn=execute,
        on_partial=server._run_partial,
    )

    async def run_version(v: int) -> list[str]:
        doc.version = v
        before = len(sent)
        server.scheduler.schedule(doc, 0, Settings(), force=True)
        for _ in range(300):
            if RUN_FINISHED in sent[before:]:
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(SAY_RUNNING_AFTER_S + 0.1)  # (an announcement due after the run: none comes)
        return sent[before:]

    try:
        assert await run_version(1) == [RUN_STARTED, RUN_FINISHED]  # the first run: nothing else to show
        assert await run_version(2) == [RUN_FINISHED]  # short: never said to run
        assert await run_version(3) == [RUN_STARTED, RUN_FINISHED]  # long: said to run after the wait
        assert lens_running[-2:] == [True, False]  # (the lens says what the notifications say)
        assert await run_version(4) == [RUN_STARTED, RUN_PARTIAL, RUN_FINISHED]  # its sample's results first
    finally:
        server.scheduler.shutdown()


def _empty(h):
    result = RunResult(file=h.path, status=OK)
    return result, Analysis(result=result), h.plan
