"""The viewer service's HTTP transport (`POST /api/<method>`): every answer for corpus files, through
Flask's test client, and the real launch() server's, match the protocol's JSON Schema
(server/triton_lens/viewer_protocol.schema.json); refused requests are 400/404 with the Error body."""

import gzip
import json

import pytest
from markers import CORPUS
from protocol_schema import check, check_error, schema
from test_viewer_guards import JSON, request, served  # noqa: F401  (a fixture)

from triton_lens.analysis.viewer_service import ViewerService, files
from triton_lens.trace_engine.process.runner import RunRequest, run
from triton_lens.viz.app import create_app


@pytest.fixture(scope="module", params=["matmul.py", "attention_4d.py", "oob_missing_mask.py"])
def app_of(request):
    result = run(RunRequest(path=str(CORPUS / request.param), timeout_s=120.0))
    assert result.status == "ok", result.error
    return result, create_app(ViewerService.from_result(result)).test_client()


def post(client, method, body, gz=False):
    r = client.post(f"/api/{method}", json=body, headers={"Accept-Encoding": "gzip"} if gz else {})
    data = r.get_data()
    if r.headers.get("Content-Encoding") == "gzip":
        data = gzip.decompress(data)
    return r.status_code, json.loads(data)


def test_every_http_route_is_a_method_of_the_schema():
    assert all(e["http"] == f"POST /api/{m}" for m, e in schema()["methods"].items())


def test_every_http_answer_for_a_corpus_file_matches_the_schema(app_of):
    result, client = app_of
    status, ov = post(client, "kernels", {})
    assert status == 200
    check("kernels", "result", ov)
    assert ov["files"] == files(result)
    for k in ov["kernels"]:
        for li in k["launches"]:
            for method in ("dots", "performance"):
                status, body = post(client, method, {"launch": li["index"]})
                assert status == 200
                check(method, "result", body)
            status, dots = post(client, "dots", {"launch": li["index"]})
            for e in range(min(2, len(dots["executions"]))):
                status, tiles = post(client, "dotTiles", {"launch": li["index"], "execution": e})
                assert status == 200 and tiles["kept"]
                check("dotTiles", "result", tiles)
            for t in li["tensors"]:
                p = {"launch": li["index"], "tensor": t["index"]}
                for gz in (False, True):
                    status, amap = post(client, "accessMap", p, gz=gz)
                    assert status == 200
                    check("accessMap", "result", amap)
                status, vals = post(client, "values", {**p, "start": 0, "count": 16})
                assert status == 200
                check("values", "result", vals)
                for when in ("after", "before"):
                    status, vm = post(client, "valueMap", {**p, "when": when})
                    assert status == 200
                    check("valueMap", "result", vm)
    for f in ov["files"]:
        status, src = post(client, "source", {"file": f})
        assert status == 200
        check("source", "result", src)


@pytest.mark.parametrize(
    "method,body,status,message",
    [
        ("accessMap", {"launch": 0, "tensor": 99}, 404, "launch 0 has no tensor 99"),
        ("accessMap", {"launch": 0}, 400, "missing parameter 'tensor'"),
        ("values", {"launch": 0, "tensor": 0, "count": 1.5}, 400, "count must be an integer"),
        ("valueMap", {"launch": 0, "tensor": 0, "when": 3}, 400, 'when must be "after" or "before"'),
        ("dots", {"launch": 12}, 404, "no launch 12"),
        ("performance", [0], 400, "must be a JSON object"),
        ("source", {"file": "/etc/passwd"}, 404, "is not a file of this run"),
        ("nothing", {}, 404, "no such request: /api/nothing"),
    ],
)
def test_refused_requests_are_the_error_body(app_of, method, body, status, message):
    _, client = app_of
    got_status, got = post(client, method, body)
    check_error(got)
    assert got_status == status and message in got["error"]["message"], (got_status, got)


def test_the_real_server_answers_match_the_schema(served):  # noqa: F811
    status, _, body = request(served, "POST", "/api/kernels", b"{}", JSON)
    assert status == 200
    ov = json.loads(body)
    check("kernels", "result", ov)
    (li,) = [li for k in ov["kernels"] for li in k["launches"]]
    for t in li["tensors"]:
        status, headers, body = request(
            served, "POST", "/api/accessMap", json.dumps({"launch": li["index"], "tensor": t["index"]}).encode(), JSON
        )
        assert status == 200
        check("accessMap", "result", json.loads(body))
    status, _, body = request(served, "POST", "/api/performance", b'{"launch": 0}', JSON)
    assert status == 200
    check("performance", "result", json.loads(body))
    status, _, body = request(served, "POST", "/api/values", b'{"launch": 0, "tensor": "x"}', JSON)
    assert status == 400
    check_error(json.loads(body))
