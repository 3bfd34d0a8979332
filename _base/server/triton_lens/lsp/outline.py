"""`tritonLens/kernelOutline`: the file's kernels, their ranges and parameters, and the one the cursor is
in (or launches), from the engine's kernel finder (source/kernels.py), so the extension never parses Python.

    params: {"uri": str, "line"?: int (0-based cursor line), "text"?: str (the editor's text; else the server's copy)}
    result: {"kernels": [KernelOutline.to_json() with 0-based lines...], "at": int | null}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from pygls.exceptions import JsonRpcInvalidParams

from ..source.kernels import kernel_at, outline
from .viewer_requests import param

if TYPE_CHECKING:
    from .server import TritonLensServer  # (server.py registers this module's request)

KERNEL_OUTLINE = "tritonLens/kernelOutline"


class KernelOutlineAnswer(TypedDict):
    kernels: list[dict[str, Any]]  # KernelOutline.to_json(), its lines 0-based
    at: int | None  # the index in `kernels` of the kernel at the line asked for


def _zero_based(k: dict[str, Any]) -> dict[str, Any]:
    """LSP speaks 0-based lines; the engine 1-based."""
    out = dict(k)
    for key in ("line", "firstLine", "endLine", "bodyLine"):
        out[key] = k[key] - 1
    out["params"] = [{**p, "line": p["line"] - 1} for p in k["params"]]
    return out


def kernel_outline(server: TritonLensServer, params: Any) -> KernelOutlineAnswer:
    uri = param(params, "uri")
    if not isinstance(uri, str):
        raise JsonRpcInvalidParams("uri is required")
    text = param(params, "text")
    if text is None:
        doc = server.docs.get(uri)
        text = doc.text if doc is not None else None
    if not isinstance(text, str):
        raise JsonRpcInvalidParams(f"{uri} is not open in the server: send its text")
    line = param(params, "line")
    if line is not None and (isinstance(line, bool) or not isinstance(line, int) or line < 0):
        raise JsonRpcInvalidParams(f"line must be a 0-based line number, got {line!r}")
    kernels = outline(text)
    at = None
    if line is not None:
        k = kernel_at(text, line + 1)
        at = next((i for i, x in enumerate(kernels) if k is not None and x.line == k.line), None)
    return {"kernels": [_zero_based(k.to_json()) for k in kernels], "at": at}


def register(server: TritonLensServer) -> None:
    server.feature(KERNEL_OUTLINE)(lambda ls, params: kernel_outline(ls, params))
