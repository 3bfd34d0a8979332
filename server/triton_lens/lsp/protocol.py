"""Every request gets an answer. pygls turns a request whose params do not fit the method's types
(a hover with no position, an inlay hint with a null range, a list where an object belongs) into
an exception in its reader loop, and the client waits forever; here it is an InvalidParams error
for that request, naming what was wrong."""

from __future__ import annotations

import logging

from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams
from pygls.protocol import LanguageServerProtocol

log = logging.getLogger(__name__)


class _Answered:
    """Stands in for a request that was already answered with an error: nothing more to do."""

    jsonrpc = None


class TritonLensProtocol(LanguageServerProtocol):
    def structure_message(self, data):
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

    def handle_message(self, message):
        if isinstance(message, _Answered):
            return
        super().handle_message(message)
