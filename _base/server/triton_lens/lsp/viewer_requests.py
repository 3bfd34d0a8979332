"""The viewer's custom requests, `tritonLens/<method>` for every method of the viewer service
(`analysis/viewer_service.py`: kernels, accessMap, values, valueMap, dots, dotTiles, performance): a thin
transport. Params are the service's plus `uri` (the document); the answer is the service's for the
document's last finished run, and `kernels` adds the document's state (version, docVersion, stale,
running). A request the service refuses is an InvalidParams error with its message."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

from ..analysis.viewer_service import JSON, ViewerCache, ViewerRequestError, ViewerService, pending_overview
from . import notebooks

if TYPE_CHECKING:
    from .documents import Doc
    from .server import TritonLensServer  # (server.py registers this module's requests)

# The page's methods the LSP serves (`source` is the browser viewer's host page: VS Code has the editor).
LSP_METHODS = ("kernels", "accessMap", "values", "valueMap", "dots", "dotTiles", "performance")


def param(params: Any, key: str, default: Any = None) -> Any:
    """A field of untyped params: pygls hands them over as namedtuples (or dicts, or None)."""
    if params is None:
        return default
    if isinstance(params, dict):
        return params.get(key, default)
    fields = getattr(params, "_fields", None)
    if fields is not None:  # a namedtuple: `count` and `index` are its methods, not fields
        return getattr(params, key) if key in fields else default
    return default  # a list, a number: no named fields


def _doc(server: TritonLensServer, params: Any) -> tuple[str, Doc | None]:
    uri = param(params, "uri")
    if not isinstance(uri, str):
        raise JsonRpcInvalidParams("uri is required")
    return uri, server.docs.get(uri)


def _cache(server: TritonLensServer) -> ViewerCache:
    cache = server.viewer_cache
    if cache is None:
        cache = server.viewer_cache = ViewerCache()
    return cache


def _kernels(server: TritonLensServer, doc: Doc | None) -> JSON:
    if doc is None:
        out = pending_overview(None, "not-open", [])
        return dict(out, version=None, docVersion=None, stale=False, running=False)
    if doc.view is None:
        status = (
            "running"
            if doc.run is not None
            else ("not-run" if not doc.plan.runnable or not server.trusted else "pending")
        )
        out = pending_overview(doc.path, status, [(k.name, k.line) for k in doc.plan.kernels])
        out["version"] = None
    else:
        out = ViewerService.from_result(doc.view.result, _cache(server)).request("kernels", {})
        out["version"] = doc.view.version
    nb = server.notebooks.get(doc.uri)
    if nb is not None:  # a notebook's lines are named by cell (notebooks.py owns the mapping)
        out["lineNames"] = notebooks.line_names(
            nb, server.workspace.get_notebook_document(notebook_uri=doc.uri), doc.path
        )
    out["docVersion"] = doc.version
    out["stale"] = doc.view is not None and not doc.current
    out["running"] = doc.running_shown
    return out


def answer(server: TritonLensServer, method: str, params: Any) -> JSON:
    uri, doc = _doc(server, params)
    try:
        if method == "kernels":
            return _kernels(server, doc)
        if doc is None or doc.view is None:
            raise JsonRpcInvalidParams(f"no finished run for {uri}")
        return ViewerService.from_result(doc.view.result, _cache(server)).request(method, params)
    except ViewerRequestError as e:
        raise JsonRpcInvalidParams(str(e)) from None


def register(server: TritonLensServer) -> None:
    for name in LSP_METHODS:
        server.feature(f"tritonLens/{name}")(lambda ls, params, name=name: answer(ls, name, params))
