"""`tritonLens/runPlan`: the run plan of a file (source/plan.py, with the server's runCommands and
workspace folders), for the extension's "Debug this kernel", so it debugs exactly what the server runs.

    params: {"uri": "file:///…/k.py", "text": "…"?}     (text: the editor's buffer; else the open
                                                          document, else the file on disk)
    result: {"file", "runnable", "whyNot", "origin": "file"|"comment"|"setting", "originLine",
             "command": [argv…] | null, "cwd": str | null}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from pygls.exceptions import JsonRpcInvalidParams

from .runplan import plan as make_plan
from .text import path_of
from .viewer_requests import param

if TYPE_CHECKING:
    from .server import TritonLensServer  # (server.py registers this module's request)

RUN_PLAN = "tritonLens/runPlan"


class RunPlanAnswer(TypedDict):
    """The answer, its keys camelCase as the client reads them."""

    file: str
    runnable: bool
    whyNot: str
    origin: str
    originLine: int
    command: list[str] | None
    cwd: str | None


def run_plan(server: TritonLensServer, params: Any) -> RunPlanAnswer:
    uri = param(params, "uri")
    path = path_of(uri) if isinstance(uri, str) else None
    if not path:
        raise JsonRpcInvalidParams("uri must be a file: URI")
    text = param(params, "text")
    if not isinstance(text, str):
        doc = server.docs.get(uri)
        if doc is not None:
            text = doc.text
        else:
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
            except OSError as e:
                raise JsonRpcInvalidParams(f"cannot read {path}: {e.strerror}") from e
    p = make_plan(path, text, server.settings, server.roots())
    return {
        "file": path,
        "runnable": p.runnable,
        "whyNot": p.why_not,
        "origin": p.origin,
        "originLine": p.origin_line,
        "command": list(p.command) if p.command else None,
        "cwd": p.cwd,
    }


def register(server: TritonLensServer) -> None:
    server.feature(RUN_PLAN)(lambda ls, params: run_plan(ls, params))
