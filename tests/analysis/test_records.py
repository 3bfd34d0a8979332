"""One record per access (analysis/records.py): its totals, hover facts and performance metrics are built once
from the same group, and a finding at an access reaches that record (Analysis.record_for)."""

from pathlib import Path

import pytest
from recorded import recorded

from triton_lens.analysis import analyze

CASES = Path(__file__).with_name("records_cases.py")


def _line(marker: str) -> int:
    (n,) = [i for i, t in enumerate(CASES.read_text().splitlines(), 1) if t.rstrip().endswith(f"# {marker}")]
    return n


@pytest.fixture(scope="module")
def analysis():
    return analyze(recorded(CASES))


def test_each_access_has_one_record_whose_parts_are_of_that_access(analysis):
    assert [r.totals for r in analysis.records] == analysis.accesses
    assert sorted((r.totals.line, r.totals.arg, r.totals.kind) for r in analysis.records) == [
        (_line("past the end"), "x_ptr", "load"),
        (_line("in bounds"), "y_ptr", "store"),
    ]
    for r in analysis.records:
        t = r.totals
        assert r.key == (t.file, t.line, t.arg, t.kind)
        assert r.perf is not None and (r.perf.file, r.perf.line, r.perf.arg, r.perf.kind) == r.key
        assert r.facts is not None and r.facts.totals is t  # the hover's numbers are the table's, not a copy
        assert r.facts is r.facts  # built once


def test_a_finding_at_an_access_reaches_its_record(analysis):
    (oob,) = [f for f in analysis.findings if f.kind == "oob"]
    r = analysis.record_for(oob)
    assert r is not None and (r.totals.line, r.totals.arg, r.totals.kind) == (_line("past the end"), "x_ptr", "load")
    assert r.totals.oob == oob.lanes == 2 * 28  # both launches' lanes past element 99
    assert r.flagged and r.facts is not None and r.facts.oob_offsets[0] == 100
    (store,) = [r for r in analysis.records if r.totals.kind == "store"]
    assert not store.flagged and store.totals.oob == 0


def test_a_finding_at_no_access_has_no_record(analysis):
    from dataclasses import replace

    f = analysis.findings[0]
    assert analysis.record_for(replace(f, arg="", access="")) is None
    assert analysis.record_for(replace(f, line=f.line + 1000)) is None


def test_a_view_shows_diagnostics_and_hints_before_any_hover_fact_is_computed():
    # lsp/view.py: a partial view is handed to the editor first and its hovers follow (add_hovers); its inlay
    # hints' tooltips are read from the record's totals and reach, so the facts (maps, first programs: the
    # costly part) are computed only for the hovers, and those equal the ones a view built at once has.
    from triton_lens.lsp.runplan import plan
    from triton_lens.lsp.settings import Settings
    from triton_lens.lsp.view import PartialInfo, add_hovers, build_view

    text = CASES.read_text()
    result = recorded(CASES)
    p = plan(str(CASES), text, Settings(), [str(CASES.parent)])
    info = PartialInfo("k", 0, 1, 2)
    quick = build_view(1, text, result, analyze(result), p, partial=info, hovers=False)
    assert quick.hints and quick.hovers == {}
    assert not any("facts" in vars(r) for r in quick.analysis.records)  # (functools.cached_property's slot)
    whole = build_view(1, text, result, analyze(result), p, partial=info)
    add_hovers(quick)
    assert quick.hints == whole.hints
    md = lambda v: {ln: [s.markdown for s in spots] for ln, spots in v.hovers.items()}  # noqa: E731
    assert md(quick) == md(whole) and all(m.startswith("*partial") for ms in md(quick).values() for m in ms)
