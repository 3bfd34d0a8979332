"""Custom requests the viewer makes (`tritonLens/kernels`, `tritonLens/accessMap`, `tritonLens/values`,
`tritonLens/valueMap`, `tritonLens/dots`, `tritonLens/performance`):
the engine's viewer data for the document's last finished run, as plain JSON dicts."""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

KERNELS = "tritonLens/kernels"
ACCESS_MAP = "tritonLens/accessMap"
VALUES = "tritonLens/values"


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


def _int(params: Any, key: str, default: int | None = None) -> int:
    v = param(params, key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
        if v is None and default is not None:
            return default
        raise JsonRpcInvalidParams(f"{key} must be an integer, got {v!r}")
    return int(v)


def _doc(server, params):
    uri = param(params, "uri")
    if not isinstance(uri, str):
        raise JsonRpcInvalidParams("uri is required")
    return uri, server.docs.get(uri)


def _plain(obj: Any) -> Any:
    """JSON-ready copy: dicts and lists all the way down (never a namedtuple, which pygls sends as an array)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if hasattr(obj, "_asdict"):
        return _plain(obj._asdict())
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalars
        return obj.item()
    return obj


def kernels(server, params) -> dict:
    uri, doc = _doc(server, params)
    if doc is None:
        return {"file": None, "status": "not-open", "kernels": [], "version": None, "docVersion": None, "stale": False}
    if doc.view is None:
        status = (
            "running"
            if doc.run is not None
            else ("not-run" if not doc.plan.runnable or not server.trusted else "pending")
        )
        out = {
            "file": doc.path,
            "status": status,
            "kernels": [{"name": k.name, "file": doc.path, "line": k.line, "launches": []} for k in doc.plan.kernels],
            "version": None,
        }
    else:
        from ..analysis.access_map import kernels_overview

        out = _plain(kernels_overview(doc.view.result))
        out["version"] = doc.view.version
    out["docVersion"] = doc.version
    out["stale"] = doc.view is not None and not doc.current
    out["running"] = doc.run is not None
    return out


def _result(server, params):
    uri, doc = _doc(server, params)
    if doc is None or doc.view is None:
        raise JsonRpcInvalidParams(f"no finished run for {uri}")
    return doc.view.result


def access_map(server, params) -> dict:
    result = _result(server, params)
    launch, tensor = _int(params, "launch", 0), _int(params, "tensor", 0)
    line = param(params, "line")
    from ..analysis.access_map import access_map as build

    try:
        return _plain(
            build(
                result,
                launch=launch,
                tensor=tensor,
                line=int(line) if isinstance(line, (int, float)) and not isinstance(line, bool) else None,
            )
        )
    except KeyError as e:
        raise JsonRpcInvalidParams(str(e.args[0]) if e.args else str(e)) from None


def values(server, params) -> dict:
    result = _result(server, params)
    launch, tensor = _int(params, "launch", 0), _int(params, "tensor", 0)
    start, count = _int(params, "start", 0), _int(params, "count", 256)
    from ..analysis.access_map import tensor_values

    try:
        return _plain(
            tensor_values(result, launch=launch, tensor=tensor, start=max(start, 0), count=max(min(count, 1 << 16), 0))
        )
    except KeyError as e:
        raise JsonRpcInvalidParams(str(e.args[0]) if e.args else str(e)) from None


EXTRA = ("valueMap", "dots", "performance")  # analysis/viewer_extras.py, as tritonLens/<name>


def extra(server, method: str, params) -> dict:
    result = _result(server, params)
    from ..analysis.viewer_extras import METHODS

    plain = {k: param(params, k) for k in ("launch", "tensor", "when") if param(params, k) is not None}
    for k in ("launch", "tensor"):
        if k in plain:
            plain[k] = _int(params, k)
    try:
        return _plain(METHODS[method](result, plain))
    except KeyError as e:
        raise JsonRpcInvalidParams(str(e.args[0]) if e.args else str(e)) from None


def register(server) -> None:
    for name in EXTRA:
        server.feature(f"tritonLens/{name}")(lambda ls, params, name=name: extra(ls, name, params))
    server.feature(KERNELS)(lambda ls, params: kernels(ls, params))
    server.feature(ACCESS_MAP)(lambda ls, params: access_map(ls, params))
    server.feature(VALUES)(lambda ls, params: values(ls, params))
