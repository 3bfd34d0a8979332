"""Run scheduling: debounce, cancel, versions. Each run is the document's text at one version; it
runs in a thread (the trace engine's worker process does the work), and its view is built there too,
so the event loop only ever does lookups. A newer edit cancels the run in flight; a run's view is
adopted only if it is newer than the one shown.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..model import ERROR
from ..model.remedies import EDITOR
from ..trace_engine import SizeCache
from .runplan import Plan
from .settings import Settings
from .view import PartialInfo, RunView, add_hovers, build_view

if TYPE_CHECKING:
    from ..trace_engine import Partial, Progress
    from .documents import Doc  # (documents.py imports this module)

log = logging.getLogger(__name__)

# The size check's results across edits, for every document of this server (trace_engine/recording/size_cache.py):
# a run answers an unchanged launch from it instead of re-running its probes. Bounded in entries and bytes.
SIZE_CACHE = SizeCache()

# A run says that it runs (tritonLens/runStarted, the code lens's "⟳ running…", the progress) once it has taken
# this long, or has results to show before (a launch's sample), or is the document's first: an edit's short run
# goes from one result to the next, without a spinner coming and going in the status bar and the lens on
# each keystroke.
SAY_RUNNING_AFTER_S = 0.5


@dataclass
class RunHandle:
    uri: str
    path: str
    version: int
    text: str
    plan: Plan
    settings: Settings
    cancel: threading.Event = field(default_factory=threading.Event)
    started: float = field(default_factory=time.perf_counter)
    progress: Progress | None = None  # last reported (set from the runner's thread)
    token: str | None = None  # work done progress token, once created
    begun: bool = False
    done: bool = False
    announced: bool = False  # runStarted sent (SAY_RUNNING_AFTER_S)
    last_report: str = ""
    # Set by the scheduler: hands a partial view (a launch's sample) to the loop, from the engine's thread.
    on_partial: Callable[[RunView], None] | None = None


def execute(h: RunHandle) -> RunView | None:
    """Runs one version of a document through the engine and builds its view. None when cancelled.
    The only place the server calls the trace engine and the analysis."""
    from ..analysis import analyze
    from ..trace_engine import RunRequest, run

    if h.cancel.is_set():  # cancelled while it waited for a free runner thread
        return None
    s = h.settings
    req = RunRequest(
        path=h.path,
        source=h.text,
        command=h.plan.command,
        cwd=h.plan.cwd,
        python=s.python,
        timeout_s=s.time_limit_s,
        memory_mb=s.memory_limit_mb,
        keep_warm=True,
        device=s.device,
        gpu=s.stand_in_gpu,
        workers=s.workers,  # 0: the runner's default
        progressive=s.progressive,
        size_cache=SIZE_CACHE,
    )

    def on_progress(p: Progress) -> None:
        h.progress = p

    def on_partial(p: Partial) -> None:
        # a launch's sample (trace_engine/recording/progressive.py), before the launch completes
        if h.cancel.is_set() or h.on_partial is None:
            return
        info = PartialInfo(p.kernel, p.launch, p.programs_done, p.programs_total)
        view = build_view(h.version, h.text, p.result, analyze(p.result, EDITOR), h.plan, partial=info, hovers=False)
        view.ms = (time.perf_counter() - h.started) * 1000.0
        h.on_partial(view)  # its diagnostics and hints shown first; its hovers follow (as soon as they are made)
        add_hovers(view)

    result = run(req, cancel=h.cancel, on_progress=on_progress, on_partial=on_partial)
    if result.status == ERROR and result.error is not None and result.error.type == "Cancelled":
        return None
    view = build_view(h.version, h.text, result, analyze(result, EDITOR), h.plan)
    view.ms = (time.perf_counter() - h.started) * 1000.0
    return view


class RunScheduler:
    def __init__(
        self,
        on_start: Callable[[Doc, RunHandle], None],
        on_finish: Callable[[Doc, RunHandle, RunView | None, bool], None],
        is_open: Callable[[Doc], bool],
        max_workers: int = 3,
        execute_fn: Callable[[RunHandle], RunView | None] = execute,
        on_partial: Callable[[Doc, RunHandle, RunView], None] | None = None,
    ) -> None:
        self.on_partial = on_partial  # (doc, handle, partial view) on the loop, when one is adopted
        self.on_start = on_start  # (doc, handle) on the loop, when a run starts
        self.on_finish = on_finish  # (doc, handle, view or None, adopted: bool) on the loop
        self.is_open = is_open  # doc -> bool
        self.execute_fn = execute_fn
        self.pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="triton-lens-run")
        self.loop: asyncio.AbstractEventLoop | None = None

    def _loop(self) -> asyncio.AbstractEventLoop:
        if self.loop is None:
            self.loop = asyncio.get_running_loop()
        return self.loop

    def cancel(self, doc: Doc) -> None:
        """Stop the pending debounce and the run in flight (the engine kills its worker)."""
        if doc.timer is not None:
            doc.timer.cancel()
            doc.timer = None
        if doc.run is not None:
            doc.run.cancel.set()

    def schedule(self, doc: Doc, delay_s: float, settings: Settings, force: bool = False) -> None:
        """Run the document's text as it will be after `delay_s` of quiet (a newer call restarts the wait)."""
        if doc.timer is not None:
            doc.timer.cancel()
        if doc.run is not None and doc.run.version != doc.version:
            doc.run.cancel.set()
        if delay_s <= 0:
            doc.timer = None
            self.start(doc, settings, force)
        else:
            doc.timer = self._loop().call_later(delay_s, self.start, doc, settings, force)

    def start(self, doc: Doc, settings: Settings, force: bool = False) -> RunHandle | None:
        doc.timer = None
        if not self.is_open(doc) or not doc.plan.runnable:
            return None
        if doc.run is not None:
            if doc.run.version == doc.version and not doc.run.cancel.is_set() and not force:
                return doc.run  # this very text is running already
            doc.run.cancel.set()
        if (
            not force
            and doc.view is not None
            and getattr(doc.view, "partial", None) is None  # (a partial view: its run is still to finish)
            and doc.view.version == doc.version
            and doc.view.text == doc.text
        ):
            return None  # this text already ran (a save right after the run of its last edit)
        h = RunHandle(doc.uri, doc.path, doc.version, doc.text, doc.plan, settings)
        doc.run = h
        loop = self._loop()

        def hand_partial(view: RunView) -> None:
            loop.call_soon_threadsafe(self._partial, doc, h, view)

        h.on_partial = hand_partial
        try:
            self.on_start(doc, h)
        except Exception:  # noqa: BLE001 - reporting must never stop a run
            log.exception("on_start failed")
        fut = self.pool.submit(self.execute_fn, h)
        fut.add_done_callback(lambda f: loop.call_soon_threadsafe(self._finished, doc, h, f))
        return h

    def _partial(self, doc: Doc, h: RunHandle, view: RunView) -> None:
        """A run's partial view, shown until its complete one (or a newer run's) replaces it; never
        after the run ended or was cancelled, never over a complete view of the same or a later text."""
        if h.done or h.cancel.is_set() or doc.run is not h or not self.is_open(doc):
            return
        shown = doc.view
        if shown is not None and (
            shown.version > view.version or (shown.version == view.version and shown.partial is None)
        ):
            return
        doc.view = view
        if self.on_partial is not None:
            try:
                self.on_partial(doc, h, view)
            except Exception:  # noqa: BLE001
                log.exception("on_partial failed")

    def _finished(self, doc: Doc, h: RunHandle, fut: Future[RunView | None]) -> None:
        h.done = True
        if doc.run is h:
            doc.run = None
        try:
            view = fut.result()
        except Exception as e:  # noqa: BLE001 - an engine bug must not take the server down
            log.exception("run failed")
            view = _failed_view(h, e)
        adopted = False
        if view is not None and self.is_open(doc) and (doc.view is None or view.version >= doc.view.version):
            doc.view = view
            adopted = True
        try:
            self.on_finish(doc, h, view, adopted)
        except Exception:  # noqa: BLE001
            log.exception("on_finish failed")

    def shutdown(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


def _failed_view(h: RunHandle, e: Exception) -> RunView:
    """A view that says the engine itself failed (shown as a tool-error diagnostic)."""
    import traceback

    from ..analysis import Analysis
    from ..model import RunResult, ScriptError

    result = RunResult(
        file=h.path,
        status=ERROR,
        error=ScriptError(
            ERROR, type(e).__name__, f"internal error: {e}", traceback="".join(traceback.format_exception(e))
        ),
    )
    return build_view(h.version, h.text, result, Analysis(result=result), h.plan)
