"""The Triton Lens language server (pygls 2.x, stdio): keeps the analysis of every open kernel file
current while the user types, and maps it to LSP. Feature registration only; the work is elsewhere:

- runplan.py   the server's Settings handed to source/plan.py (which run a file gets, and whether it runs)
- runs.py      debounce / cancel / versions; the one call into the trace engine and the analysis
- fixcheck.py  quick fixes re-checked by a run of the edited text before they are offered (fixes.py)
- progress.py  $/progress of runs longer than half a second
- view.py      a finished run -> diagnostics, per-line hint and hover text (computed once)
- documents.py that view mapped onto the current text (shifted / marked stale / withheld)
- diagnostics.py, hints.py, hover.py, lenses.py   analysis -> LSP types
- viewer_requests.py   tritonLens/<method>: the viewer service (analysis/viewer_service.py) over LSP
- outline.py           tritonLens/kernelOutline (the file's kernels for the extension)
- plan_request.py      tritonLens/runPlan (the run plan of a file, for the debugger)
- notebooks.py         a notebook runs as one Doc (the script of its code cells); its results moved to the cells
- source_lines.py      the access map's lines <-> the editor's (a notebook's script line <-> its cell and line)
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from lsprotocol import types as lsp
from pygls.capabilities import ServerCapabilitiesBuilder
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..analysis.viewer_service import ViewerCache
from ..model.remedies import EDITOR
from . import fixes, notebooks, outline, plan_request, source_lines, viewer_requests
from .documents import Doc
from .edits import DocText
from .fixcheck import MAX_CHECKS, Checks, FixChecker
from .lenses import cost_log
from .linemap import LineMap
from .progress import RunProgress
from .protocol import TritonLensProtocol
from .runplan import plan as make_plan
from .runs import SAY_RUNNING_AFTER_S, RunHandle, RunScheduler
from .settings import SECTION, Settings, from_initialization_options
from .text import path_of, set_encoding
from .view import RunView

log = logging.getLogger(__name__)

RUN_STARTED = "tritonLens/runStarted"
RUN_FINISHED = "tritonLens/runFinished"
RUN_PARTIAL = "tritonLens/runPartial"  # a run's partial results are shown (a launch's sample)
CONFIG_WAIT_S = 2.0


class TritonLensServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "triton-lens",
            __version__,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            notebook_document_sync=notebooks.SYNC_OPTIONS,
            protocol_cls=TritonLensProtocol,
        )
        self.settings = Settings()
        self.base_settings = self.settings  # defaults + initializationOptions; the configuration goes on top
        self.trusted = True
        self.docs: dict[str, Doc] = {}
        self.buffers: dict[str, DocText] = {}  # our copy of each open text (see edits.py)
        self.notebooks: dict[str, notebooks.Notebook] = {}  # by notebook URI; its Doc is docs[that URI]
        self.cell_owner: dict[str, str] = {}  # cell document URI -> its notebook's URI
        self.config_pending = False
        self.waiting: set[str] = set()  # uris whose first run waits for the configuration
        self.scheduler = RunScheduler(
            self._run_started, self._run_finished, lambda d: self.docs.get(d.uri) is d, on_partial=self._run_partial
        )
        self.fix_checker = FixChecker(
            self.scheduler.pool.submit,
            self.scheduler._loop,
            lambda d: self.docs.get(d.uri) is d,
            lambda: any(d.run is not None for d in self.docs.values()),
            self._fixes_checked,
        )
        self.run_progress = RunProgress(self)  # (not `progress`: pygls' LanguageServer has one)
        self.viewer_cache: ViewerCache | None = None  # one for all documents, made at the first viewer request

    # -- capabilities -----------------------------------------------------------------------------

    def _cap(self, *names: str) -> bool:
        c: Any = self.client_capabilities
        for n in names:
            c = getattr(c, n, None) if c is not None else None
        return bool(c)

    def roots(self) -> list[str]:
        out = []
        try:
            for f in self.workspace.folders.values():
                p = path_of(f.uri)
                if p:
                    out.append(p)
            if self.workspace.root_path and self.workspace.root_path not in out:
                out.append(self.workspace.root_path)
        except Exception:  # noqa: BLE001 - no workspace yet
            pass
        return out

    # -- settings ---------------------------------------------------------------------------------

    def initialize(self, params: lsp.InitializeParams) -> None:
        set_encoding(ServerCapabilitiesBuilder.choose_position_encoding(params.capabilities))
        self.settings, self.trusted = from_initialization_options(params.initialization_options)
        if not self.trusted:
            log.info(
                "not trusted: no user code is run (an editor that trusts the workspace sends "
                'initializationOptions {"trusted": true})'
            )
        self.base_settings = self.settings
        self.config_pending = self._cap("workspace", "configuration")

    async def load_configuration(self) -> None:
        """Pulls section "tritonLens" (workspace/configuration). Runs wait for it (a short while)."""
        if not self._cap("workspace", "configuration"):
            self.config_pending = False
            return
        old = self.settings
        try:
            items = await asyncio.wait_for(
                self.workspace_configuration_async(
                    lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section=SECTION)])
                ),
                CONFIG_WAIT_S,
            )
            if items:
                self.settings = self.base_settings.merged(items[0])
        except Exception as e:  # noqa: BLE001 - keep the settings we have
            self.log(f"could not read the {SECTION} settings: {e}", lsp.MessageType.Warning)
        self.config_pending = False
        self._settings_changed(old)

    def _settings_changed(self, old: Settings) -> None:
        waiting, self.waiting = self.waiting, set()
        rerun = (old.time_limit_s, old.memory_limit_mb, old.python, old.run_commands, old.device, old.stand_in_gpu) != (
            self.settings.time_limit_s,
            self.settings.memory_limit_mb,
            self.settings.python,
            self.settings.run_commands,
            self.settings.device,
            self.settings.stand_in_gpu,
        )
        for uri, doc in list(self.docs.items()):
            if rerun:
                self._replan(doc)
                self.publish(doc)
            if (rerun or uri in waiting) and self.trusted and doc.plan.runnable:
                self.scheduler.schedule(doc, 0, self.settings, force=rerun)
        if old.inlay_hints != self.settings.inlay_hints:
            self._refresh(hints=True, lenses=False)

    # -- documents --------------------------------------------------------------------------------

    def guarded(self, fn: Callable[..., None], uri: str, *args: Any) -> None:
        """A document notification: a bug here is logged to the output channel, never fatal. (`fn`
        is one of the handlers below, each with its own parameters after the URI: `args` are those.)"""
        try:
            fn(uri, *args)
        except Exception as e:  # noqa: BLE001
            log.exception("handling %s for %s failed", fn.__name__, uri)
            self.log(
                f"internal error while handling {fn.__name__} of {uri}: {type(e).__name__}: {e}", lsp.MessageType.Error
            )

    def _replan(self, doc: Doc) -> None:
        doc.plan = make_plan(doc.path, doc.text, self.settings, self.roots())

    def opened(self, uri: str, item: lsp.TextDocumentItem) -> None:
        path = path_of(uri)
        if not path:
            return  # untitled: no real path to run
        buf = DocText(item.text)
        doc = Doc(
            uri=uri,
            path=os.path.abspath(path),
            version=item.version or 0,
            text=buf.text,
            plan=make_plan(path, buf.text, self.settings, self.roots()),
        )
        self.buffers[uri] = buf
        self.docs[uri] = doc
        self.publish(doc)
        self._maybe_run(doc, 0)

    def changed(self, uri: str, params: lsp.DidChangeTextDocumentParams) -> None:
        doc = self.docs.get(uri)
        buf = self.buffers.get(uri)
        if doc is None or buf is None:
            return
        version = params.text_document.version
        if version is not None and version <= doc.version:
            # Out of order (a client bug): applying it would corrupt the text, so it is dropped, and said so.
            self.log(
                f"ignored a change to {os.path.basename(doc.path)} with version {version}: the server "
                f"already has version {doc.version}",
                lsp.MessageType.Warning,
            )
            return
        for change in params.content_changes:
            buf.apply(change)
        self._new_text(doc, version if version is not None else doc.version + 1, buf.text)

    def _new_text(self, doc: Doc, version: int, text: str) -> None:
        doc.update(version, text, make_plan(doc.path, text, self.settings, self.roots()))
        self.fix_checker.forget(doc)  # its fixes were re-checked on the old text
        if doc.run is not None and doc.run.version != doc.version:
            doc.run.cancel.set()  # a new edit cancels the run in flight
        if not doc.plan.runnable and doc.plan.syntax is None:
            doc.view = None  # no kernel here any more
        self.publish(doc)
        self._maybe_run(doc, self.settings.debounce_ms / 1000.0)

    def saved(self, uri: str) -> None:
        doc = self.docs.get(uri)
        if doc is not None:
            self._maybe_run(doc, 0)

    def closed(self, uri: str) -> None:
        doc = self.docs.pop(uri, None)
        self.buffers.pop(uri, None)
        if doc is not None:
            self.scheduler.cancel(doc)
            self.fix_checker.forget(doc)
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    # -- notebooks (notebooks.py): one Doc per notebook, whose text is the script of its code cells --

    def notebook_opened(self, uri: str) -> None:
        nb_doc = self.workspace.get_notebook_document(notebook_uri=uri)
        path = notebooks.notebook_path(uri, self.roots())
        if nb_doc is None or path is None:
            return  # no folder to run an unsaved notebook in
        nb = notebooks.Notebook(uri, notebooks.script_of(self.workspace, nb_doc))
        self.notebooks[uri] = nb
        self.cell_owner.update({str(c): uri for c in nb.script.cells})
        text = nb.script.script
        doc = Doc(
            uri=uri,
            path=path,
            version=nb_doc.version,
            text=text,
            plan=make_plan(path, text, self.settings, self.roots()),
        )
        self.docs[uri] = doc
        self.publish(doc)
        self._maybe_run(doc, 0)

    def notebook_changed(self, uri: str) -> None:
        nb, doc = self.notebooks.get(uri), self.docs.get(uri)
        nb_doc = self.workspace.get_notebook_document(notebook_uri=uri)
        if nb is None or doc is None or nb_doc is None:
            return
        script = notebooks.script_of(self.workspace, nb_doc)
        if script.script == nb.script.script and script.cells == nb.script.cells:
            return  # outputs, metadata or a markdown cell changed: nothing that runs
        for c in nb.script.cells:
            self.cell_owner.pop(str(c), None)
        nb.script = script
        self.cell_owner.update({str(c): uri for c in script.cells})
        self._new_text(doc, max(nb_doc.version, doc.version + 1), script.script)

    def notebook_closed(self, uri: str) -> None:
        nb = self.notebooks.pop(uri, None)
        doc = self.docs.pop(uri, None)
        if doc is not None:
            self.scheduler.cancel(doc)
            self.fix_checker.forget(doc)
        if nb is not None:
            for c in nb.script.cells:
                self.cell_owner.pop(str(c), None)
            for cell in nb.published:
                self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=cell, diagnostics=[]))

    def notebook_of_cell(self, uri: str) -> tuple[notebooks.Notebook, Doc] | None:
        nb_uri = self.cell_owner.get(uri)
        nb, doc = self.notebooks.get(nb_uri or ""), self.docs.get(nb_uri or "")
        return None if nb is None or doc is None else (nb, doc)

    def _maybe_run(self, doc: Doc, delay_s: float) -> None:
        if not self.trusted or not doc.plan.runnable:
            self.scheduler.cancel(doc)
            return
        if self.config_pending:
            self.waiting.add(doc.uri)
            if doc.run is not None:
                doc.run.cancel.set()
            return
        self.scheduler.schedule(doc, delay_s, self.settings)

    # -- publishing -------------------------------------------------------------------------------

    def publish(self, doc: Doc, always: bool = False) -> None:
        """Publishes the document's diagnostics if they changed (`always`: even if not, to say that
        these are the diagnostics of the current version, e.g. when its run ends)."""
        if not doc.map_ready() and self._map_off_loop(doc, always):
            return  # published when the line map is there
        diags = doc.diagnostics(self.trusted)
        key = json.dumps(
            [
                [
                    d.range.start.line,
                    d.range.start.character,
                    d.range.end.line,
                    d.range.end.character,
                    d.message,
                    int(d.severity or 0),
                    d.code,
                ]
                for d in diags
            ]
        )
        if key == doc.published and not always:
            return
        doc.published = key
        nb = self.notebooks.get(doc.uri)
        if nb is not None:  # each cell gets its own (a cell's version is not the notebook's: none sent)
            per_cell = notebooks.cell_diagnostics(nb, doc.uri, doc.path, diags)
            for cell in nb.published - set(per_cell):  # cells deleted since
                self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=cell, diagnostics=[]))
            for cell, cell_diags in per_cell.items():
                self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=cell, diagnostics=cell_diags))
            nb.published = set(per_cell)
            return
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=doc.uri, diagnostics=diags, version=doc.version)
        )

    def _map_off_loop(self, doc: Doc, always: bool) -> bool:
        """Map a large document's last run onto its current text in a thread (a 20k-line file takes
        tens of milliseconds: not on the loop that answers every keystroke), then publish it and
        refresh hints and lenses. False when there is no loop to come back to."""
        loop = self.scheduler.loop
        key = doc.map_key()
        if loop is None or key is None or doc.view is None:  # (key None: no view, or no map needed)
            return False
        if doc.map_pending == key:
            return True
        doc.map_pending = key
        fut = loop.run_in_executor(None, LineMap.between, doc.view.text, doc.text)

        def done(f: asyncio.Future[LineMap]) -> None:
            if doc.map_pending == key:
                doc.map_pending = None
            if f.cancelled() or f.exception() is not None:
                log.error("mapping %s failed: %r", doc.uri, None if f.cancelled() else f.exception())
                return
            doc.set_map(key, f.result())
            if self.docs.get(doc.uri) is doc and doc.map_ready():
                self.publish(doc, always)
                self._refresh()

        fut.add_done_callback(done)
        return True

    def _refresh(self, hints: bool = True, lenses: bool = True) -> None:
        if hints and self._cap("workspace", "inlay_hint", "refresh_support"):
            _quiet(self.workspace_inlay_hint_refresh(None))
        if lenses and self._cap("workspace", "code_lens", "refresh_support"):
            _quiet(self.workspace_code_lens_refresh(None))

    def log(self, message: str, kind: lsp.MessageType = lsp.MessageType.Info) -> None:
        try:
            self.window_log_message(lsp.LogMessageParams(type=kind, message=message))
        except Exception:  # noqa: BLE001
            log.exception("log message failed")

    # -- runs -------------------------------------------------------------------------------------

    def stop_runs(self) -> None:
        """Cancels every run (their workers are killed) so that the process can end at once."""
        self.fix_checker.stop()
        for doc in self.docs.values():
            self.scheduler.cancel(doc)
        self.scheduler.shutdown()

    def _run_started(self, doc: Doc, h: RunHandle) -> None:
        self.fix_checker.preempt()  # the document's own run comes first
        if doc.view is None:  # the document's first run: nothing else to show meanwhile
            self._announce(doc, h)
        else:
            self.scheduler._loop().call_later(SAY_RUNNING_AFTER_S, self._announce, doc, h)
        if self._cap("window", "work_done_progress"):
            self.run_progress.started(h, self.scheduler._loop())

    def _announce(self, doc: Doc, h: RunHandle) -> None:
        """runStarted and the lens's "⟳ running…", once (runs.SAY_RUNNING_AFTER_S): not for a run already over."""
        if h.announced or h.done or h.cancel.is_set() or doc.run is not h:
            return
        h.announced = True
        self.protocol.notify(RUN_STARTED, {"uri": doc.uri, "version": h.version})
        self._refresh(hints=False, lenses=True)

    def _run_partial(self, doc: Doc, h: RunHandle, view: RunView) -> None:
        p = view.partial
        assert p is not None
        self._announce(doc, h)  # (before its first results: the status bar's partial state follows its start)
        self.publish(doc, always=True)
        self._refresh()
        self.protocol.notify(
            RUN_PARTIAL,
            {
                "uri": doc.uri,
                "version": view.version,
                "kernel": p.kernel,
                "launch": p.launch,
                "programsDone": p.programs_done,
                "programsTotal": p.programs_total,
                "ms": round(view.ms, 1),
            },
        )

    def _run_finished(self, doc: Doc, h: RunHandle, view: RunView | None, adopted: bool) -> None:
        try:
            self._run_ended(doc, h, view, adopted)
        finally:  # its results are published: the re-checks of fixes may run (this one's first, if it has any)
            if adopted and view is not None and self.trusted:
                self.fix_checker.after_run(doc, view, self.settings)
            self.fix_checker.kick()

    def _fixes_checked(self, doc: Doc, checks: Checks) -> None:
        """Every fix of the document's run was re-checked: the light bulb shows those shown right."""
        name = os.path.basename(doc.path)
        ms = "/".join(f"{s:.1f}" for s in checks.run_s)
        self.log(
            f"{name} v{checks.version}: quick fixes re-checked ({len(checks.run_s)} run"
            f"{'s' if len(checks.run_s) != 1 else ''} of the edited file, {ms} s): {len(checks.offered)} offered"
            + (f", {len(checks.why_not)} not" if checks.why_not else "")
            + (
                f" (the first {MAX_CHECKS} of {checks.total} edits: at most {MAX_CHECKS} are re-checked a run)"
                if checks.total > MAX_CHECKS
                else ""
            )
        )
        for why in checks.why_not:
            self.log(f"{name} v{checks.version}: quick fix not offered: {why}", lsp.MessageType.Log)
        if checks.offered and self.docs.get(doc.uri) is doc:
            # The same diagnostics again: VS Code then asks for the code actions anew (LSP has no refresh of them).
            self.publish(doc, always=True)

    def _run_ended(self, doc: Doc, h: RunHandle, view: RunView | None, adopted: bool) -> None:
        self.run_progress.finished(h, view)
        if view is None:  # cancelled
            if doc.run is None and doc.timer is None and self.docs.get(doc.uri) is doc:
                self.protocol.notify(
                    RUN_FINISHED,
                    {
                        "uri": doc.uri,
                        "version": h.version,
                        "status": "cancelled",
                        "ms": round((_now() - h.started) * 1000.0, 1),
                        "launches": 0,
                    },
                )
                self._refresh(hints=False, lenses=True)
            return
        r = view.result
        self.log(
            f"{os.path.basename(doc.path)} v{view.version}: {r.status}, {len(r.launches)} launch"
            f"{'es' if len(r.launches) != 1 else ''}, {view.ms:.0f} ms"
            + (
                f", CPU stand-in for CUDA ({r.cuda_standin.reason}; the script saw a stood-in {r.cuda_standin.gpu})"
                if r.cuda_standin
                else ""
            )
            + (f" — {r.error.type}: {r.error.text(EDITOR)}" if r.error else "")
            + cost_log(r, self.settings.workers)  # which launch a slow run's time went to, and what helps
            + (f"\n--- script stdout ---\n{r.stdout[-4000:]}" if r.stdout.strip() else "")
            + (f"\n--- script stderr ---\n{r.stderr[-4000:]}" if r.stderr.strip() else "")
        )
        if not adopted:
            return
        self.publish(doc, always=True)
        self._refresh()
        standin = {"gpu": r.cuda_standin.gpu, "reason": r.cuda_standin.reason} if r.cuda_standin else None
        self.protocol.notify(
            RUN_FINISHED,
            {
                "uri": doc.uri,
                "version": view.version,
                "status": r.status,
                "ms": round(view.ms, 1),
                "launches": len(r.launches),
                "cudaStandIn": standin,
                # A newer run of the document is in flight (this one was cancelled too late and its result
                # adopted): the client keeps saying "running", as the code lens does, until that one ends.
                "running": doc.running_shown,
            },
        )


def _now() -> float:
    import time

    return time.perf_counter()


def _quiet(fut: Future[None]) -> None:
    """A request to the client whose answer (or error) does not matter."""
    try:
        fut.add_done_callback(lambda f: f.exception())
    except Exception:  # noqa: BLE001
        pass


def create_server() -> TritonLensServer:
    server = TritonLensServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: TritonLensServer, params: lsp.InitializeParams) -> None:
        ls.initialize(params)

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: TritonLensServer, params: lsp.InitializedParams) -> None:
        ls.scheduler.loop = asyncio.get_running_loop()
        await ls.load_configuration()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: TritonLensServer, params: lsp.DidChangeConfigurationParams) -> None:
        old = ls.settings
        if ls._cap("workspace", "configuration"):
            ls.config_pending = True  # runs asked for meanwhile wait for the new settings
            await ls.load_configuration()
            return
        pushed = params.settings
        sect = pushed.get(SECTION) if isinstance(pushed, dict) else getattr(pushed, SECTION, None)
        ls.settings = ls.base_settings.merged(sect if sect is not None else pushed)
        ls._settings_changed(old)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TritonLensServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.guarded(ls.opened, params.text_document.uri, params.text_document)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TritonLensServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.guarded(ls.changed, params.text_document.uri, params)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE, lsp.SaveOptions(include_text=False))
    def did_save(ls: TritonLensServer, params: lsp.DidSaveTextDocumentParams) -> None:
        ls.guarded(ls.saved, params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TritonLensServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls.guarded(ls.closed, params.text_document.uri)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_did_open(ls: TritonLensServer, params: lsp.DidOpenNotebookDocumentParams) -> None:
        ls.guarded(ls.notebook_opened, params.notebook_document.uri)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_did_change(ls: TritonLensServer, params: lsp.DidChangeNotebookDocumentParams) -> None:
        ls.guarded(ls.notebook_changed, params.notebook_document.uri)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_did_save(ls: TritonLensServer, params: lsp.DidSaveNotebookDocumentParams) -> None:
        ls.guarded(ls.saved, params.notebook_document.uri)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_did_close(ls: TritonLensServer, params: lsp.DidCloseNotebookDocumentParams) -> None:
        ls.guarded(ls.notebook_closed, params.notebook_document.uri)

    # A cell's requests are answered from its notebook's Doc, in the script's lines (notebooks.py).
    @server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT, lsp.InlayHintOptions(resolve_provider=False))
    def inlay_hints(ls: TritonLensServer, params: lsp.InlayHintParams) -> list[lsp.InlayHint]:
        uri = params.text_document.uri
        if not ls.settings.inlay_hints:
            return []
        doc = ls.docs.get(uri)
        if doc is not None:
            return doc.inlay_hints(params.range)
        hit = ls.notebook_of_cell(uri)
        if hit is None:
            return []
        everywhere = lsp.Range(lsp.Position(0, 0), lsp.Position(hit[1].text.count("\n") + 1, 0))
        return notebooks.cell_hints(hit[0], uri, hit[1].inlay_hints(everywhere), params.range)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: TritonLensServer, params: lsp.HoverParams) -> lsp.Hover | None:
        uri = params.text_document.uri
        doc = ls.docs.get(uri)
        if doc is not None:
            return doc.hover(params.position)
        hit = ls.notebook_of_cell(uri)
        pos = notebooks.script_position(hit[0], uri, params.position) if hit is not None else None
        return notebooks.cell_hover(hit[0], hit[1].hover(pos)) if hit is not None and pos is not None else None

    @server.feature(lsp.TEXT_DOCUMENT_CODE_LENS, lsp.CodeLensOptions(resolve_provider=False))
    def code_lens(ls: TritonLensServer, params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
        uri = params.text_document.uri
        doc = ls.docs.get(uri)
        if doc is not None:
            return doc.code_lenses(trusted=ls.trusted)
        hit = ls.notebook_of_cell(uri)
        return notebooks.cell_lenses(hit[0], uri, hit[1].code_lenses(trusted=ls.trusted)) if hit is not None else []

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix])
    )
    def code_action(ls: TritonLensServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        # The diagnostics VS Code sends back are the cell's own in a notebook: their fixes were moved with them.
        uri = params.text_document.uri
        doc = ls.docs.get(uri)
        if doc is None:
            hit = ls.notebook_of_cell(uri)
            if hit is None:
                return []
            nb_doc = hit[1]
            return fixes.quick_fixes(uri, params, lambda fix: ls.fix_checker.offered(nb_doc, fix))
        return fixes.quick_fixes(
            uri, params, lambda fix: ls.fix_checker.offered(doc, fix), doc.path, doc.text.split("\n"), ls.roots()
        )

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: TritonLensServer, params: None) -> None:
        ls.stop_runs()

    viewer_requests.register(server)
    outline.register(server)
    plan_request.register(server)
    source_lines.register(server)
    return server


def main() -> None:
    """`triton-lens lsp`: serve over stdio."""
    logging.basicConfig(
        level=os.environ.get("TRITON_LENS_LOG", "WARNING"), format="%(asctime)s %(name)s %(levelname)s %(message)s"
    )
    server = create_server()
    try:
        server.start_io()
    finally:  # the client went away (even without a shutdown): leave no worker running
        server.stop_runs()


if __name__ == "__main__":
    main()
