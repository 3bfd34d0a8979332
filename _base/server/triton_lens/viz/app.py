"""The browser viewer's Flask app: the page, its scripts, the viewer service's requests as
`POST /api/<method>` (a thin transport: analysis/viewer_service.py validates, answers and caches),
the host page's clicks and the event stream, and the checks that keep other web pages out
(Host, Origin, JSON content type on POSTs, frame-ancestors / X-Frame-Options). `server.py` serves it.

Routes (the page's HTTP host, extension/webview/PROTOCOL.md):
    GET  /                    the host page: the kernel's source beside the access-map page
    GET  /view                the access-map page (extension/webview/index.html, placeholders filled)
    GET  /static/<file>       the page's scripts and styles, from extension/webview
    GET  /host/<file>         the host page's own script and style (viz/static)
    POST /api/<method>        the viewer service's methods (kernels, accessMap, values, valueMap, dots,
                              performance, source): params as the JSON body -> the answer, or
                              {"error": {"message"}} with 400 (bad parameter) / 404 (no such launch, tensor, file)
    POST /api/reveal          {file, line}: the page asks to show a source line -> "reveal" event
    POST /api/cursor          {file, line}: a source line was clicked -> "cursor" event to the page
    GET  /api/events          Server-Sent Events: {"type": "cursor"|"refresh"|"select"|"reveal", ...}
JSON bodies are compact and gzip-compressed when the browser accepts it.
"""

from __future__ import annotations

import gzip
import json
import queue
import secrets
import threading
import time
from pathlib import Path

from ..analysis.viewer_service import METHODS as VIEWER_METHODS
from ..analysis.viewer_service import ViewerRequestError, ViewerService, dumps, int_param
from .webview import require_webview

_STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY_BYTES = 1 << 20  # the page's requests are a few hundred bytes
_COMPRESSIBLE = ("application/json", "text/html", "text/css", "text/javascript", "application/javascript", "text/plain")


class EventHub:
    """Fan-out of events to every open EventSource."""

    def __init__(self):
        self._subs: list[queue.Queue] = []
        self._lock = threading.Lock()
        self.closed = threading.Event()

    def subscribe(self) -> queue.Queue:
        q: queue.Queue = queue.Queue(maxsize=256)
        with self._lock:
            self._subs.append(q)
        return q

    def unsubscribe(self, q) -> None:
        with self._lock:
            if q in self._subs:
                self._subs.remove(q)

    def emit(self, event: dict) -> None:
        with self._lock:
            subs = list(self._subs)
        for q in subs:
            try:
                q.put_nowait(event)
            except queue.Full:
                pass

    def close(self) -> None:
        self.closed.set()
        self.emit({"type": "_close"})

    @property
    def subscribers(self) -> int:
        with self._lock:
            return len(self._subs)


def create_app(
    data: ViewerService, hub: EventHub | None = None, webview_dir: Path | None = None, title: str = "Triton Lens"
):
    from flask import Flask, Response, request, send_from_directory

    hub = hub or EventHub()
    webview_dir = Path(webview_dir) if webview_dir is not None else require_webview()
    app = Flask("triton_lens.viz", static_folder=None)
    app.config["hub"] = hub
    app.config["data"] = data
    app.config["public_hosts"] = set()  # the tunnel's host name, once share() opened one

    def page_template() -> str:
        with open(webview_dir / "index.html", encoding="utf-8") as f:
            return f.read()

    def json_response(body, status=200):
        if not isinstance(body, (bytes, bytearray)):
            body = dumps(body)
        return Response(body, status=status, mimetype="application/json")

    # No request of the page is more than a few hundred bytes: a larger body is refused before it is
    # read (a 200 MB one was read and held whole), as a JSON 413 (werkzeug's own is an HTML page).
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY_BYTES

    def body():
        """The request's JSON body (None when empty). One that does not parse, nested too deep
        included (json raises RecursionError, which Flask turned into a 500 page), is a 400."""
        raw = request.get_data(cache=True)
        if not raw.strip():
            return None
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            raise ViewerRequestError(
                "the request body is not valid JSON (or nested too deep): send one JSON object"
            ) from None

    def params() -> dict:  # of the host page's clicks (the service checks its requests' own)
        p = body()  # the body only: a query string is no way to send a request
        if p is None:
            p = {}
        if not isinstance(p, dict):
            raise ViewerRequestError("the request body must be a JSON object")
        return p

    @app.errorhandler(ViewerRequestError)
    def _bad(e: ViewerRequestError):
        return json_response({"error": {"message": str(e)}}, e.status)

    @app.get("/")
    def index():
        with open(_STATIC / "host.html", encoding="utf-8") as f:
            text = f.read()
        html = text.replace("{{title}}", _html_escape(title))
        r = Response(html, mimetype="text/html")
        r.headers["Content-Security-Policy"] = (
            "default-src 'none'; script-src 'self'; style-src 'self'; "
            "connect-src 'self'; frame-src 'self'; img-src 'self' data:"
        )
        return r

    @app.get("/view")
    def view():
        nonce = secrets.token_urlsafe(18).replace("-", "A").replace("_", "B")
        html = (
            page_template()
            .replace("{{nonce}}", nonce)
            .replace("{{cspSource}}", "'self'")
            .replace("{{base}}", "/static/")
        )
        r = Response(html, mimetype="text/html")
        r.headers["Cache-Control"] = "no-store"
        return r

    @app.get("/static/<path:name>")
    def static_file(name):
        r = send_from_directory(webview_dir, name, max_age=0)
        if name.endswith(".js") or name.endswith(".mjs"):
            r.mimetype = "text/javascript"
        return r

    @app.get("/host/<path:name>")
    def host_file(name):
        return send_from_directory(_STATIC, name, max_age=0)

    # The page's requests: the viewer service validates, answers and caches (analysis/viewer_service.py).
    @app.post("/api/<method>")
    def api_request(method):
        if method not in VIEWER_METHODS:
            return json_response({"error": {"message": f"no such request: {request.path}"}}, 404)
        gz = "gzip" in request.headers.get("Accept-Encoding", "")
        p = body()  # the body only: a query string is no way to send a request
        r = json_response(data.request_json(method, {} if p is None else p, compressed=gz))
        if gz:  # cached answers keep their compressed bytes: compressed once, served many times
            r.headers["Content-Encoding"] = "gzip"
            r.headers["Vary"] = "Accept-Encoding"
        return r

    def _file_line(p):
        return {"file": str(p.get("file") or ""), "line": int_param(p, "line")}

    @app.post("/api/reveal")
    def api_reveal():
        hub.emit({"type": "reveal", **_file_line(params())})
        return json_response({})

    @app.post("/api/cursor")
    def api_cursor():
        hub.emit({"type": "cursor", **_file_line(params())})
        return json_response({})

    @app.get("/api/events")
    def api_events():
        q = hub.subscribe()

        def stream():
            try:
                yield "retry: 1000\n\n"
                while not hub.closed.is_set():
                    try:
                        ev = q.get(timeout=15.0)
                    except queue.Empty:
                        yield ": keep-alive\n\n"
                        continue
                    if ev.get("type") == "_close":
                        return
                    yield f"data: {json.dumps(ev, separators=(',', ':'))}\n\n"
            finally:
                hub.unsubscribe(q)

        r = Response(stream(), mimetype="text/event-stream")
        r.headers["Cache-Control"] = "no-store"
        r.headers["X-Accel-Buffering"] = "no"
        return r

    @app.before_request
    def _stamp():
        request.environ["triton_lens.t0"] = time.perf_counter()
        refused = _refusal(request, app.config["public_hosts"])
        if refused is not None:
            return json_response({"error": {"message": refused[1]}}, refused[0])
        if (request.content_length or 0) > MAX_BODY_BYTES:
            return _too_large(None)

    @app.after_request
    def _compress(r):
        r.headers.setdefault("X-Content-Type-Options", "nosniff")
        # Only the viewer's own host page may frame its pages (no clickjacking from other sites).
        r.headers.setdefault("X-Frame-Options", "SAMEORIGIN")
        csp = r.headers.get("Content-Security-Policy")
        r.headers["Content-Security-Policy"] = (csp + "; " if csp else "") + "frame-ancestors 'self'"
        t0 = request.environ.get("triton_lens.t0")
        if t0 is not None and not r.is_streamed:  # the server's own time, for the browser's resource timing
            r.headers["Server-Timing"] = f"app;dur={(time.perf_counter() - t0) * 1e3:.2f}"
        if (
            r.direct_passthrough
            or r.is_streamed
            or r.status_code != 200
            or "gzip" not in request.headers.get("Accept-Encoding", "")
            or r.mimetype not in _COMPRESSIBLE
            or "Content-Encoding" in r.headers
        ):
            return r
        body = r.get_data()
        if len(body) < 1024:
            return r
        r.set_data(gzip.compress(body, 6, mtime=0))
        r.headers["Content-Encoding"] = "gzip"
        r.headers["Vary"] = "Accept-Encoding"
        return r

    @app.errorhandler(413)
    def _too_large(e):
        r = json_response(
            {"error": {"message": f"the request body is larger than the viewer takes ({MAX_BODY_BYTES >> 20} MB)"}},
            413,
        )
        r.headers["Connection"] = "close"  # the rest of the body is never read
        return r

    @app.errorhandler(404)
    def _not_found(e):
        if request.path.startswith("/api/"):
            return json_response({"error": {"message": f"no such request: {request.path}"}}, 404)
        return e

    return app


_LOCAL_NAMES = ("127.0.0.1", "localhost")


def _refusal(request, public_hosts: set) -> tuple[int, str] | None:
    """Why a request is refused, or None. The viewer listens on 127.0.0.1 only, but a web page can
    still reach it: by DNS rebinding (its own host name resolving to 127.0.0.1: the Host header
    gives it away) or by a cross-site form POST (no JSON content type, a foreign Origin)."""
    port = request.environ.get("SERVER_PORT", "")
    allowed = {f"{n}:{port}" for n in _LOCAL_NAMES} | set(public_hosts)
    if port == "80":
        allowed |= set(_LOCAL_NAMES)
    host = (request.headers.get("Host") or "").lower()
    if host not in allowed:
        return 403, (
            f"this Triton Lens viewer answers only requests for 127.0.0.1:{port} or localhost:{port}, "
            f"not for host {host!r}: open http://127.0.0.1:{port}/"
        )
    if request.method == "POST":
        origin = request.headers.get("Origin")
        own = {f"http://{h}" for h in allowed} | {f"https://{h}" for h in public_hosts}
        if origin is not None and origin.lower() not in own:
            return 403, f"requests from the page at {origin} are refused: only the viewer's own page may send them"
        if request.mimetype != "application/json":
            return 415, "requests to the viewer must have a JSON body (Content-Type: application/json)"
    return None


def _html_escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
