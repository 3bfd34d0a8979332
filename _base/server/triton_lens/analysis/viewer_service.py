"""The viewer service: every request the access-map page (and the browser viewer's host page) makes,
answered from a RunResult, behind two thin transports: the LSP custom requests
(`lsp/viewer_requests.py`, `tritonLens/<method>`) and the Flask viewer (`viz/server.py`, `POST /api/<method>`).

It owns, for both:
- the methods and their parameters: validation (`ViewerRequestError`, a user-facing message and an HTTP
  status: 400 for a bad parameter, 404 for no such launch / tensor / file / method), defaults and clamps;
- the answers: JSON-ready dicts (no numpy scalar, no tuple), as `viewer_protocol.schema.json` defines
  them (the one protocol definition, shared with the extension's generated types);
- caching: an LRU of the expensive answers (access maps, value maps, tl.dot executions, performance)
  keyed by the launch object the answer was computed from (launches never change once recorded; a new
  run has new launch objects) and the validated parameters; one computation per key, concurrent
  requests for it wait for that one. The compact JSON bytes (and their gzip) are kept with the answer.
"""

from __future__ import annotations

import gzip
import json
import linecache
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..model import LaunchTrace, RunResult

JSON = dict[str, Any]  # a JSON object of the protocol

SCHEMA_PATH = Path(__file__).resolve().parents[1] / "viewer_protocol.schema.json"

# The page's methods (extension/webview/PROTOCOL.md) and the host page's `source`.
METHODS = ("kernels", "accessMap", "values", "valueMap", "dots", "dotTiles", "performance", "source")
CACHED = frozenset({"accessMap", "valueMap", "dots", "dotTiles", "performance"})
CACHE_ENTRIES = 256
VALUES_DEFAULT = 256  # the page asks for aligned blocks of 256 elements
VALUES_MAX = 4096


class ViewerRequestError(Exception):
    """A request the service cannot answer: `str(e)` is the message for the user, `status` the HTTP one."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def load_schema() -> JSON:
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        schema: JSON = json.load(f)
    return schema


# -- JSON ------------------------------------------------------------------------------------------


def plain(obj: Any) -> Any:
    """JSON-ready copy: dicts and lists all the way down, numpy scalars as numbers."""
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if hasattr(obj, "_asdict"):
        return plain(obj._asdict())
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    if hasattr(obj, "tolist"):  # numpy scalars and arrays
        return plain(obj.tolist())
    return obj


def dumps(obj: Any) -> bytes:
    """Compact JSON bytes (no NaN: the protocol has none)."""
    return json.dumps(obj, separators=(",", ":"), allow_nan=False, default=_default).encode()


def _default(o: Any) -> Any:
    if hasattr(o, "tolist"):
        return o.tolist()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


# -- parameters ------------------------------------------------------------------------------------


def _get(params: Any, key: str) -> Any:
    if params is None:
        return None
    if isinstance(params, dict):
        return params.get(key)
    fields = getattr(params, "_fields", None)  # pygls hands untyped params over as namedtuples
    if fields is not None:
        return getattr(params, key) if key in fields else None
    return None


def _check_object(params: Any) -> None:
    if params is not None and not isinstance(params, dict) and getattr(params, "_fields", None) is None:
        raise ViewerRequestError("the parameters must be a JSON object")


def int_param(params: Any, key: str, default: int | None = None) -> int:
    """An integer parameter: a JSON integer (or an integral float); no bool, no string, no inf."""
    v = _get(params, key)
    if v is None:
        if default is None:
            raise ViewerRequestError(f"missing parameter {key!r}")
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ViewerRequestError(f"{key} must be an integer, not {v!r}")
    if isinstance(v, float) and not v.is_integer():  # also inf and nan
        raise ViewerRequestError(f"{key} must be an integer, not {v!r}")
    return int(v)


def validate(method: str, params: Any) -> JSON:
    """The request's parameters, checked, with defaults and clamps applied (the cache key's part)."""
    if method not in METHODS:
        raise ViewerRequestError(f"unknown method {method}", 404)
    _check_object(params)
    if method == "kernels":
        return {}
    if method == "source":
        file = _get(params, "file")
        if not isinstance(file, str) or not file:
            raise ViewerRequestError("file must be a non-empty string")
        return {"file": file}
    out: JSON = {"launch": int_param(params, "launch")}
    if method in ("accessMap", "values", "valueMap"):
        out["tensor"] = int_param(params, "tensor")
    if method == "accessMap":
        line = _get(params, "line")
        if line is not None:
            out["line"] = int_param(params, "line")
    elif method == "values":
        out["start"] = max(0, int_param(params, "start", 0))
        out["count"] = max(0, min(int_param(params, "count", VALUES_DEFAULT), VALUES_MAX))
    elif method == "dotTiles":
        out["execution"] = int_param(params, "execution")
    elif method == "valueMap":
        when = _get(params, "when")
        if when is None:
            when = "after"
        if when not in ("after", "before"):
            raise ViewerRequestError(f'when must be "after" or "before", not {when!r}')
        out["when"] = when
    return out


# -- the cache -------------------------------------------------------------------------------------


class _Entry:
    __slots__ = ("anchor", "done", "value", "raw", "gz", "error")

    def __init__(self, anchor: LaunchTrace):
        # the launch the answer is of, weakly: a cached answer keeps no finished run alive (the language
        # server's documents replace theirs), and a dead reference tells a reused id() apart
        self.anchor = weakref.ref(anchor)
        self.done = threading.Event()
        self.value: JSON | None = None
        self.raw: bytes | None = None
        self.gz: bytes | None = None
        self.error: BaseException | None = None


class ViewerCache:
    """LRU of computed answers, keyed by (launch identity, method, validated params); thread-safe.
    Answers of launches no longer referenced elsewhere are dropped at the next insertion."""

    def __init__(self, entries: int = CACHE_ENTRIES):
        self.entries = entries
        self._lru: OrderedDict[tuple[int, str, tuple[tuple[str, Any], ...]], _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self.computed = 0  # answers computed (not served from the cache): for tests

    def __len__(self) -> int:
        return len(self._lru)

    def get(self, anchor: LaunchTrace, method: str, params: JSON, compute: Callable[[], JSON]) -> _Entry:
        key = (id(anchor), method, tuple(sorted(params.items())))
        with self._lock:
            e = self._lru.get(key)
            if e is not None and e.anchor() is not anchor:
                e = None
            owner = e is None
            if e is None:
                for k in [k for k, v in self._lru.items() if v.anchor() is None]:  # answers of runs gone
                    del self._lru[k]
                e = self._lru[key] = _Entry(anchor)
                while len(self._lru) > self.entries:
                    self._lru.popitem(last=False)
            else:
                self._lru.move_to_end(key)
        if owner:
            try:
                e.value = compute()
                self.computed += 1
            except BaseException as exc:
                with self._lock:
                    if self._lru.get(key) is e:
                        del self._lru[key]
                e.error = exc
                raise
            finally:
                e.done.set()
        else:
            e.done.wait()
            if e.error is not None:
                raise e.error
        return e


# -- the service -----------------------------------------------------------------------------------


class ViewerService:
    """Answers the viewer's requests for the run `get_result()` returns (read at each request: the
    in-process viewer's launches grow). `sources`: file texts to serve instead of reading the file."""

    def __init__(
        self,
        get_result: Callable[[], RunResult],
        sources: dict[str, str] | None = None,
        cache: ViewerCache | None = None,
    ):
        self._get_result = get_result
        self._sources = sources if sources is not None else {}
        self.cache = cache if cache is not None else ViewerCache()

    @staticmethod
    def from_result(result: RunResult, cache: ViewerCache | None = None) -> ViewerService:
        return ViewerService(lambda: result, cache=cache)

    def result(self) -> RunResult:
        return self._get_result()

    # -- the entry points of the transports --------------------------------------------------------
    def request(self, method: str, params: Any = None) -> JSON:
        """The answer as a JSON-ready dict; ViewerRequestError on a bad request."""
        return self._answer(method, params)[0]

    def request_json(self, method: str, params: Any = None, compressed: bool = False) -> bytes:
        """The answer as compact JSON bytes (gzip-compressed with `compressed`); cached answers keep theirs."""
        value, entry = self._answer(method, params)
        if entry is None:
            raw = dumps(value)
            return gzip.compress(raw, 6, mtime=0) if compressed else raw
        if entry.raw is None:
            entry.raw = dumps(entry.value)
        if not compressed:
            return entry.raw
        if entry.gz is None:
            entry.gz = gzip.compress(entry.raw, 6, mtime=0)
        return entry.gz

    def warm(self, first_only: bool = True) -> None:
        """Compute (and compress) the maps the page opens first: each kernel's first launch."""
        result = self.result()
        seen = set()
        for L in result.launches:
            if first_only and (L.kernel, L.def_file) in seen:
                continue
            seen.add((L.kernel, L.def_file))
            for t in range(len(L.tensors)):
                try:
                    self.request_json("accessMap", {"launch": L.index, "tensor": t}, compressed=True)
                except Exception:
                    pass  # the page's own request will report it

    def warm_async(self) -> threading.Thread:
        th = threading.Thread(target=self.warm, name="triton-lens-viewer-warm", daemon=True)
        th.start()
        return th

    # -- answers -----------------------------------------------------------------------------------
    def _answer(self, method: str, params: Any) -> tuple[JSON, _Entry | None]:
        p = validate(method, params)
        result = self.result()
        if method == "kernels":
            return self._kernels(result), None
        if method == "source":
            return self._source(result, p["file"]), None
        L = self._launch(result, p["launch"])
        if "tensor" in p and not 0 <= p["tensor"] < len(L.tensors):
            raise ViewerRequestError(f"launch {L.index} has no tensor {p['tensor']} (it has {len(L.tensors)})", 404)
        if method == "values":
            from .access_map import tensor_values

            return plain(tensor_values(result, L.index, p["tensor"], p["start"], p["count"])), None
        entry = self.cache.get(L, method, p, lambda: plain(self._compute(result, method, p)))
        assert entry.value is not None  # get() returns a computed entry or raises the computation's error
        return entry.value, entry

    @staticmethod
    def _compute(result: RunResult, method: str, p: JSON) -> JSON:
        from . import access_map as am
        from . import viewer_extras as ve

        try:
            if method == "accessMap":
                return am.access_map(result, launch=p["launch"], tensor=p["tensor"], line=p.get("line"))
            if method == "valueMap":
                return ve.value_map(result, p["launch"], p["tensor"], p["when"])
            if method == "dots":
                return ve.dots(result, p["launch"])
            if method == "dotTiles":
                return ve.dot_tiles(result, p["launch"], p["execution"])
            return ve.launch_performance(result, p["launch"])
        except KeyError as e:  # the launch went away between the check and here
            raise ViewerRequestError(str(e.args[0]) if e.args else str(e), 404) from None

    @staticmethod
    def _launch(result: RunResult, index: int) -> LaunchTrace:
        for L in result.launches:
            if L.index == index:
                return L
        raise ViewerRequestError(f"no launch {index} in this run (it has {len(result.launches)})", 404)

    def _kernels(self, result: RunResult) -> JSON:
        from .access_map import kernels_overview

        out: JSON = plain(kernels_overview(result))
        out["files"] = files(result)
        return out

    def _source(self, result: RunResult, file: str) -> JSON:
        """The text of one of the run's files, its lines that made memory accesses, and its kernels."""
        if file not in files(result):
            raise ViewerRequestError(f"{file!r} is not a file of this run", 404)
        marks: dict[int, JSON] = {}
        for L in result.launches:
            for site in L.sites:
                if site.file != file:
                    continue
                m = marks.setdefault(site.line, {"line": site.line, "kinds": [], "args": []})
                if site.kind not in m["kinds"]:
                    m["kinds"].append(site.kind)
                arg = L.tensors[site.arg].name if 0 <= site.arg < len(L.tensors) else "?"
                if arg not in m["args"]:
                    m["args"].append(arg)
        kernels = [{"name": L.kernel, "line": L.def_line} for L in result.launches if L.def_file == file]
        kernels += [{"name": k.name, "line": k.line} for k in result.kernels if k.file == file]
        seen, uniq = set(), []
        for k in kernels:
            if (k["name"], k["line"]) not in seen:
                seen.add((k["name"], k["line"]))
                uniq.append(k)
        text = self._sources.get(file)
        if text is None:
            lines = linecache.getlines(file)
            if not lines and os.path.isfile(file):
                try:
                    with open(file, encoding="utf-8", errors="replace") as f:
                        lines = f.read().splitlines(True)
                except OSError:
                    lines = []
            text = "".join(lines)
        return {"file": file, "text": text, "lines": sorted(marks.values(), key=lambda m: m["line"]), "kernels": uniq}


def files(result: RunResult) -> list[str]:
    """The files the viewer may show: the run's file and every kernel and access site's file."""
    seen: dict[str, None] = {}
    if result.file:
        seen[result.file] = None
    for k in result.kernels:
        seen.setdefault(k.file, None)
    for L in result.launches:
        seen.setdefault(L.def_file, None)
        for s in L.sites:
            seen.setdefault(s.file, None)
    return [f for f in seen if f]


def pending_overview(file: str | None, status: str, kernels: list[tuple[str, int]]) -> JSON:
    """The overview of a file with no finished run yet: its kernels (name, 1-based line), no launches."""
    return {
        "file": file,
        "status": status,
        "kernels": [{"name": n, "file": file, "line": line, "launches": []} for n, line in kernels],
        "files": [file] if file else [],
    }
