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
