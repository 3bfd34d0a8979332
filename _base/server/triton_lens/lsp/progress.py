"""Work done progress ($/progress) for runs that take longer than half a second: created by the
server (window/workDoneProgress/create), then the kernel, launch and programs done as they stream."""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from .runs import SAY_RUNNING_AFTER_S, RunHandle
from .view import RunView

if TYPE_CHECKING:
    from ..trace_engine import Progress

log = logging.getLogger(__name__)

AFTER_S = SAY_RUNNING_AFTER_S
EVERY_S = 0.25


def message(p: Progress) -> str:
    return f"{p.kernel}: launch {p.launch + 1}, {p.programs_done}/{p.programs_total} programs"


class RunProgress:
    def __init__(self, server: LanguageServer) -> None:
        self.server = server

    def started(self, h: RunHandle, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        loop.call_later(AFTER_S, self._create, h)

    def _create(self, h: RunHandle) -> None:
        if h.done:
            return
        h.token = f"triton-lens-{uuid.uuid4().hex[:12]}"

        def answered(f: Future[Any]) -> None:  # on the thread that got the client's answer (pygls: an untyped Future)
            if not f.cancelled() and f.exception() is None:
                self.loop.call_soon_threadsafe(self._begin, h)

        try:
            self.server.work_done_progress.create(h.token).add_done_callback(answered)
        except Exception:  # noqa: BLE001 - progress is a nicety
            log.exception("progress create failed")

    def _begin(self, h: RunHandle) -> None:
        if h.done or h.token is None:  # (the token is set before the request that leads here)
            return
        try:
            self.server.work_done_progress.begin(
                h.token,
                lsp.WorkDoneProgressBegin(
                    title="Triton Lens", message=f"running {os.path.basename(h.path)}", cancellable=False, percentage=0
                ),
            )
            h.begun = True
            self._report(h)
        except Exception:  # noqa: BLE001
            log.exception("progress begin failed")

    def _report(self, h: RunHandle) -> None:
        if h.done or not h.begun or h.token is None:  # (begun: it has its token)
            return
        p = h.progress
        if p is not None:
            msg = message(p)
            if msg != h.last_report:
                h.last_report = msg
                pct = int(100 * p.programs_done / p.programs_total) if p.programs_total else None
                self.server.work_done_progress.report(h.token, lsp.WorkDoneProgressReport(message=msg, percentage=pct))
        self.loop.call_later(EVERY_S, self._report, h)

    def finished(self, h: RunHandle, view: RunView | None) -> None:
        if h.begun and h.token:
            msg = "cancelled" if view is None else f"{view.result.status}, {len(view.result.launches)} launches"
            try:
                self.server.work_done_progress.end(h.token, lsp.WorkDoneProgressEnd(message=msg))
            except Exception:  # noqa: BLE001
                log.exception("progress end failed")
        h.begun = False
