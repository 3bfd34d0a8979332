"""What the viewer asks for, answered from a RunResult: the engine's viewer data (kernels overview,
access maps, tensor values) plus the source of the files the launches ran.

Shared by `launch()` (launches recorded in this process) and `triton-lens view FILE` (launches a
worker process streamed back). Access maps are computed once per (launch, tensor) and kept as
compact JSON bytes: launches do not change once recorded.
"""

from __future__ import annotations

import gzip
import json
import linecache
import os
import threading
from collections.abc import Callable

from ..model import OK, RunResult


def dumps(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":"), allow_nan=False, default=_default).encode()


def _default(o):
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


class RequestError(Exception):
    """A bad request from the page (HTTP 400/404)."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


_CACHE_ENTRIES = 512


class _Entry:
    __slots__ = ("launch", "index", "done", "raw", "gz", "error")

    def __init__(self, launch):
        self.launch, self.index = launch, launch.index
        self.done = threading.Event()
        self.raw: bytes = b""
        self.gz = None
        self.error = None


class ViewerData:
    def __init__(self, get_result: Callable[[], RunResult], sources: dict[str, str] | None = None):
        self._get_result = get_result
        self._sources = sources if sources is not None else {}
        self._cache: dict[tuple, _Entry] = {}
        self._extras: dict[tuple, tuple] = {}  # (launch ids, method, params) -> (launches, answer)
        self._lock = threading.Lock()

    @staticmethod
    def from_result(result: RunResult) -> ViewerData:
        return ViewerData(lambda: result)

    def result(self) -> RunResult:
        return self._get_result()

    # -- requests ---------------------------------------------------------------------------------
    def kernels(self) -> dict:
        from ..analysis.access_map import kernels_overview

        result = self.result()
        out = kernels_overview(result)
        out.setdefault("files", self.files(result))
        # Name each launch's tensors, so the page asks for exactly those maps (PROTOCOL.md).
        by_index = {L.index: L for L in result.launches}
        for k in out.get("kernels", []):
            for li in k.get("launches", []):
                L = by_index.get(li.get("index"))
                if L is not None and "tensors" not in li:
                    li["tensors"] = [{"index": t.index, "name": t.name} for t in L.tensors]
        return out

    def _launch(self, result: RunResult, launch):
        try:
            i = int(launch)
        except (TypeError, ValueError):
            raise RequestError(f"launch must be an integer, not {launch!r}") from None
        for L in result.launches:
            if L.index == i:
                return L
        raise RequestError(f"no launch {i} (the run has {len(result.launches)})", 404)

    def access_map(self, launch, tensor, compressed: bool = False) -> bytes:
        """The access map as compact JSON bytes (gzip-compressed with `compressed`), computed once."""
        result = self.result()
        L = self._launch(result, launch)
        try:
            t = int(tensor)
        except (TypeError, ValueError):
            raise RequestError(f"tensor must be an integer, not {tensor!r}") from None
        if not 0 <= t < len(L.tensors):
            raise RequestError(f"launch {L.index} has no tensor {t} (it has {len(L.tensors)})", 404)
        e = self._entry(result, L, t)
        if compressed:
            if e.gz is None:
                e.gz = gzip.compress(e.raw, 6, mtime=0)
            return e.gz
        return e.raw

    def _entry(self, result: RunResult, L, t: int) -> _Entry:
        key = (id(L), t)
        with self._lock:
            e = self._cache.get(key)  # an entry holds L itself, so id(L) cannot be reused while cached
            if e is not None and (e.launch is not L or e.index != L.index):
                e = None
            owner = e is None
            if owner:
                e = self._cache[key] = _Entry(L)
                while len(self._cache) > _CACHE_ENTRIES:
                    self._cache.pop(next(iter(self._cache)))
        if owner:  # one computation per map; concurrent requests for it wait for this one
            try:
                from ..analysis.access_map import access_map

                e.raw = dumps(access_map(result, launch=L.index, tensor=t))
            except BaseException as exc:
                with self._lock:
                    if self._cache.get(key) is e:
                        del self._cache[key]
                e.error = exc
                raise
            finally:
                e.done.set()
        else:
            e.done.wait()
            if e.error is not None:
                raise e.error
        return e

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
                    self.access_map(L.index, t, compressed=True)
                except Exception:
                    pass  # the page's own request will report it

    def warm_async(self) -> threading.Thread:
        th = threading.Thread(target=self.warm, name="triton-lens-viewer-warm", daemon=True)
        th.start()
        return th

    def values(self, launch, tensor, start=0, count=64) -> dict:
        from ..analysis.access_map import tensor_values

        result = self.result()
        L = self._launch(result, launch)
        try:
            t, start, count = int(tensor), int(start), int(count)
        except (TypeError, ValueError):
            raise RequestError("tensor, start and count must be integers") from None
        if not 0 <= t < len(L.tensors):
            raise RequestError(f"launch {L.index} has no tensor {t}", 404)
        count = max(0, min(count, 1 << 16))
        return tensor_values(result, launch=L.index, tensor=t, start=max(0, start), count=count)

    def extra(self, method: str, params: dict) -> dict:
        """valueMap / dots / performance (analysis/viewer_extras.py) for the page."""
        from ..analysis.viewer_extras import METHODS

        fn = METHODS.get(method)
        if fn is None:
            raise RequestError(f"unknown method {method}", 404)
        result = self.result()
        # launches never change once recorded: an answer holds while the same launch objects are there
        launches = list(result.launches)
        key = (tuple(map(id, launches)), method, tuple(sorted((str(k), str(v)) for k, v in params.items())))
        hit = self._extras.get(key)
        if hit is not None and len(hit[0]) == len(launches) and all(a is b for a, b in zip(hit[0], launches)):
            return hit[1]
        try:
            out = fn(result, params)
            if len(self._extras) > _CACHE_ENTRIES:
                self._extras.clear()
            self._extras[key] = (launches, out)
            return out
        except KeyError as e:
            raise RequestError(str(e.args[0]) if e.args else str(e), 404) from None
        except (TypeError, ValueError) as e:
            raise RequestError(f"bad parameters for {method}: {e}") from None

    # -- source -----------------------------------------------------------------------------------
    def files(self, result: RunResult | None = None) -> list[str]:
        """The files the viewer may show: the run's file and every kernel and access site's file."""
        result = result or self.result()
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

    def source(self, file: str) -> dict:
        """The text of one of the run's files, and its lines that made memory accesses."""
        result = self.result()
        if file not in self.files(result):
            raise RequestError(f"{file!r} is not a file of this run", 404)
        marks: dict[int, dict] = {}
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


def in_process_data() -> ViewerData:
    """The launches the tracer recorded in this process (`triton_lens.launches`), read at each request."""
    import sys

    from . import clients

    main = getattr(sys.modules.get("__main__"), "__file__", None)

    def get() -> RunResult:
        launches = list(clients.launches)
        file = os.path.abspath(main) if main else ""
        for L in launches:  # spelled as the launches spell it (code objects keep the path as it was run)
            if file and os.path.abspath(L.def_file) == file:
                file = L.def_file
                break
        else:
            file = file or (launches[0].def_file if launches else "")
        return RunResult(file=file, status=OK, launches=launches)

    return ViewerData(get, clients.sources)
