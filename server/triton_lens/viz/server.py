"""The browser viewer: a Flask app served by werkzeug on 127.0.0.1 in a thread.

Routes (the page's HTTP host, extension/webview/PROTOCOL.md):
    GET  /                    the host page: the kernel's source beside the access-map page
    GET  /view                the access-map page (extension/webview/index.html, placeholders filled)
    GET  /static/<file>       the page's scripts and styles, from extension/webview
    GET  /host/<file>         the host page's own script and style (viz/static)
    POST /api/kernels         {} -> kernels overview
    POST /api/accessMap       {launch, tensor} -> access map
    POST /api/values          {launch, tensor, start, count} -> tensor values
    POST /api/valueMap        {launch, tensor, when} -> values as a colour map + histograms per line
    POST /api/dots            {launch} -> tl.dot executions with their A/B tiles
    POST /api/performance     {launch} -> performance metrics of the launch
    POST /api/source          {file} -> {file, text, lines: [{line, kinds}]}  (host page)
    POST /api/reveal          {file, line}: the page asks to show a source line -> "reveal" event
    POST /api/cursor          {file, line}: a source line was clicked -> "cursor" event to the page
    GET  /api/events          Server-Sent Events: {"type": "cursor"|"refresh"|"select"|"reveal", ...}
JSON bodies are compact and gzip-compressed when the browser accepts it.
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import queue
import secrets
import socket
import sys
import threading
import time
from pathlib import Path

from .viewdata import RequestError, ViewerData, dumps
from .webview import require_webview

HOST = "127.0.0.1"
_STATIC = Path(__file__).resolve().parent / "static"
_COMPRESSIBLE = ("application/json", "text/html", "text/css", "text/javascript", "application/javascript", "text/plain")


class ViewerError(RuntimeError):
    pass


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


def _int(params: dict, name: str, default=None):
    v = params.get(name, default)
    if v is None:
        raise RequestError(f"missing parameter {name!r}")
    if isinstance(v, bool):
        raise RequestError(f"{name} must be an integer, not {v!r}")
    try:
        if isinstance(v, float) and not v.is_integer():  # 1e400 is inf: no index
            raise ValueError
        return int(v)
    except (TypeError, ValueError, OverflowError):
        raise RequestError(f"{name} must be an integer, not {v!r}") from None


def create_app(
    data: ViewerData, hub: EventHub | None = None, webview_dir: Path | None = None, title: str = "Triton Lens"
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

    def params() -> dict:
        p = request.get_json(silent=True)  # the body only: a query string is no way to send a request
        if p is None:
            p = {}
        if not isinstance(p, dict):
            raise RequestError("the request body must be a JSON object")
        return p

    @app.errorhandler(RequestError)
    def _bad(e: RequestError):
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

    @app.post("/api/kernels")
    def api_kernels():
        return json_response(data.kernels())

    @app.post("/api/accessMap")
    def api_access_map():
        p = params()
        gz = "gzip" in request.headers.get("Accept-Encoding", "")
        r = json_response(data.access_map(_int(p, "launch"), _int(p, "tensor"), compressed=gz))
        if gz:  # kept compressed with the map: compressed once, served many times
            r.headers["Content-Encoding"] = "gzip"
            r.headers["Vary"] = "Accept-Encoding"
        return r

    @app.post("/api/values")
    def api_values():
        p = params()
        return json_response(
            data.values(_int(p, "launch"), _int(p, "tensor"), _int(p, "start", 0), _int(p, "count", 64))
        )

    @app.post("/api/valueMap")
    @app.post("/api/dots")
    @app.post("/api/performance")
    def api_extra():
        return json_response(data.extra(request.path.rsplit("/", 1)[-1], params()))

    @app.post("/api/source")
    def api_source():
        p = params()
        return json_response(data.source(str(p.get("file") or "")))

    def _file_line(p):
        return {"file": str(p.get("file") or ""), "line": _int(p, "line")}

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


class ViewerServer:
    """One viewer: the Flask app on 127.0.0.1:port, served by werkzeug in a daemon thread."""

    def __init__(
        self,
        data: ViewerData,
        port: int = 0,
        title: str = "Triton Lens",
        webview_dir: Path | None = None,
        warm: bool = True,
    ):
        from werkzeug.serving import WSGIRequestHandler, make_server

        class Quiet(WSGIRequestHandler):
            def log_request(self, code="-", size="-"):  # no line per request in the user's terminal
                pass

        self.hub = EventHub()
        self.data = data
        self.app = create_app(data, self.hub, webview_dir, title)
        # Bind the socket here (werkzeug would print and sys.exit on a port in use): 127.0.0.1 only.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as werkzeug does: TIME_WAIT is no conflict
            sock.bind((HOST, int(port)))
            sock.listen(128)
        except OSError as e:
            sock.close()
            if e.errno == errno.EADDRINUSE:
                raise ViewerError(
                    f"port {port} is already in use on {HOST}: stop whatever uses it, or pick "
                    f"another port, e.g. launch(port={int(port) + 1}) or port=0 for any free "
                    f"port (triton-lens view --port N)"
                ) from None
            if e.errno in (errno.EACCES, errno.EPERM):
                raise ViewerError(
                    f"not allowed to listen on port {port} of {HOST} (ports below 1024 need "
                    "privileges): pick another, e.g. launch(port=5001)"
                ) from None
            raise ViewerError(f"cannot listen on {HOST}:{port}: {e.strerror or e}") from None
        try:
            self.httpd = make_server(HOST, int(port), self.app, threaded=True, request_handler=Quiet, fd=sock.fileno())
        finally:
            sock.close()  # the server holds its own duplicate of the socket
        self.port = int(self.httpd.server_address[1])
        self.url = f"http://{HOST}:{self.port}/"
        self.public_url: str | None = None
        self.tunnel = None
        self._thread = threading.Thread(
            target=self.httpd.serve_forever,
            kwargs={"poll_interval": 0.2},
            name=f"triton-lens-viewer-{self.port}",
            daemon=True,
        )
        self._stopped = False
        self._thread.start()
        if warm:
            data.warm_async()  # the maps the page opens first, ready before the browser asks

    @property
    def address(self) -> tuple[str, int]:
        return self.httpd.socket.getsockname()[:2]

    def emit(self, event: dict) -> None:
        self.hub.emit(event)

    def share(self, timeout_s: float = 45.0) -> str:
        from urllib.parse import urlsplit

        from .tunnel import open_tunnel

        self.tunnel = open_tunnel(f"http://{HOST}:{self.port}", timeout_s=timeout_s)
        self.public_url = self.tunnel.url.rstrip("/") + "/"
        self.app.config["public_hosts"].add(urlsplit(self.public_url).netloc.lower())
        return self.public_url

    def running(self) -> bool:
        return self._thread.is_alive() and not self._stopped

    def wait(self) -> None:
        """Serve until stop() or Ctrl-C."""
        try:
            while self._thread.is_alive():
                self._thread.join(0.5)
        except KeyboardInterrupt:
            print("\ntriton-lens: viewer stopped", file=sys.stderr)
        finally:
            self.stop()

    def stop(self) -> None:
        if self._stopped:
            return
        self._stopped = True
        self.hub.close()
        if self.tunnel is not None:
            self.tunnel.stop()
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(timeout=5)


# -- launch() / stop(): the Triton-Viz API --------------------------------------------------------

_server: ViewerServer | None = None
_lock = threading.Lock()


def _interactive() -> bool:
    if hasattr(sys, "ps1") or sys.flags.interactive:
        return True
    ip = sys.modules.get("IPython")
    if ip is not None:
        try:
            return ip.get_ipython() is not None
        except Exception:
            return False
    return False


def _under_engine() -> bool:
    """The script runs inside `triton-lens check`/`view` (their worker): they show the launches."""
    if os.environ.get("TRITON_LENS_WORKER") == "1":
        return True
    try:
        from .interp import engine_hooks_installed
        from .tracing import _active
    except Exception:
        return False
    return _active == 0 and engine_hooks_installed()


def launch(share: bool = False, port: int | None = None, block: bool | None = None) -> str | None:
    """Serve the viewer for the launches recorded so far (and later ones), and print its address.

    - share=False (the default): only this machine, http://127.0.0.1:5001/ by default;
    - share=True: also a public https://….trycloudflare.com link through a `cloudflared` quick tunnel
      (the program must be on PATH); port 8000 by default. Anyone with that link sees the run's
      source, access maps and tensor values. The server only ever listens on 127.0.0.1.
    - port: another port (0: any free one).
    - block: serve until Ctrl-C (the default outside interactive sessions, and with share=False);
      block=False returns the address at once and serves in the background until `stop()`.
    Returns the address (the public one with share=True).
    """
    global _server
    if _under_engine():
        print(
            "triton-lens: launch() skipped: this script runs under triton-lens, which shows the launches itself",
            file=sys.stderr,
        )
        return None
    if port is None:
        port = 8000 if share else 5001
    if block is None:
        block = (not share) or not _interactive()
    if share:
        from .tunnel import INSTALL_HINT, TunnelError, find_cloudflared

        if find_cloudflared() is None:
            raise TunnelError(INSTALL_HINT)
    from . import clients
    from .viewdata import in_process_data

    if not clients.launches:
        print(
            'triton-lens: no launches recorded yet: decorate a kernel with @triton_lens.trace("tracer") and '
            "launch it; the page refreshes when launches arrive",
            file=sys.stderr,
        )
    with _lock:
        if _server is not None:
            _server.stop()
            _server = None
        server = ViewerServer(in_process_data(), port=port, title=_title())
        _server = server
    _stop_at_exit()
    _subscribe_refresh(server)
    url = server.url
    if share:
        try:
            url = server.share()
        except Exception:
            stop()
            raise
        print(f"triton-lens viewer: {url}  (public link; local: {server.url})", flush=True)
        print(
            "triton-lens: warning: anyone with this link sees the kernel's source, access maps and tensor "
            "values until the viewer stops (launch() without share=True keeps it on this machine)",
            file=sys.stderr,
            flush=True,
        )
    else:
        print(f"triton-lens viewer: {url}", flush=True)
    if block:
        print("Press Ctrl-C to stop.", flush=True)
        server.wait()
        with _lock:
            if _server is server:
                _server = None
    return url


def stop() -> None:
    global _server
    with _lock:
        s, _server = _server, None
    if s is not None:
        s.stop()


_atexit_registered = False


def _stop_at_exit() -> None:
    """A viewer left running (block=False) ends with the process, and so does its cloudflared tunnel."""
    global _atexit_registered
    if not _atexit_registered:
        import atexit

        atexit.register(stop)
        _atexit_registered = True


def current() -> ViewerServer | None:
    return _server


def _title() -> str:
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    return f"Triton Lens: {os.path.basename(main)}" if main else "Triton Lens"


def _subscribe_refresh(server: ViewerServer) -> None:
    """New launches recorded while the viewer runs (a notebook) refresh the page."""
    from . import clients

    def on_change():
        if server.running():
            server.emit({"type": "refresh"})

    clients.listeners[:] = [on_change]
