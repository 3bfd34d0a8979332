"""End-to-end harness: the real server (`python -m triton_lens lsp`) over stdio, driven by pytest-lsp.

One server per test module (each run spawns a worker process; the machine has two cores), so tests
in a module share it and use their own documents."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest_lsp
from jsonschema import ValidationError
from lsprotocol import types as lsp
from protocol_schema import check_message, message_parts
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

SERVER = [sys.executable, "-m", "triton_lens", "lsp"]


def CORPUS_FILE(name: str) -> Path:
    from markers import CORPUS

    return CORPUS / name


RUN_TIMEOUT_S = 90.0


def file_uri(path: Path | str) -> str:
    return Path(path).resolve().as_uri()


class Session:
    """The test client plus what the server sent it: run notifications, refresh requests."""

    def __init__(self, client: LanguageClient):
        self.client = client
        self.started: list[dict] = []
        self.finished: list[dict] = []
        self.partials: list[dict] = []  # tritonLens/runPartial: partial results shown (a launch's sample)
        self.refreshes = {"inlayHint": 0, "codeLens": 0}
        self.versions: dict[str, int] = {}
        self.published: list[tuple[str, int | None, list]] = []  # (uri, version, diagnostics)
        self.configuration_pulls = 0  # workspace/configuration requests the server sent
        # what the server sent that is not its schema's (lsp_messages.schema.json): the fixture fails on it
        self.schema_errors: list[str] = []
        self._event = asyncio.Event()

    def _checked(self, method: str, part: str, instance: Any) -> Any:
        try:
            check_message(method, part, instance)
        except ValidationError as e:
            self.schema_errors.append(f"{method} {part}: {e.message} in {instance!r}"[:2000])
        return instance

    def _note(self) -> None:
        self._event.set()

    # -- documents ----------------------------------------------------------------------------
    def open(self, path: Path | str, text: str | None = None, version: int = 1) -> str:
        uri = file_uri(path)
        text = Path(path).read_text() if text is None else text
        self.versions[uri] = version
        self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                lsp.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
            )
        )
        return uri

    def edit(self, uri: str, line: int, col: int, end_line: int, end_col: int, text: str) -> int:
        """One incremental edit (0-based positions); returns the new version."""
        v = self.versions[uri] + 1
        self.versions[uri] = v
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(uri=uri, version=v),
                [
                    lsp.TextDocumentContentChangePartial(
                        range=lsp.Range(lsp.Position(line, col), lsp.Position(end_line, end_col)), text=text
                    )
                ],
            )
        )
        return v

    def replace_all(self, uri: str, text: str) -> int:
        v = self.versions[uri] + 1
        self.versions[uri] = v
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(uri=uri, version=v),
                [lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return v

    def save(self, uri: str) -> None:
        self.client.text_document_did_save(lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(uri)))

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(uri)))

    # -- waiting ------------------------------------------------------------------------------
    async def configure(self, settings: dict, timeout: float = 30) -> None:
        """Change the tritonLens settings and wait until the server pulled them (runs it starts
        from then on wait for the answer), instead of sleeping for a while that load can outlast."""
        pulls = self.configuration_pulls
        self.client.set_configuration(settings, section="tritonLens")
        self.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
        await self.wait_for(lambda: self.configuration_pulls > pulls, timeout, "the server to pull the settings")

    async def wait_for(self, pred, timeout: float = RUN_TIMEOUT_S, what: str = "condition"):
        deadline = time.monotonic() + timeout
        while True:
            got = pred()
            if got:
                return got
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(
                    f"timed out after {timeout:.0f} s waiting for {what}; runs finished: {self.finished[-5:]}"
                )
            self._event.clear()
            try:
                await asyncio.wait_for(self._event.wait(), min(left, 0.5))
            except asyncio.TimeoutError:
                pass

    async def finished_run(
        self, uri: str, version: int | None = None, timeout: float = RUN_TIMEOUT_S, after: int = 0
    ) -> dict:
        """The first runFinished for `uri` (at `version`, if given) among notifications after index `after`."""
        v = self.versions[uri] if version is None else version

        def pred():
            for n in self.finished[after:]:
                if n["uri"] == uri and n["version"] == v and n["status"] != "cancelled":
                    return n
            return None

        return await self.wait_for(pred, timeout, f"runFinished of {uri} v{v}")

    def diagnostics(self, uri: str) -> list[lsp.Diagnostic]:
        return list(self.client.diagnostics.get(uri, []))

    def published_version(self, uri: str) -> int | None:
        for u, v, _ in reversed(self.published):
            if u == uri:
                return v
        return None

    # -- requests -----------------------------------------------------------------------------
    async def hints(self, uri: str, last_line: int = 10_000) -> list[lsp.InlayHint]:
        res = await self.client.text_document_inlay_hint_async(
            lsp.InlayHintParams(
                text_document=lsp.TextDocumentIdentifier(uri),
                range=lsp.Range(lsp.Position(0, 0), lsp.Position(last_line, 0)),
            )
        )
        return list(res or [])

    async def hover(self, uri: str, line: int, char: int) -> lsp.Hover | None:
        return await self.client.text_document_hover_async(
            lsp.HoverParams(text_document=lsp.TextDocumentIdentifier(uri), position=lsp.Position(line, char))
        )

    async def lenses(self, uri: str) -> list[lsp.CodeLens]:
        return list(
            await self.client.text_document_code_lens_async(
                lsp.CodeLensParams(text_document=lsp.TextDocumentIdentifier(uri))
            )
            or []
        )

    async def request(self, method: str, params: dict) -> Any:
        answer = await self.client.protocol.send_request_async(method, params)
        if message_parts(method) is not None:  # one of our own requests: its answer is the schema's
            self._checked(method, "result", _plain(answer))
        return answer


def _plain(v: Any) -> Any:
    if hasattr(v, "_asdict"):
        return {k: _plain(x) for k, x in v._asdict().items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def install(client: LanguageClient) -> Session:
    s = Session(client)

    @client.feature("tritonLens/runStarted")
    def _started(params):
        s.started.append(s._checked("tritonLens/runStarted", "params", _plain(params)))
        s._note()

    @client.feature("tritonLens/runFinished")
    def _finished(params):
        s.finished.append(s._checked("tritonLens/runFinished", "params", _plain(params)))
        s._note()

    @client.feature("tritonLens/runPartial")
    def _partial(params):
        s.partials.append(s._checked("tritonLens/runPartial", "params", _plain(params)))
        s._note()

    @client.feature(lsp.WORKSPACE_INLAY_HINT_REFRESH)
    def _hint_refresh(params):
        s.refreshes["inlayHint"] += 1
        return None

    @client.feature(lsp.WORKSPACE_CODE_LENS_REFRESH)
    def _lens_refresh(params):
        s.refreshes["codeLens"] += 1
        return None

    # Keep every publication (with its version) besides pytest-lsp's latest-per-uri record.
    original = client.protocol.fm.features.get(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    def _publish(params: lsp.PublishDiagnosticsParams):
        s.published.append((params.uri, params.version, list(params.diagnostics)))
        client.diagnostics[params.uri] = params.diagnostics
        s._note()

    client.protocol.fm.features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = _publish
    del original

    get_configuration = client.get_configuration  # pytest-lsp's workspace/configuration answer calls it

    def _get_configuration(*args, **kwargs):
        s.configuration_pulls += 1
        s._note()
        return get_configuration(*args, **kwargs)

    client.get_configuration = _get_configuration  # type: ignore[method-assign]
    return s


async def start_session(
    client: LanguageClient, settings: dict, init_options: dict | None = None, root: Path | None = None
) -> Session:
    s = install(client)
    client.set_configuration(settings, section="tritonLens")
    caps = client_capabilities("visual-studio-code")
    # VS Code answers workspace/inlayHint/refresh; pytest-lsp's recorded capabilities leave it out.
    caps.workspace.inlay_hint = lsp.InlayHintWorkspaceClientCapabilities(refresh_support=True)
    if init_options is None:  # what the extension sends in a trusted workspace (trust fails closed)
        init_options = {"trusted": True}
    params = lsp.InitializeParams(capabilities=caps, initialization_options=init_options)
    if root is not None:
        params.workspace_folders = [lsp.WorkspaceFolder(uri=file_uri(root), name=root.name)]
        params.root_uri = file_uri(root)
    await client.initialize_session(params)
    return s


def session_fixture(settings: dict, init_options: dict | None = None, with_workspace: bool = False):
    """A module-scoped fixture: one server for the module, started with these settings (and, with
    `with_workspace`, the module's `workspace` fixture as its workspace folder)."""

    @pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module")
    async def client(lsp_client: LanguageClient, request):
        root = request.getfixturevalue("workspace") if with_workspace else None
        lsp_client._session = await start_session(lsp_client, settings, init_options, root)
        yield
        assert server_alive(lsp_client), "the server died"
        assert not lsp_client._session.schema_errors, "\n".join(lsp_client._session.schema_errors)
        await lsp_client.shutdown_session()

    return client


def server_alive(client: LanguageClient) -> bool:
    proc = getattr(client, "_server", None)
    return proc is not None and proc.returncode is None


def worker_children(client: LanguageClient) -> list[int]:
    """Pids of trace workers the server has running a job now: each runs below its supervisor (a
    child of the server, or of the server's zygote). (A running one has handed the script /dev/null
    as stdin; a supervisor still holds the job's pipe.)"""
    server = client._server.pid
    parent, cmd = {}, {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            parent[int(d.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            cmd[int(d.name)] = (d / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
    out = []
    zygote = b"triton_lens.trace_engine.process.zygote"
    for pid, ppid in parent.items():
        # A cold worker: server -> supervisor.py -> worker. A forked one (trace_engine/process/zygote.py):
        # server -> zygote -> its forked supervisor -> worker, all three with the zygote's command line.
        cold = parent.get(ppid) == server and b"supervisor.py" in cmd.get(ppid, b"")
        grand = parent.get(ppid, 0)
        forked = parent.get(grand) == server and zygote in cmd.get(grand, b"") and zygote in cmd.get(pid, b"")
        if not (cold or forked):
            continue
        try:
            if (forked or b"triton_lens.trace_engine.process.worker" in cmd[pid]) and os.readlink(
                f"/proc/{pid}/fd/0"
            ) == os.devnull:
                out.append(pid)
        except OSError:
            continue
    return out
