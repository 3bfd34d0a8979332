"""The browser viewer's server: the Flask app (`app.py`) served by werkzeug on 127.0.0.1 in a
thread (`ViewerServer`), and the Triton-Viz API's `launch()` / `stop()`: the port (5001, or 8000 with
share=True), the public cloudflared link (share=False by default), what it prints.
"""

from __future__ import annotations

import errno
import os
import socket
import sys
import threading
import types
from pathlib import Path
from typing import TYPE_CHECKING

from ..analysis.viewer_service import ViewerService
from .app import EventHub, create_app

if TYPE_CHECKING:
    from .tunnel import Tunnel

HOST = "127.0.0.1"


class ViewerError(RuntimeError):
    pass


class ViewerServer:
    """One viewer: the Flask app on 127.0.0.1:port, served by werkzeug in a daemon thread."""

    def __init__(
        self,
        data: ViewerService,
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
        self.tunnel: Tunnel | None = None
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

        self.tunnel = tunnel = open_tunnel(f"http://{HOST}:{self.port}", timeout_s=timeout_s)
        self.public_url = tunnel.url.rstrip("/") + "/"
        self.app.config["public_hosts"].add(urlsplit(self.public_url).netloc.lower())
        return self.public_url

    def running(self) -> bool:
        return self._thread.is_alive() and not self._stopped

    def wait(self) -> None:
        """Serve until stop() or Ctrl-C."""
        interrupted = False
        try:
            while self._thread.is_alive():
                self._thread.join(0.5)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            self.stop()
        if interrupted:  # after stop(), and never blocking: a stderr nobody reads cannot keep it serving
            from .dropping_io import say

            say("\ntriton-lens: viewer stopped")

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


def _end_callers_wait() -> None:
    """A notebook helper that serves the viewer until Ctrl-C (GPU MODE's Triton-Puzzles wraps
    `launch(share=True)` in `while True: time.sleep(100)` / `except KeyboardInterrupt`) would sleep
    until the run's time limit. The function that called launch() gets a KeyboardInterrupt at its
    next time.sleep instead, as if Ctrl-C had been pressed at once; sleeps anywhere else are left
    alone. A caller with no `except KeyboardInterrupt` ends there, as it would at Ctrl-C."""
    import time

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the triton_lens package
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(here + os.sep):
        frame = frame.f_back
    if frame is None:
        return
    caller, original = frame, time.sleep

    def sleep(seconds) -> None:
        if sys._getframe(1) is caller:
            time.sleep = original
            print("triton-lens: the wait for Ctrl-C after launch() ended at once", file=sys.stderr)
            raise KeyboardInterrupt
        original(seconds)

    time.sleep = sleep  # type: ignore[assignment]


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
        _end_callers_wait()
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
