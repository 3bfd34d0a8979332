"""`triton-lens view FILE`: runs the script in a worker (the engine's runner) and serves the viewer."""

import gzip
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest
from viz_support import free_port

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))


def post(url, body):
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json", "Accept-Encoding": "gzip"}
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        raw = r.read()
        if r.headers.get("Content-Encoding") == "gzip":
            raw = gzip.decompress(raw)
        return json.loads(raw)


def test_view_runs_a_triton_viz_script_and_serves_its_launches(port, capsys):
    from triton_lens.viz import cli_view

    script = os.path.join(HERE, "scripts", "vector_add_viz.py")
    assert cli_view.main([script, "--port", str(port), "--no-block"]) == 0
    server = cli_view._last_server.pop()
    try:
        out = capsys.readouterr().out
        assert f"{script}: ok, 1 launch, 0 errors, 0 warnings" in out
        assert f"triton-lens viewer: http://127.0.0.1:{port}/" in out
        assert server.httpd.socket.getsockname() == ("127.0.0.1", port)
        ov = post(server.url + "api/kernels", {})
        (k,) = ov["kernels"]
        assert (k["name"], k["file"], [li["grid"] for li in k["launches"]]) == ("add_kernel", script, [[2, 1, 1]])
        m = post(server.url + "api/accessMap", {"launch": 0, "tensor": 2})
        assert m["tensor"]["name"] == "z_ptr"
        assert [(a["program"], a["touched"]) for a in m["accesses"]] == [
            ([0, 0, 0], {"runs": [0, 64]}),
            ([1, 0, 0], {"runs": [64, 64]}),
        ]
        v = post(server.url + "api/values", {"launch": 0, "tensor": 2, "start": 60, "count": 4})
        assert v["values"] == [120.0, 122.0, 124.0, 126.0]  # z = x + y, after the launch
    finally:
        server.stop()


def test_view_through_the_cli_entry_point_and_its_errors(tmp_path):
    # the lead's `triton-lens` CLI hands `view ...` to viz.cli_view.main
    from triton_lens.viz import cli_view

    assert cli_view.main([str(tmp_path / "missing.py")]) == 2
    env = dict(os.environ, PATH=str(tmp_path), PYTHONPATH=os.path.join(REPO, "server"))
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "triton_lens.cli",
            "view",
            os.path.join(HERE, "scripts", "vector_add_viz.py"),
            "--share",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert p.returncode == 2 and "cloudflared" in p.stderr and "share=False" in p.stderr


def _default_sigint():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class _View:
    """`triton-lens view SCRIPT --port PORT` in a child process; SIGINT (Ctrl-C) ends it.

    stdout and stderr are read by threads (a pipe nobody reads fills up) unless `pipes=False`: then
    the test holds the read ends (`out_fd`, `err_fd`) and reads only what it asks for."""

    def __init__(self, script, port, *args, pipes=True):
        env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "server"))
        self.port = port
        self.out_fd, out_w = os.pipe()
        self.err_fd, err_w = os.pipe()
        self.out_w, self.err_w = os.dup(out_w), os.dup(err_w)  # the tests that fill the pipes write here
        try:
            cmd = [sys.executable, "-m", "triton_lens.cli", "view", script, "--port", str(port), *args]
            # Ctrl-C as a terminal's: a pytest started in the background (`make test &`) ignores SIGINT, and
            # its children would inherit that and never see the interrupt this test sends.
            self.proc = subprocess.Popen(cmd, stdout=out_w, stderr=err_w, env=env, preexec_fn=_default_sigint)
        finally:
            os.close(out_w)
            os.close(err_w)
        self.out = bytearray()
        self.err = bytearray()
        self._changed = threading.Condition()
        self._readers = []
        if pipes:
            for fd, buf in ((self.out_fd, self.out), (self.err_fd, self.err)):
                t = threading.Thread(target=self._read, args=(fd, buf), daemon=True)
                t.start()
                self._readers.append(t)

    def _read(self, fd, buf):
        while True:
            chunk = os.read(fd, 65536)
            with self._changed:
                buf += chunk
                self._changed.notify_all()
            if not chunk:
                return

    def serving(self, timeout=120):
        """Wait for the line that says the viewer serves (read by the threads, or here with pipes=False)."""
        want = f"serving on http://127.0.0.1:{self.port}/"
        line = f"triton-lens viewer: http://127.0.0.1:{self.port}/\n".encode()
        end = time.monotonic() + timeout
        if not self._readers:
            while line not in self.out:
                left = end - time.monotonic()
                assert left > 0 and self.proc.poll() is None, f"not {want}"
                if select.select([self.out_fd], [], [], min(left, 1.0))[0]:
                    chunk = os.read(self.out_fd, 4096)
                    assert chunk, f"stdout closed before {want}"
                    self.out += chunk
            return
        with self._changed:
            ok = self._changed.wait_for(lambda: line in self.out or self.proc.poll() is not None, timeout)
        assert ok and line in self.out, f"not {want}: {self.err.decode(errors='replace')[-3000:]}"

    def interrupt(self, timeout=30):
        """Ctrl-C; the exit status (a view that does not end in `timeout` seconds fails the test)."""
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=timeout)
        finally:
            self.close()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.out_w, self.err_w):
            os.close(fd)
        self.out_w = self.err_w = -1
        for t in self._readers:
            t.join(timeout=10)
        if not self._readers:
            os.close(self.out_fd)
            os.close(self.err_fd)

    def stderr(self):
        return self.err.decode(errors="replace")[-3000:]


def _fill(write_fd):
    """Fill the pipe whose write end is `write_fd` (as a reader that stopped reading leaves it)."""
    fd = os.open(f"/proc/self/fd/{write_fd}", os.O_WRONLY | os.O_NONBLOCK)  # non-blocking for us only
    try:
        while True:
            os.write(fd, b"x" * 4096)
    except BlockingIOError:
        pass
    finally:
        os.close(fd)


def _request(port, raw, timeout=30):
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(raw)
        data = b""
        while chunk := s.recv(65536):
            data += chunk
        return data


def test_view_blocks_and_serves_until_interrupted(tmp_path):
    port = free_port()
    view = _View(os.path.join(HERE, "scripts", "oob_missing_mask.py"), port)
    try:
        view.serving()
        ov = post(f"http://127.0.0.1:{port}/api/kernels", {})
        assert ov["kernels"][0]["name"] == "add_kernel"
        m = post(f"http://127.0.0.1:{port}/api/accessMap", {"launch": 0, "tensor": 0})
        oob = [a["oob"] for a in m["accesses"] if a["oob"]]
        assert oob == [{"runs": [1000, 24]}]  # the 24 lanes of program 7 past x's end
    finally:
        rc = view.interrupt()
    assert rc == 0, view.stderr()
    assert "viewer stopped" in view.stderr()


def test_ctrl_c_ends_the_view_with_a_page_open(tmp_path):
    # An open page holds the event stream open, and a browser opens connections before it sends on
    # them (one here sends nothing). (werkzeug ends other responses with Connection: close.)
    port = free_port()
    view = _View(os.path.join(HERE, "scripts", "oob_missing_mask.py"), port)
    held = []
    try:
        view.serving()
        assert _request(port, f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()).startswith(b"HTTP/1.1 200")
        held.append(socket.create_connection(("127.0.0.1", port), timeout=30))  # idle
        events = socket.create_connection(("127.0.0.1", port), timeout=30)
        held.append(events)
        events.sendall(f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        got = b""
        while b"retry: 1000" not in got:
            chunk = events.recv(65536)
            assert chunk, got
            got += chunk
        assert b"Transfer-Encoding: chunked" in got  # the stream stays open
        held.append(socket.create_connection(("127.0.0.1", port), timeout=30))
        held[-1].sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n".encode())  # a request half sent
    finally:
        rc = view.interrupt()
        for s in held:
            s.close()
    assert rc == 0, view.stderr()


def test_ctrl_c_ends_the_view_while_the_script_runs(tmp_path):
    script = tmp_path / "slow.py"
    script.write_text("import os, sys, time\nopen(sys.argv[1], 'w').write(str(os.getpid()))\ntime.sleep(300)\n")
    started = tmp_path / "started"
    view = _View(str(script), free_port(), "--", str(started))
    try:
        end = time.monotonic() + 120
        while not started.exists() or not started.read_text():  # the script runs (in the worker)
            assert time.monotonic() < end and view.proc.poll() is None, view.stderr()
            time.sleep(0.05)
        pid = int(started.read_text())
    finally:
        rc = view.interrupt()
    assert rc == 2, view.stderr()
    end = time.monotonic() + 30
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < end:  # the run is ended with the view
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{pid}")


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="fills the pipes through /proc/self/fd (Linux)")
def test_ctrl_c_ends_the_view_when_nobody_reads_its_output(tmp_path):
    # stdout and stderr are pipes that nobody reads any more, and full: the viewer's writes (a log
    # line per bad request, "viewer stopped") must not block it, and Ctrl-C still ends it.
    port = free_port()
    view = _View(os.path.join(HERE, "scripts", "oob_missing_mask.py"), port, pipes=False)
    try:
        view.serving()
        _fill(view.out_w)
        _fill(view.err_w)
        for _ in range(3):  # werkzeug logs each ("code 400, message Bad request syntax") to stderr
            try:
                _request(port, b"NOT HTTP\r\n\r\n", timeout=2)
            except OSError:  # TimeoutError: a request thread blocked in its log line
                pass
        ov = post(f"http://127.0.0.1:{port}/api/kernels", {})
        assert ov["kernels"][0]["name"] == "add_kernel"  # still serving
    finally:
        rc = view.interrupt()
    assert rc == 0


def test_triton_viz_script_under_the_engine_is_recorded_once_and_launch_does_not_serve(tmp_path):
    # `triton-lens check`/`view` run the whole script under their own recorder: a @trace'd kernel is
    # recorded by it (out-of-bounds lanes seen once, not hidden by a second recorder), the script's
    # sanitizer does not abort the run, and its launch() returns at once instead of serving.
    from triton_lens.analysis import analyze
    from triton_lens.trace_engine.process.runner import RunRequest, run

    src = open(os.path.join(HERE, "scripts", "oob_missing_mask.py")).read()
    src = src.replace(
        "import triton.language as tl\n", "import triton.language as tl\nimport triton_lens as triton_viz\n"
    )
    src = src.replace("@triton.jit\n", '@triton_viz.trace("sanitizer")\n@triton_viz.trace("tracer")\n@triton.jit\n')
    src += "    triton_viz.launch(share=False)\n    print('after launch')\n"
    script = tmp_path / "viz_oob.py"
    script.write_text(src)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_LENS_WORKER"}
    result = run(RunRequest(path=str(script), timeout_s=120, env=env))  # as `triton-lens check` runs it
    assert result.status == "ok", result.error
    assert len(result.launches) == 1 and int(result.launches[0].ex_oob.sum()) == 24
    assert "launch() skipped" in result.stderr and "after launch" in result.stdout
    oob = [f for f in analyze(result).findings if f.kind == "oob"]
    assert [(f.arg, f.lanes) for f in oob] == [("x_ptr", 24)]


def test_ctrl_c_just_after_the_address_is_shown_stops_the_viewer_and_says_so(port, capsys, monkeypatch):
    # Under load, the Ctrl-C a user sends once the address is shown can land before the view is in its
    # wait (the server's threads hold the interpreter meanwhile): it stopped the server but did not say
    # "viewer stopped" (test_view_blocks_and_serves_until_interrupted failed so in a loaded full run).
    # The Ctrl-C is raised here where it lands: at the line printed right after the address.
    import builtins

    from triton_lens.viz import cli_view, server

    started: list = []
    real_init = server.ViewerServer.__init__

    def init(self, *a, **kw):
        real_init(self, *a, **kw)
        started.append(self)

    real_print = builtins.print

    def print_(*a, **kw):
        if a and str(a[0]).startswith("Press Ctrl-C"):
            raise KeyboardInterrupt
        real_print(*a, **kw)

    monkeypatch.setattr(server.ViewerServer, "__init__", init)
    monkeypatch.setattr(builtins, "print", print_)
    script = os.path.join(HERE, "scripts", "vector_add_viz.py")
    args = cli_view._parser().parse_args([script, "--port", str(port)])
    assert cli_view._view(args, []) == 0
    (s,) = started
    assert not s.running()
    assert "triton-lens: viewer stopped" in capsys.readouterr().err
