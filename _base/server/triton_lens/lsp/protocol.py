"""Every request gets an answer. pygls turns a request whose params do not fit the method's types
(a hover with no position, an inlay hint with a null range, a list where an object belongs) into
an exception in its reader loop, and the client waits forever; here it is an InvalidParams error
for that request, naming what was wrong.

Changes reach the server's own copy of each document (edits.py) as the client sent them: pygls
applies them to its copy first, and its position codec clamps a position past the end of one of
its lines *in the params object* (its lines split at form feeds, so they are shorter than the
editor's), which moved an edit below a form feed to the wrong place in ours."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import RPCMessage
from pygls.protocol.language_server import lsp_method

log = logging.getLogger(__name__)


class _Answered:
    """Stands in for a request that was already answered with an error: nothing more to do."""

    jsonrpc = None


class TritonLensProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]) -> Any:  # pygls' message classes, or the raw dict
        try:
            return super().structure_message(data)
        except (JsonRpcInvalidParams, JsonRpcInternalError) as e:
            if not (isinstance(data, dict) and "id" in data and "method" in data):
                raise  # a notification or a response: nobody to answer
            cause = e.__cause__
            detail = str(cause).splitlines()[0] if cause is not None and str(cause) else "malformed params"
            err = JsonRpcInvalidParams(f"invalid params for {data['method']}: {detail}")
            log.warning("answered %s (id %r) with InvalidParams: %s", data["method"], data["id"], detail)
            self._send_response(data["id"], None, err.to_response_error())
            return _Answered()

    def handle_message(self, message: RPCMessage | _Answered) -> None:
        if isinstance(message, _Answered):
            return
        super().handle_message(message)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(
        self, params: types.DidChangeTextDocumentParams
    ) -> Iterator[tuple[Callable[..., Any], tuple[types.DidChangeTextDocumentParams], None]]:
        """pygls' own copy gets a copy of the changes (it may clamp their positions in place); the
        server's handler gets them as sent. pygls' copy is never read, so its errors are only logged."""
        import copy

        try:
            for change in copy.deepcopy(params.content_changes):
                self.workspace.update_text_document(params.text_document, change)
        except Exception:  # noqa: BLE001 - our copy (edits.py) is the one that counts
            log.exception("pygls' copy of %s did not take a change", params.text_document.uri)
        handler = self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)
        if handler is not None:
            yield handler, (params,), None
