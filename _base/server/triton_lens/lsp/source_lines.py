"""Between an editor's line and the view's line, for the access map (the extension never maps lines
itself). The view names source lines as its run does: a file's path and line; in a notebook, the
.ipynb's path and the line of the script its code cells make (notebooks.py). The editor has a cell
document and a line inside it.

    tritonLens/viewLocation   {uri: a document (a cell or a file), line: 1-based}
        -> {uri: the document the view is of (the notebook's for a cell), file, line} | null
    tritonLens/editorLocation {uri: the document the view is of, file, line: 1-based, as the page names it}
        -> {uri: the document to show (the cell's in a notebook), line: 1-based inside it} | null
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, TypedDict

from pygls.exceptions import JsonRpcInvalidParams

from .text import path_of, uri_of
from .viewer_requests import param

if TYPE_CHECKING:
    from .server import TritonLensServer  # (server.py registers this module's requests)

VIEW_LOCATION = "tritonLens/viewLocation"
EDITOR_LOCATION = "tritonLens/editorLocation"


class ViewLocation(TypedDict):
    uri: str  # the document the view is of
    file: str
    line: int  # 1-based


class EditorLocation(TypedDict):
    uri: str  # the document to show
    line: int  # 1-based


def _args(params: Any) -> tuple[str, int]:
    uri, line = param(params, "uri"), param(params, "line")
    if not isinstance(uri, str):
        raise JsonRpcInvalidParams("uri is required")
    if isinstance(line, bool) or not isinstance(line, int) or line < 1:
        raise JsonRpcInvalidParams(f"line must be a 1-based line number, got {line!r}")
    return uri, line


def view_location(server: TritonLensServer, params: Any) -> ViewLocation | None:
    uri, line = _args(params)
    hit = server.notebook_of_cell(uri)
    if hit is not None:
        nb, nb_doc = hit
        script_line = nb.script.script_line(uri, line)
        return None if script_line is None else {"uri": nb.uri, "file": nb_doc.path, "line": script_line}
    doc = server.docs.get(uri)
    path = doc.path if doc is not None else (path_of(uri) if uri.startswith("file:") else None)
    return None if not path else {"uri": uri, "file": path, "line": line}  # a file is its own view


def editor_location(server: TritonLensServer, params: Any) -> EditorLocation | None:
    uri, line = _args(params)
    file = param(params, "file")
    if not isinstance(file, str) or not file:
        raise JsonRpcInvalidParams("file is required")
    nb, doc = server.notebooks.get(uri), server.docs.get(uri)
    if nb is not None and doc is not None and os.path.abspath(file) == os.path.abspath(doc.path):
        hit = nb.script.cell_line(line)
        return None if hit is None else {"uri": str(hit[0]), "line": hit[1]}
    return {"uri": uri_of(file), "line": line}  # a file of its own (the kernel's module, a helper)


def register(server: TritonLensServer) -> None:
    server.feature(VIEW_LOCATION)(lambda ls, params: view_location(ls, params))
    server.feature(EDITOR_LOCATION)(lambda ls, params: editor_location(ls, params))
