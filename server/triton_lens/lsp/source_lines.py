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
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

from .text import path_of, uri_of
from .viewer_requests import param

VIEW_LOCATION = "tritonLens/viewLocation"
EDITOR_LOCATION = "tritonLens/editorLocation"


def _args(params: Any, *keys: str) -> tuple:
    uri, line = param(params, "uri"), param(params, "line")
    if not isinstance(uri, str):
        raise JsonRpcInvalidParams("uri is required")
    if isinstance(line, bool) or not isinstance(line, int) or line < 1:
        raise JsonRpcInvalidParams(f"line must be a 1-based line number, got {line!r}")
    rest = tuple(param(params, k) for k in keys)
    return (uri, line, *rest)


def view_location(server, params: Any) -> dict | None:
    uri, line = _args(params)
    hit = server.notebook_of_cell(uri)
    if hit is not None:
        nb, doc = hit
        script_line = nb.script.script_line(uri, line)
        return None if script_line is None else {"uri": nb.uri, "file": doc.path, "line": script_line}
    doc = server.docs.get(uri)
    path = doc.path if doc is not None else (path_of(uri) if uri.startswith("file:") else None)
    return None if not path else {"uri": uri, "file": path, "line": line}  # a file is its own view


def editor_location(server, params: Any) -> dict | None:
    uri, line, file = _args(params, "file")
    if not isinstance(file, str) or not file:
        raise JsonRpcInvalidParams("file is required")
    nb, doc = server.notebooks.get(uri), server.docs.get(uri)
    if nb is not None and doc is not None and os.path.abspath(file) == os.path.abspath(doc.path):
        hit = nb.script.cell_line(line)
        return None if hit is None else {"uri": str(hit[0]), "line": hit[1]}
    return {"uri": uri_of(file), "line": line}  # a file of its own (the kernel's module, a helper)


def register(server) -> None:
    server.feature(VIEW_LOCATION)(lambda ls, params: view_location(ls, params))
    server.feature(EDITOR_LOCATION)(lambda ls, params: editor_location(ls, params))
