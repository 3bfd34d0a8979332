"""The viewer listens on 127.0.0.1, and a web page in the user's browser cannot reach past that:
not by DNS rebinding (a foreign Host), not by a cross-site POST (no JSON content type, a foreign
Origin, parameters in the query string), not by framing the page. launch() is local unless asked."""

import http.client
import json

import pytest
from test_server import FAKE_URL, fake_cloudflared, record_one  # noqa: F401  (a fixture)


def request(port, method, path, body=None, headers=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        c.close()


JSON = {"Content-Type": "application/json"}


@pytest.fixture
def served(viz, port):
    record_one(viz)
    viz.launch(share=False, port=port, block=False)
    return port


@pytest.mark.parametrize(
    "host", ["attacker.example", "attacker.example:{port}", "127.0.0.1:1", "localhost.evil:{port}"]
)
def test_a_foreign_host_gets_nothing(served, host):
    host = host.format(port=served)
    for method, path, body in (
        ("GET", "/", None),
        ("GET", "/view", None),
        ("POST", "/api/source", b"{}"),
        ("POST", "/api/kernels", b"{}"),
        ("GET", "/api/events", None),
    ):
        status, _, text = request(served, method, path, body, {"Host": host, **JSON})
        assert status == 403, (method, path, status)
        assert b"open http://127.0.0.1" in text and b"add_kernel" not in text


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}"])
def test_the_local_names_are_served(served, host):
    status, _, body = request(served, "POST", "/api/kernels", b"{}", {"Host": host.format(port=served), **JSON})
    assert status == 200 and json.loads(body)["kernels"][0]["name"] == "add_kernel"


def test_a_cross_site_simple_post_is_refused(served):
    # What an HTML form on another site can send without a preflight: form-encoded or text/plain.
    for ctype in ("application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x"):
        status, _, _ = request(
            served, "POST", "/api/cursor?file=/x.py&line=3", b"file=/x.py&line=3", {"Content-Type": ctype}
        )
        assert status == 415, ctype
    status, _, _ = request(
        served, "POST", "/api/cursor", b'{"file": "/x.py", "line": 3}', {"Origin": "https://attacker.example", **JSON}
    )
    assert status == 403
    status, _, body = request(served, "POST", "/api/cursor?file=/x.py&line=3", b"{}", JSON)
    assert status == 400 and b"line" in body  # query-string parameters are not read


def test_the_pages_own_origin_may_post(served):
    status, _, _ = request(
        served, "POST", "/api/cursor", b'{"file": "/x.py", "line": 3}', {"Origin": f"http://127.0.0.1:{served}", **JSON}
    )
    assert status == 200


def test_pages_cannot_be_framed_by_other_sites(served):
    for path in ("/", "/view"):
        status, headers, _ = request(served, "GET", path)
        assert status == 200
        assert headers["x-frame-options"] == "SAMEORIGIN"
        assert "frame-ancestors 'self'" in headers["content-security-policy"]


def test_launch_without_share_is_local_only(viz, port, fake_cloudflared):  # noqa: F811
    record_one(viz)
    import threading

    from triton_lens.viz import server

    # No share argument (the port only because other tests may hold 5001); it blocks, as in a script.
    t = threading.Thread(target=lambda: viz.launch(port=port), daemon=True)
    t.start()
    import time

    deadline = time.time() + 20
    while server.current() is None and time.time() < deadline:
        time.sleep(0.05)
    s = server.current()
    assert s is not None and s.tunnel is None and s.public_url is None
    assert not fake_cloudflared.exists()  # cloudflared was never started
    viz.stop()
    t.join(10)


def test_share_true_warns_that_anyone_with_the_link_sees_the_data(viz, port, fake_cloudflared, capsys):  # noqa: F811
    record_one(viz)
    url = viz.launch(share=True, port=port, block=False)
    assert url == FAKE_URL + "/"
    err = capsys.readouterr().err
    assert "anyone with this link" in err
    # The tunnel forwards the public host name: that one is served too.
    status, _, _ = request(port, "POST", "/api/kernels", b"{}", {"Host": FAKE_URL.split("//")[1], **JSON})
    assert status == 200


@pytest.mark.parametrize(
    "body",
    [
        b'{"launch": 1e400, "tensor": 0}',
        b'{"launch": 0.5, "tensor": 0}',
        b'{"launch": true, "tensor": 0}',
        b'{"launch": "x", "tensor": 0}',
    ],
)
def test_a_launch_that_is_no_integer_is_a_400(served, body):
    status, _, text = request(served, "POST", "/api/accessMap", body, JSON)
    assert status == 400 and b"launch must be an integer" in text, (status, text)


@pytest.mark.parametrize("path", ["/api/kernels", "/api/reveal"])
def test_a_deeply_nested_body_is_a_json_400_not_a_500_page(served, path):
    body = b"[" * 100_000 + b"]" * 100_000
    status, headers, text = request(served, "POST", path, body, JSON)
    assert status == 400 and headers["content-type"].startswith("application/json"), (status, text[:200])
    assert "JSON" in json.loads(text)["error"]["message"]


def test_a_body_larger_than_any_request_is_refused_before_it_is_read(served):
    # 200 MB announced; the server answers 413 in JSON without reading (or holding) it.
    c = http.client.HTTPConnection("127.0.0.1", served, timeout=30)
    try:
        c.putrequest("POST", "/api/kernels")
        c.putheader("Content-Type", "application/json")
        c.putheader("Content-Length", str(200 << 20))
        c.endheaders()
        c.send(b"{" + b" " * (1 << 20))
        r = c.getresponse()
        status, ctype, text = r.status, r.getheader("Content-Type"), r.read()
    finally:
        c.close()
    assert status == 413 and ctype.startswith("application/json"), (status, text[:200])
    assert "MB" in json.loads(text)["error"]["message"]
