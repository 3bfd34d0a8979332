"""The viewer service (analysis/viewer_service.py) on real runs of corpus files: every answer it
gives for every launch and tensor matches the protocol's JSON Schema, bad parameters get one error
type with a message and a status, and the expensive answers are computed once per launch."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest
from jsonschema import Draft202012Validator
from markers import CORPUS
from protocol_schema import check, schema
from recorded import recorded

from triton_lens.analysis import viewer_service as vs
from triton_lens.analysis.viewer_service import ViewerRequestError, ViewerService

FILES = ["matmul.py", "attention_4d.py", "oob_missing_mask.py", "multi_launch.py", "vector_add.py"]


@pytest.fixture(scope="module")
def results():
    out = {}
    for name in FILES:
        r = recorded(CORPUS / name)
        assert r.launches, name
        out[name] = r
    return out


def requests_of(result):
    """Every request the page makes for this run (and the host page's source of each file)."""
    yield "kernels", {}
    for L in result.launches:
        for m in ("dots", "performance"):
            yield m, {"launch": L.index}
        for e in range(len(L.dots)):  # a file with no tl.dot asks none: the method must be seen elsewhere
            yield "dotTiles", {"launch": L.index, "execution": e}
        for t in range(len(L.tensors)):
            yield "accessMap", {"launch": L.index, "tensor": t}
            yield "values", {"launch": L.index, "tensor": t, "start": 0, "count": 256}
            yield "valueMap", {"launch": L.index, "tensor": t, "when": "after"}
            yield "valueMap", {"launch": L.index, "tensor": t, "when": "before"}
    for f in vs.files(result):
        yield "source", {"file": f}


def test_the_schema_is_a_valid_schema_and_names_every_method():
    Draft202012Validator.check_schema(schema())
    assert tuple(schema()["methods"]) == vs.METHODS
    for m, entry in schema()["methods"].items():
        for part in ("params", "result"):
            name = entry[part].rsplit("/", 1)[-1]
            assert name in schema()["$defs"], (m, part)


@pytest.mark.parametrize("name", FILES)
def test_every_answer_for_a_corpus_file_matches_the_schema(results, name):
    service = ViewerService.from_result(results[name])
    seen = set()
    for method, params in requests_of(results[name]):
        check(method, "params", params)
        answer = service.request(method, params)
        check(method, "result", answer)
        # what the HTTP transport sends is the same answer, as JSON (no NaN, nothing non-JSON)
        assert json.loads(service.request_json(method, params)) == answer
        seen.add(method)
    has_dots = any(len(L.dots) for L in results[name].launches)
    assert seen == set(vs.METHODS) - (set() if has_dots else {"dotTiles"})


def test_the_schema_catches_a_broken_answer(results):
    # The check is no formality: answers with a field missing or of the wrong type fail it.
    service = ViewerService.from_result(results["matmul.py"])
    amap = copy.deepcopy(service.request("accessMap", {"launch": 0, "tensor": 0}))
    del amap["accesses"][0]["touched"]
    with pytest.raises(jsonschema.ValidationError):
        check("accessMap", "result", amap)
    dots = copy.deepcopy(service.request("dots", {"launch": 0}))
    dots["executions"][0]["a"]["linked"] = "yes"
    with pytest.raises(jsonschema.ValidationError):
        check("dots", "result", dots)
    ov = copy.deepcopy(service.request("kernels", {}))
    ov["kernels"][0]["launches"][0]["grid"] = "2x2"
    with pytest.raises(jsonschema.ValidationError):
        check("kernels", "result", ov)


def test_matmul_answers_say_what_ran(results):
    service = ViewerService.from_result(results["matmul.py"])
    ov = service.request("kernels")
    (k,) = ov["kernels"]
    assert k["name"] == "matmul_kernel" and [t["name"] for t in k["launches"][0]["tensors"]] == [
        "a_ptr",
        "b_ptr",
        "c_ptr",
    ]
    assert ov["files"] == [results["matmul.py"].file]
    dots = service.request("dots", {"launch": 0})
    assert dots["executions"] and dots["executions"][0]["a"]["name"] == "a_ptr"
    vals = service.request("values", {"launch": 0, "tensor": 0, "count": 3})
    assert vals["start"] == 0 and len(vals["values"]) == 3


@pytest.mark.parametrize(
    "method,params,status,message",
    [
        ("accessMap", {"tensor": 0}, 400, "missing parameter 'launch'"),
        ("accessMap", {"launch": 0}, 400, "missing parameter 'tensor'"),
        ("accessMap", {"launch": True, "tensor": 0}, 400, "launch must be an integer"),
        ("accessMap", {"launch": 0.5, "tensor": 0}, 400, "launch must be an integer"),
        ("accessMap", {"launch": float("inf"), "tensor": 0}, 400, "launch must be an integer"),
        ("accessMap", {"launch": "0", "tensor": 0}, 400, "launch must be an integer"),
        ("accessMap", {"launch": 0, "tensor": 0, "line": "x"}, 400, "line must be an integer"),
        ("accessMap", {"launch": 9, "tensor": 0}, 404, "no launch 9"),
        ("accessMap", {"launch": 0, "tensor": 3}, 404, "launch 0 has no tensor 3"),
        ("values", {"launch": 0, "tensor": -1}, 404, "launch 0 has no tensor -1"),
        ("values", {"launch": 0, "tensor": 0, "count": "many"}, 400, "count must be an integer"),
        ("valueMap", {"launch": 0, "tensor": 0, "when": "during"}, 400, 'when must be "after" or "before"'),
        ("dots", {}, 400, "missing parameter 'launch'"),
        ("dotTiles", {"launch": 0}, 400, "missing parameter 'execution'"),
        ("dotTiles", {"launch": 0, "execution": 99}, 404, "launch 0 has no tl.dot execution 99"),
        ("performance", {"launch": 2}, 404, "no launch 2"),
        ("source", {"file": "/etc/passwd"}, 404, "is not a file of this run"),
        ("source", {}, 400, "file must be a non-empty string"),
        ("kernels", [1, 2], 400, "must be a JSON object"),
        ("steal", {}, 404, "unknown method steal"),
    ],
)
def test_bad_parameters_are_one_error_with_a_message(results, method, params, status, message):
    service = ViewerService.from_result(results["matmul.py"])
    with pytest.raises(ViewerRequestError) as info:
        service.request(method, params)
    assert info.value.status == status and message in str(info.value), (info.value.status, str(info.value))


def test_values_defaults_and_clamps(results):
    service = ViewerService.from_result(results["vector_add.py"])
    assert service.request("values", {"launch": 0, "tensor": 0}) == service.request(
        "values", {"launch": 0, "tensor": 0, "start": 0, "count": 256}
    )
    big = service.request("values", {"launch": 0, "tensor": 0, "start": -5, "count": 10**9})
    assert big["start"] == 0 and len(big["values"]) == min(results["vector_add.py"].launches[0].tensors[0].numel, 4096)


def test_expensive_answers_are_computed_once_per_launch(results):
    r = results["matmul.py"]
    cache = vs.ViewerCache()
    service = ViewerService.from_result(r, cache)
    a = service.request("accessMap", {"launch": 0, "tensor": 1})
    assert cache.computed == 1
    assert service.request("accessMap", {"launch": 0.0, "tensor": 1}) is a  # the same validated request
    gz = service.request_json("accessMap", {"launch": 0, "tensor": 1}, compressed=True)
    assert service.request_json("accessMap", {"launch": 0, "tensor": 1}, compressed=True) is gz
    assert cache.computed == 1
    service.request("valueMap", {"launch": 0, "tensor": 1})
    service.request("valueMap", {"launch": 0, "tensor": 1, "when": "before"})
    assert cache.computed == 3
    # another run (new launch objects) sharing the cache gets its own answers
    other = ViewerService.from_result(results["oob_missing_mask.py"], cache)
    b = other.request("accessMap", {"launch": 0, "tensor": 1})
    assert b is not a and cache.computed == 4


def test_the_cache_is_bounded_and_forgets_the_least_recently_used(results):
    r = results["matmul.py"]
    cache = vs.ViewerCache(entries=2)
    service = ViewerService.from_result(r, cache)
    first = service.request("accessMap", {"launch": 0, "tensor": 0})
    service.request("accessMap", {"launch": 0, "tensor": 1})
    assert service.request("accessMap", {"launch": 0, "tensor": 0}) is first  # used again: kept
    service.request("accessMap", {"launch": 0, "tensor": 2})  # evicts tensor 1
    assert len(cache) == 2 and cache.computed == 3
    service.request("accessMap", {"launch": 0, "tensor": 0})
    assert cache.computed == 3
    service.request("accessMap", {"launch": 0, "tensor": 1})
    assert cache.computed == 4


def test_the_cache_keeps_no_finished_run_alive(results):
    import gc
    import weakref

    from triton_lens.model import RunResult

    cache = vs.ViewerCache()
    src = results["vector_add.py"]
    L = copy.copy(src.launches[0])  # a run of its own, as the language server's next run would be
    gone = weakref.ref(L)
    ViewerService.from_result(RunResult(file=src.file, status=src.status, launches=[L]), cache).request(
        "accessMap", {"launch": L.index, "tensor": 0}
    )
    del L
    gc.collect()
    assert gone() is None  # the cached answer did not hold its launch
    ViewerService.from_result(results["matmul.py"], cache).request("dots", {"launch": 0})
    assert len(cache) == 1  # the dead run's answer made room
