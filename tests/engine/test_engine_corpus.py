"""Every `# expect:` marker of shared/corpus holds, on the triton release this venv runs."""

from __future__ import annotations

import pytest
import triton
from markers import CORPUS, CorpusFile, Expect, corpus_files

from triton_lens.analysis import analyze
from triton_lens.trace_engine.process.runner import RunRequest, run

pytestmark = pytest.mark.engine

FILES = corpus_files()
HANG_LIMIT_S = 8.0  # hangs_after_launch.py sleeps forever; the other files finish in a few seconds


def test_corpus_is_there():
    assert CORPUS.is_dir(), f"the project's corpus is expected at {CORPUS}"
    assert len(FILES) >= 20


_cache: dict[str, object] = {}


def analysed(cf: CorpusFile):
    if cf.name not in _cache:
        timeout = HANG_LIMIT_S if any(e.kind == "timeout" for e in cf.expects) else 120.0
        _cache[cf.name] = analyze(run(RunRequest(path=str(cf.path), timeout_s=timeout)))
    return _cache[cf.name]


def _accesses(a, e: Expect):
    return [s for s in a.accesses if s.line == e.line and s.file == a.result.file and s.arg == e.words[-1]]


def _findings(a, kind: str, e: Expect):
    return [
        f
        for f in a.findings
        if f.kind == kind and f.line == e.line and f.file == a.result.file and (not e.words or f.arg == e.words[-1])
    ]


def check(a, e: Expect) -> None:
    r = a.result
    if e.kind == "stats":
        rows = _accesses(a, e)
        assert rows, f"no access recorded at {e}; recorded lines: {sorted({(s.line, s.arg) for s in a.accesses})}"
        got = [{k: getattr(s, k) for k in e.keys} for s in rows]
        assert e.keys in got, f"{e}: recorded {got}"
    elif e.kind == "launches":
        rows = [s for s in a.accesses if s.line == e.line and s.file == r.file]
        assert rows and all(s.launches == e.keys["launches"] for s in rows), (
            f"{e}: recorded {[(s.arg, s.launches) for s in rows]}"
        )
    elif e.kind == "oob":
        kind, arg = e.words
        found = [f for f in _findings(a, "oob", e) if f.access == kind]
        assert found, f"{e}: findings {[(f.kind, f.line, f.arg) for f in a.findings]}"
        f = found[0]
        assert f.severity == "error"
        assert (f.lanes, f.programs) == (e.keys["lanes"], e.keys["programs"]), f"{e}: got {f.lanes}, {f.programs}"
        assert f.arg in f.message and str(f.lanes) in f.message
    elif e.kind == "race":
        found = _findings(a, "race", e)
        assert found, f"{e}: findings {[(f.kind, f.line, f.arg) for f in a.findings]}"
        assert found[0].severity in ("warning", "error")
        if "programs" in e.keys:
            assert found[0].programs == e.keys["programs"], f"{e}: got {found[0].programs}"
    elif e.kind == "dead":
        found = _findings(a, "dead", e)
        assert found and found[0].severity == "warning", f"{e}: findings {a.findings}"
    elif e.kind == "unwritten":
        found = _findings(a, "unwritten", e)
        assert found and found[0].severity in ("information", "warning"), f"{e}: findings {a.findings}"
        assert found[0].elements == e.keys["elements"], f"{e}: got {found[0].elements}"
    elif e.kind == "uninit":
        kind, arg = e.words
        found = [f for f in _findings(a, "uninit", e) if f.access == kind]
        assert found, f"{e}: findings {[(f.kind, f.line, f.arg) for f in a.findings]}"
        assert found[0].severity == "error"
        assert found[0].elements == e.keys["elements"], f"{e}: got {found[0].elements}"
    elif e.kind in ("oob-sizes", "overrun"):
        kind, arg = e.words
        found = [f for f in _findings(a, e.kind, e) if f.access == kind]
        assert found, f"{e}: findings {[(f.kind, f.line, f.arg) for f in a.findings]}"
        assert found[0].severity == "warning", found[0]
        if "programs" in e.keys:
            assert found[0].programs == e.keys["programs"], f"{e}: got {found[0].programs}"
        assert arg in found[0].message
        if e.kind == "oob-sizes":  # one concrete failing size, confirmed by a run at that size
            assert found[0].witness.get("size") and found[0].witness["size"] in found[0].message, found[0]
            assert "confirmed by running" in found[0].message
    elif e.kind == "wrap":
        found = _findings(a, "wrap", e)
        assert found, f"{e}: findings {[(f.kind, f.line, f.arg) for f in a.findings]}"
        f = found[0]
        assert f.severity == "warning"
        op = f.witness.get("op") or {}
        assert op.get("text") and f"`{op['text']}`" in f.message, f  # names the operation that overflows
        assert "overflows int32" in f.message and "confirmed by running" in f.message
    elif e.kind == "exception":
        assert r.status == "exception" and r.error.type == e.words[0], (r.status, r.error)
        found = [f for f in a.findings if f.kind == "exception" and f.line == e.line]
        assert found and found[0].severity == "error" and e.words[0] in found[0].message
    elif e.kind == "timeout":
        assert r.status == "timeout", (r.status, r.error)
        assert any(f.kind == "timeout" for f in a.findings)
    elif e.kind == "no-launch":
        assert r.status == "no-launch" and not r.launches
        assert any(f.kind == "no-launch" for f in a.findings)
    elif e.kind == "clean":
        bad = [f"{f.line}: {f.severity} {f.message}" for f in a.findings if f.severity in ("error", "warning")]
        assert not bad, bad
        assert r.status == "ok", (r.status, r.error)
    else:
        raise AssertionError(f"unknown expectation {e}")
    if e.severity is not None:
        kind = e.kind
        sev = [f.severity for f in _findings(a, kind, e)]
        assert e.severity in sev, f"{e}: severity {e.severity} expected, got {sev}"


# A file whose `# requires:` excludes this release is checked by the other release `make test` runs
# (block pointers on 3.2, tensor descriptors on 3.9).
CASES = [
    pytest.param(cf, e, id=f"{cf.name}:{e.line}:{e.kind}:{'-'.join(e.words)}")
    for cf in FILES
    if cf.applies_to(triton.__version__)
    for e in cf.expects
]


@pytest.mark.parametrize("cf,e", CASES)
def test_marker(cf: CorpusFile, e: Expect):
    check(analysed(cf), e)


def test_every_file_has_markers_checked():
    assert all(cf.expects for cf in FILES), [cf.name for cf in FILES if not cf.expects]
