"""The viewer service's LSP transport (`tritonLens/<method>`) through the real server over stdio:
every answer for corpus files matches the protocol's JSON Schema (server/triton_lens/viewer_protocol.schema.json),
and a request the service refuses is InvalidParams with the service's message."""

from __future__ import annotations

import pytest
from lsp_harness import CORPUS_FILE, Session, _plain, session_fixture
from protocol_schema import check, schema

pytestmark = pytest.mark.asyncio(loop_scope="module")

client = session_fixture({"debounceMs": 100, "timeLimit": 120})

INVALID_PARAMS = -32602


async def _open(session: Session, tmp_path, name: str) -> str:
    path = tmp_path / name
    path.write_text(CORPUS_FILE(name).read_text())
    uri = session.open(path)
    await session.finished_run(uri, 1)
    return uri


async def ask(session: Session, method: str, params: dict) -> dict:
    return _plain(await session.request(f"tritonLens/{method}", params))


async def test_the_lsp_methods_are_the_schemas():
    from triton_lens.lsp.viewer_requests import LSP_METHODS

    assert {m for m, e in schema()["methods"].items() if "lsp" in e} == set(LSP_METHODS)
    assert all(schema()["methods"][m]["lsp"] == f"tritonLens/{m}" for m in LSP_METHODS)


@pytest.mark.parametrize("name", ["matmul.py", "oob_missing_mask.py"])
async def test_every_lsp_answer_matches_the_schema(session: Session, tmp_path, name):
    uri = await _open(session, tmp_path, name)
    ov = await ask(session, "kernels", {"uri": uri})
    check("kernels", "result", ov)
    assert ov["status"] == "ok" and ov["version"] == 1 and ov["stale"] is False and ov["running"] is False
    launches = [li for k in ov["kernels"] for li in k["launches"]]
    assert launches
    for li in launches:
        for method in ("dots", "performance"):
            check(method, "result", await ask(session, method, {"uri": uri, "launch": li["index"]}))
        dots = await ask(session, "dots", {"uri": uri, "launch": li["index"]})
        for e in range(min(2, len(dots["executions"]))):
            tiles = await ask(session, "dotTiles", {"uri": uri, "launch": li["index"], "execution": e})
            check("dotTiles", "result", tiles)
            assert tiles["kept"] and tiles["c"]["shape"] == dots["executions"][e]["c"]
        for t in li["tensors"]:
            p = {"uri": uri, "launch": li["index"], "tensor": t["index"]}
            amap = await ask(session, "accessMap", p)
            check("accessMap", "result", amap)
            assert amap["tensor"]["name"] == t["name"]
            check("values", "result", await ask(session, "values", {**p, "start": 0, "count": 8}))
            for when in ("after", "before"):
                check("valueMap", "result", await ask(session, "valueMap", {**p, "when": when}))
    session.close(uri)


async def test_kernels_of_a_document_that_is_not_open_matches_the_schema(session: Session):
    ov = await ask(session, "kernels", {"uri": "file:///not/open.py"})
    check("kernels", "result", ov)
    assert ov["status"] == "not-open" and ov["kernels"] == []


@pytest.mark.parametrize(
    "method,params,message",
    [
        ("accessMap", {"launch": 0, "tensor": 7}, "launch 0 has no tensor 7"),
        ("accessMap", {"launch": 0.5, "tensor": 0}, "launch must be an integer"),
        ("values", {"launch": 4, "tensor": 0}, "no launch 4"),
        ("valueMap", {"launch": 0, "tensor": 0, "when": "later"}, 'when must be "after" or "before"'),
        ("dots", {}, "missing parameter 'launch'"),
    ],
)
async def test_refused_requests_are_invalid_params_with_the_services_message(
    session: Session, tmp_path, method, params, message
):
    uri = await _open(session, tmp_path, "vector_add.py")
    with pytest.raises(Exception) as info:
        await session.request(f"tritonLens/{method}", {"uri": uri, **params})
    assert getattr(info.value, "code", None) == INVALID_PARAMS and message in str(info.value), repr(info.value)
    session.close(uri)
