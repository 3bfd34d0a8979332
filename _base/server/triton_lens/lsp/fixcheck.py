"""Quick fixes re-checked before they are offered (issue 22): after a run whose size findings have a fix
(analysis/fixes.py), the document's text with each edit made is run the way the document's own run was
(runs.execute: same plan, settings, limits and size cache), and a fix is offered only when that run
ended ok and no longer reports the finding it fixes (analysis.fixes.still_reported).

The document's own runs come first: re-checks run one at a time, only while no document's run is in
flight; a run that starts stops the re-check in flight (it is queued again). An edit or a close drops
every re-check of the old text, so a verdict is only ever of the text the document has now. At most
MAX_CHECKS edits are re-checked per run; the rest are not offered (the output channel says so).
"""

from __future__ import annotations

import logging
import os
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..analysis.fixes import Fix, applied, checked_title, fix_for, still_reported
from ..model import OK, Finding
from .runs import RunHandle, execute
from .settings import Settings
from .text import Lines
from .view import RunView

if TYPE_CHECKING:
    import asyncio

    from .documents import Doc

log = logging.getLogger(__name__)

MAX_CHECKS = 4  # edits re-checked per run: each is a run of the whole script


@dataclass
class Candidate:
    """One edit to re-check, with the findings it fixes (one widened operation can serve two accesses)."""

    doc: Doc
    version: int
    text: str  # the text that ran
    fixed: str  # that text with the edit made
    view: RunView
    settings: Settings
    fixes: list[tuple[Finding, Fix]] = field(default_factory=list)
    preempted: bool = False
    checks: Checks | None = None  # the re-checks it is one of (a later run of the same version makes new ones)


@dataclass
class Checks:
    """The re-checks of one version of a document."""

    version: int
    text: str
    total: int  # the run's fixes (edits), checked or not
    left: int  # edits still to check
    offered: dict[str, str] = field(default_factory=dict)  # Fix.key -> the re-checked title
    why_not: list[str] = field(default_factory=list)  # one line per fix not offered
    started: float = field(default_factory=time.perf_counter)
    run_s: list[float] = field(default_factory=list)  # each re-check's run


class FixChecker:
    def __init__(
        self,
        submit: Callable[..., Future[RunView | None]],
        loop: Callable[[], asyncio.AbstractEventLoop],
        is_open: Callable[[Doc], bool],
        busy: Callable[[], bool],
        on_checked: Callable[[Doc, Checks], None],
        execute_fn: Callable[[RunHandle], RunView | None] = execute,
    ) -> None:
        self.submit = submit  # the scheduler's pool: a re-check is a run like the document's
        self.loop = loop
        self.is_open = is_open
        self.busy = busy  # a document's own run is in flight: re-checks wait
        self.on_checked = on_checked  # (doc, checks) on the loop, once every edit of a version is checked
        self.execute_fn = execute_fn
        self.checks: dict[str, Checks] = {}  # by document URI
        self.queue: deque[Candidate] = deque()
        self.current: tuple[Candidate, RunHandle] | None = None

    # -- what the code actions ask --------------------------------------------------------------

    def offered(self, doc: Doc, fix: dict[str, Any]) -> str | None:
        """The re-checked title of a diagnostic's fix (its data), None when it is not (yet) shown right
        for the document's current text."""
        c = self.checks.get(doc.uri)
        if c is None or c.version != doc.version or c.text != doc.text:
            return None
        return c.offered.get(str(fix.get("key")))

    # -- events -----------------------------------------------------------------------------------

    def after_run(self, doc: Doc, view: RunView, settings: Settings) -> None:
        """A complete run of the document's current text was published: re-check its fixes."""
        self.forget(doc)
        if view.partial is not None or view.version != doc.version or view.text != doc.text:
            return
        target = os.path.abspath(view.result.file)
        lines = Lines.from_text(view.text).text_lines  # as diagnostics.py wrote the fixes
        by_text: dict[str, Candidate] = {}
        for f in view.analysis.findings:
            if f.kind not in ("wrap", "oob-sizes") or os.path.abspath(f.file) != target:
                continue
            fix = fix_for(f, lines)
            fixed = applied(view.text, fix) if fix is not None else None
            if fix is None or fixed is None:
                continue
            cand = by_text.setdefault(fixed, Candidate(doc, view.version, view.text, fixed, view, settings))
            cand.fixes.append((f, fix))
        if not by_text:
            return
        cands = list(by_text.values())
        checks = Checks(view.version, view.text, total=len(cands), left=min(len(cands), MAX_CHECKS))
        for c in cands[MAX_CHECKS:]:
            checks.why_not += [f"{fix.title}: not re-checked (at most {MAX_CHECKS} a run)" for _, fix in c.fixes]
        self.checks[doc.uri] = checks
        for c in cands[:MAX_CHECKS]:
            c.checks = checks
        self.queue.extend(cands[:MAX_CHECKS])
        self.kick()

    def forget(self, doc: Doc) -> None:
        """The document's text changed (or it closed): its verdicts and re-checks are of the old text."""
        self.checks.pop(doc.uri, None)
        self.queue = deque(c for c in self.queue if c.doc is not doc)
        if self.current is not None and self.current[0].doc is doc:
            self.current[1].cancel.set()

    def preempt(self) -> None:
        """A document's own run starts: the re-check in flight stops, and runs again after it."""
        if self.current is not None:
            self.current[0].preempted = True
            self.current[1].cancel.set()

    def stop(self) -> None:
        self.queue.clear()
        if self.current is not None:
            self.current[1].cancel.set()

    def kick(self) -> None:
        """Start the next re-check, if nothing else runs."""
        if self.current is not None or self.busy():
            return
        while self.queue:
            c = self.queue.popleft()
            if not self._valid(c):
                continue
            # The document's plan and settings, without the partial results nobody sees here.
            settings = replace(c.settings, progressive=False)
            h = RunHandle(c.doc.uri, c.doc.path, c.version, c.fixed, c.view.plan, settings)
            self.current = (c, h)
            self._start(c, h)
            return

    def _start(self, c: Candidate, h: RunHandle) -> None:
        loop = self.loop()

        def done(f: Future[RunView | None]) -> None:  # (the pool's thread)
            loop.call_soon_threadsafe(self._done, c, h, f)

        self.submit(self.execute_fn, h).add_done_callback(done)

    # -- internals --------------------------------------------------------------------------------

    def _valid(self, c: Candidate) -> bool:
        return (
            self.is_open(c.doc)
            and c.doc.version == c.version
            and c.doc.text == c.text
            and c.checks is not None
            and self.checks.get(c.doc.uri) is c.checks
        )

    def _done(self, c: Candidate, h: RunHandle, fut: Future[RunView | None]) -> None:
        if self.current is not None and self.current[1] is h:
            self.current = None
        try:
            view = fut.result()
        except Exception:  # noqa: BLE001 - a re-check that fails offers nothing, and stops nothing
            log.exception("re-checking a quick fix failed")
            view = None
            c.preempted = False
        if not self._valid(c):
            self.kick()
            return
        if view is None and c.preempted:  # stopped for the document's own run: again, after it
            c.preempted = False
            self.queue.appendleft(c)
            self.kick()
            return
        checks = c.checks
        assert checks is not None  # (_valid)
        checks.run_s.append(time.perf_counter() - h.started)
        for f, fix in c.fixes:
            why = _why_not(f, fix, view)
            if why is None:
                checks.offered[fix.key] = checked_title(f, fix)
            else:
                checks.why_not.append(f"{fix.title}: {why}")
                log.debug("quick fix not offered: %s: %s", fix.title, why)
        checks.left -= 1
        if checks.left == 0:
            try:
                self.on_checked(c.doc, checks)
            except Exception:  # noqa: BLE001
                log.exception("on_checked failed")
        self.kick()


def _why_not(f: Finding, fix: Fix, view: RunView | None) -> str | None:
    """None when the run of the edited text shows the fix right; otherwise why it is not offered."""
    if view is None:
        return "the re-check did not finish"
    r = view.result
    if r.status != OK:
        err = f": {r.error.type}" if r.error is not None else ""
        return f"a run with the edit ended {r.status}{err}"
    g = still_reported(f, fix, view.analysis.findings)
    if g is not None:
        op = (g.witness.get("op") or {}).get("text")
        what = f"`{op}` still wraps" if f.kind == "wrap" and op else f"still {f.kind}"
        return f"a run with the edit still reports it at line {g.line} ({g.arg}): {what}"
    return None
