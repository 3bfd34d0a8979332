"""launch(): the viewer server. Binds 127.0.0.1 only, clear errors, share=True through cloudflared."""

import base64
import json
import os
import socket
import stat
import threading
import time
import urllib.error
import urllib.request

import pytest
import torch
import viz_kernels as kernels
from viz_support import free_port

FAKE_URL = "https://xyz-quick-tunnel.trycloudflare.com"

# What the real `cloudflared tunnel --url ...` prints (on stderr) when a quick tunnel is up.
FAKE_CLOUDFLARED = f"""#!/bin/sh
echo "$@" > "$FAKE_CLOUDFLARED_ARGS"
echo "2026-11-30T19:00:00Z INF Thank you for trying Cloudflare Tunnel. Doing so, without a Cloudflare account, is a quick way to experiment and try it out." >&2
echo "2026-11-30T19:00:00Z INF Requesting new quick Tunnel on trycloudflare.com..." >&2
sleep 0.3
echo "2026-11-30T19:00:01Z INF +--------------------------------------------------------------------------------------------+" >&2
echo "2026-11-30T19:00:01Z INF |  Your quick Tunnel has been created! Visit it at (it may take some time to be reachable):  |" >&2
echo "2026-11-30T19:00:01Z INF |  {FAKE_URL}                                                  |" >&2
echo "2026-11-30T19:00:01Z INF +--------------------------------------------------------------------------------------------+" >&2
echo "2026-11-30T19:00:01Z INF Registered tunnel connection connIndex=0 location=ams01 protocol=quic" >&2
exec sleep 600
"""


def get(url, data=None, headers=None):
    req = urllib.request.Request(url, data=data, headers=headers or {})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, dict(r.headers), r.read()


def non_loopback_ipv4() -> list[str]:
    """This machine's IPv4 addresses other than 127.x (the outgoing interface's, and the host name's)."""
    found = set()
    for target in ("10.255.255.255", "198.51.100.1", "8.8.8.8"):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            s.connect((target, 9))  # UDP connect sends nothing: it only picks the outgoing interface
            found.add(s.getsockname()[0])
        except OSError:
            pass
        finally:
            s.close()
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            found.add(info[4][0])
    except OSError:
        pass
    return sorted(a for a in found if not a.startswith("127.") and a != "0.0.0.0")


def record_one(viz):
    k = viz.trace("tracer")(kernels.add_kernel)
    x = torch.arange(128.0)
    k[(2,)](x, x, torch.zeros(128), 128, 64)


@pytest.fixture
def fake_cloudflared(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "cloudflared"
    exe.write_text(FAKE_CLOUDFLARED)
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    args_file = tmp_path / "args.txt"
    monkeypatch.setenv("FAKE_CLOUDFLARED_ARGS", str(args_file))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return args_file


def test_launch_serves_on_loopback_only(viz, port):
    record_one(viz)
    url = viz.launch(share=False, port=port, block=False)
    assert url == f"http://127.0.0.1:{port}/"
    from triton_lens.viz import server

    s = server.current()
    assert s.httpd.socket.getsockname() == ("127.0.0.1", port)
    assert s.httpd.socket.family == socket.AF_INET
    status, _, body = get(url)
    assert status == 200 and b"<iframe" in body
    # the machine's other addresses do not answer
    own = non_loopback_ipv4()
    assert own, "this test needs a non-loopback address"
    for addr in own:
        with pytest.raises(OSError):
            socket.create_connection((addr, port), timeout=3).close()
    viz.stop()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=3).close()


def test_port_in_use_is_a_clear_error(viz, port):
    holder = socket.socket()
    holder.bind(("127.0.0.1", port))
    holder.listen()
    try:
        with pytest.raises(RuntimeError) as info:
            viz.launch(share=False, port=port, block=False)
    finally:
        holder.close()
    msg = str(info.value)
    assert f"port {port} is already in use" in msg and f"launch(port={port + 1})" in msg and "port=0" in msg


def test_default_ports_and_port_zero(viz):
    from triton_lens.viz import server

    for _share_port in (5001,):
        try:
            url = viz.launch(share=False, block=False)
        except RuntimeError as e:  # something else on this machine holds 5001: the error names it
            assert "port 5001 is already in use" in str(e)
        else:
            assert url == "http://127.0.0.1:5001/"
        viz.stop()
    url = viz.launch(share=False, port=0, block=False)
    assert url == f"http://127.0.0.1:{server.current().port}/" and server.current().port > 0


def test_block_default_is_true_for_share_false_and_stop_ends_it(viz, port):
    out = {}
    t = threading.Thread(target=lambda: out.setdefault("url", viz.launch(share=False, port=port)), daemon=True)
    t.start()
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            get(f"http://127.0.0.1:{port}/view")
            break
        except OSError:
            time.sleep(0.05)
    time.sleep(0.3)
    assert t.is_alive()  # still serving: launch() blocks
    viz.stop()
    t.join(10)
    assert not t.is_alive() and out["url"] == f"http://127.0.0.1:{port}/"


def test_share_opens_a_cloudflared_quick_tunnel(viz, port, fake_cloudflared, capsys):
    record_one(viz)
    url = viz.launch(share=True, port=port, block=False)
    assert url == FAKE_URL + "/"
    assert fake_cloudflared.read_text().split() == ["tunnel", "--no-autoupdate", "--url", f"http://127.0.0.1:{port}"]
    printed = capsys.readouterr().out
    assert FAKE_URL in printed and f"http://127.0.0.1:{port}/" in printed
    from triton_lens.viz import server

    s = server.current()
    assert s.httpd.socket.getsockname() == ("127.0.0.1", port)  # still loopback: the tunnel forwards to it
    proc = s.tunnel.proc
    assert proc.poll() is None
    viz.stop()
    assert proc.poll() is not None  # stop() ends the tunnel too


def test_share_default_port_is_8000(viz, fake_cloudflared):
    try:
        url = viz.launch(share=True, block=False)
    except RuntimeError as e:
        assert "port 8000 is already in use" in str(e)
        return
    from triton_lens.viz import server

    assert url == FAKE_URL + "/" and server.current().port == 8000


def test_share_without_cloudflared_says_what_to_install(viz, port, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing on PATH
    with pytest.raises(RuntimeError) as info:
        viz.launch(share=True, port=port, block=False)
    msg = str(info.value)
    assert "cloudflared" in msg and "install" in msg.lower() and "share=False" in msg
    # nothing was left listening
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_cloudflared_that_prints_no_url_is_a_clear_error(viz, port, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "cloudflared"
    exe.write_text("#!/bin/sh\necho 'ERR failed to request quick Tunnel: no network' >&2\nexit 1\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    with pytest.raises(RuntimeError) as info:
        viz.launch(share=True, port=port, block=False)
    assert "did not open a public link" in str(info.value) and "no network" in str(info.value)
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_api_errors_are_json(viz, port):
    url = viz.launch(share=False, port=port, block=False)
    with pytest.raises(urllib.error.HTTPError) as info:
        get(url + "api/accessMap", data=b'{"launch": 5, "tensor": 0}', headers={"Content-Type": "application/json"})
    assert info.value.code == 404
    assert json.loads(info.value.read())["error"]["message"].startswith("no launch 5")
    with pytest.raises(urllib.error.HTTPError) as info:
        get(url + "api/source", data=b'{"file": "/etc/passwd"}', headers={"Content-Type": "application/json"})
    assert info.value.code == 404  # only the run's own files are served


def test_value_map_dots_and_performance_routes(viz, port):
    k = viz.trace("tracer")(kernels.matmul_kernel)
    a, b = torch.randn(32, 16), torch.randn(16, 32)
    c = torch.empty(32, 32)
    k[(2, 2)](a, b, c, 32, 32, 16, BM=16, BN=16, BK=16)
    url = viz.launch(share=False, port=port, block=False)

    def post(path, body):
        return json.loads(
            get(url + "api/" + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})[2]
        )

    dots = post("dots", {"launch": 0})
    assert len(dots["executions"]) == 4 and {d["m"] for d in dots["executions"]} == {16}
    first = dots["executions"][0]
    assert first["a"]["linked"] and first["a"]["name"] == "a_ptr" and first["b"]["name"] == "b_ptr"
    perf = post("performance", {"launch": 0})
    assert perf["launches"][0]["flops"] == 4 * 2 * 16 * 16 * 16
    vm = post("valueMap", {"launch": 0, "tensor": 2, "when": "after"})
    assert vm["numel"] == 32 * 32 and vm["block"] == 1 and len(base64.b64decode(vm["q"])) == 1024
    with pytest.raises(urllib.error.HTTPError) as info:
        post("valueMap", {"launch": 3, "tensor": 0})
    assert info.value.code == 404


def read_events(url, n, timeout=20):
    """The first n data events of the server's event stream."""
    events = []
    with urllib.request.urlopen(url + "api/events", timeout=timeout) as r:
        assert r.headers["Content-Type"].startswith("text/event-stream")
        for raw in r:
            line = raw.decode().strip()
            if line.startswith("data: "):
                events.append(json.loads(line[6:]))
                if len(events) == n:
                    return events
    return events


def test_events_new_launches_refresh_the_page_and_source_clicks_reach_it(viz, port):
    record_one(viz)
    url = viz.launch(share=False, port=port, block=False)
    from triton_lens.viz import server

    got = {}
    t = threading.Thread(target=lambda: got.setdefault("events", read_events(url, 3)), daemon=True)
    t.start()
    deadline = time.time() + 10
    while server.current().hub.subscribers == 0 and time.time() < deadline:
        time.sleep(0.02)
    record_one(viz)  # a new launch while the viewer runs: the page reloads its data
    hdr = {"Content-Type": "application/json"}
    get(url + "api/cursor", data=json.dumps({"file": kernels.__file__, "line": 14}).encode(), headers=hdr)
    get(url + "api/reveal", data=json.dumps({"file": kernels.__file__, "line": 17}).encode(), headers=hdr)
    t.join(15)
    assert got["events"] == [
        {"type": "refresh"},
        {"type": "cursor", "file": kernels.__file__, "line": 14},
        {"type": "reveal", "file": kernels.__file__, "line": 17},
    ]
    _, _, body = get(url + "api/kernels", data=b"{}", headers=hdr)
    assert [li["index"] for li in json.loads(body)["kernels"][0]["launches"]] == [0, 1]


def test_source_of_a_run_file_with_its_access_lines(viz, port):
    record_one(viz)
    url = viz.launch(share=False, port=port, block=False)
    _, headers, body = get(
        url + "api/source",
        data=json.dumps({"file": kernels.__file__}).encode(),
        headers={"Content-Type": "application/json", "Accept-Encoding": "gzip"},
    )
    import gzip

    src = json.loads(gzip.decompress(body) if headers.get("Content-Encoding") == "gzip" else body)
    assert src["text"] == open(kernels.__file__).read()
    from viz_kernels import LINES

    assert src["lines"] == [
        {"line": LINES["add.x"], "kinds": ["load"], "args": ["x_ptr"]},
        {"line": LINES["add.y"], "kinds": ["load"], "args": ["y_ptr"]},
        {"line": LINES["add.z"], "kinds": ["store"], "args": ["z_ptr"]},
    ]
    def_line = (
        open(kernels.__file__)
        .read()
        .splitlines()
        .index("def add_kernel(x_ptr, y_ptr, z_ptr, N, B: tl.constexpr):  # shared/corpus/vector_add.py")
        + 1
    )
    assert src["kernels"] == [{"name": "add_kernel", "line": def_line}]


def test_page_is_served_from_extension_webview_with_placeholders_filled(viz, port):
    url = viz.launch(share=False, port=port, block=False)
    _, headers, body = get(url + "view")
    html = body.decode()
    assert "{{" not in html and 'src="/static/viewer.js"' in html and "script-src 'nonce-" in html
    nonce = html.split("script-src 'nonce-")[1].split("'")[0]
    assert f'nonce="{nonce}"' in html and len(nonce) >= 16
    _, _, body2 = get(url + "view")
    assert nonce not in body2.decode()  # a fresh nonce per request
    from triton_lens.viz.webview import find_webview

    root = find_webview()
    assert root.name == "webview" and root.parent.name == "extension"  # the shared page, not a copy
    status, headers, js = get(url + "static/viewer.js")
    assert headers["Content-Type"].startswith("text/javascript") and js == (root / "viewer.js").read_bytes()
    for module in sorted(root.glob("*.js")):  # viewer.js imports its siblings: the whole folder is served
        _, headers, js = get(url + "static/" + module.name)
        assert headers["Content-Type"].startswith("text/javascript") and js == module.read_bytes(), module.name
    _, headers, _ = get(url + "static/viewer.css")
    assert headers["Content-Type"].startswith("text/css")


def test_installed_webview_location_is_used_when_present(tmp_path, monkeypatch):
    import shutil as sh

    from triton_lens.viz import webview

    checkout = webview.find_webview()
    # an installed package: triton_lens/_webview next to triton_lens/viz
    pkg = tmp_path / "site-packages" / "triton_lens"
    (pkg / "viz").mkdir(parents=True)
    sh.copytree(checkout, pkg / "_webview")
    monkeypatch.setattr(webview, "_HERE", pkg / "viz")
    monkeypatch.delenv("TRITON_LENS_WEBVIEW", raising=False)
    assert webview.find_webview() == pkg / "_webview"
    sh.rmtree(pkg / "_webview")
    assert webview.find_webview() is None
    with pytest.raises(FileNotFoundError, match="TRITON_LENS_WEBVIEW"):
        webview.require_webview()


def test_a_background_viewer_and_its_tunnel_end_with_the_script(tmp_path, fake_cloudflared):
    import subprocess
    import sys

    port = free_port()
    script = tmp_path / "s.py"
    script.write_text(
        "import os, sys\n"
        f"sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})\n"
        "import torch, triton_lens as triton_viz, viz_kernels as k\n"
        "add = triton_viz.trace('tracer')(k.add_kernel)\n"
        "x = torch.arange(64.0)\n"
        "add[(1,)](x, x, torch.zeros(64), 64, 64)\n"
        f"print(triton_viz.launch(share=True, port={port}, block=False), flush=True)\n"
        "from triton_lens.viz import server\n"
        "print(server.current().tunnel.proc.pid, flush=True)\n"
    )
    p = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), "..", "..", "server")),
    )
    assert p.returncode == 0, p.stderr[-2000:]
    lines = p.stdout.split()
    assert FAKE_URL + "/" in lines
    pid = int(lines[-1])
    time.sleep(0.2)
    with pytest.raises(ProcessLookupError):  # the fake cloudflared was stopped at exit
        os.kill(pid, 0)
