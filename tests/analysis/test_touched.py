"""One access launched several times has one extent and one count of distinct elements, the same in the
CLI table, the inlay hint (label and tooltip), the hover and --json, all read from the access's one record
(analysis/records.py). They once disagreed: the table showed the first launch's `x_ptr[0:128]`, the hint
the union `x_ptr[0:256]`; then the hint's tooltip called the union's count "per launch, summed" (128 for
the same half loaded twice) where the hover said "128 unique elements of 256"."""

import io
from pathlib import Path
from types import SimpleNamespace

import pytest
from recorded import recorded

from triton_lens.analysis import analyze
from triton_lens.lsp.hints import line_hint
from triton_lens.lsp.hover import line_markdown
from triton_lens.report.text import write_table

CASES = Path(__file__).with_name("touched_cases.py")


def _line(marker: str) -> int:
    (n,) = [i for i, t in enumerate(CASES.read_text().splitlines(), 1) if t.rstrip().endswith(f"# {marker}")]
    return n


@pytest.fixture(scope="module")
def analysis():
    return analyze(recorded(CASES))


@pytest.mark.parametrize(
    ("marker", "extent", "unique"),
    [("halves", "x_ptr[0:256]", 256), ("same half", "x_ptr[0:128]", 128)],
)
def test_table_hint_and_hover_agree_on_an_access_launched_twice(analysis, marker, extent, unique):
    (r,) = [r for r in analysis.records if r.totals.line == _line(marker) and r.totals.kind == "load"]
    s = r.totals
    assert (s.launches, s.extent, s.unique) == (2, extent, unique)

    table = io.StringIO()
    write_table(SimpleNamespace(analysis=analysis, target=SimpleNamespace(path=str(CASES))), table)  # a checked file
    rows = [r for r in table.getvalue().splitlines() if r.split()[:3] == [str(s.line), "load", "x_ptr"]]
    assert len(rows) == 1 and rows[0].endswith(f"  {extent}") and f" {unique} " in rows[0], table.getvalue()

    label, tooltip = line_hint([r])
    assert label.startswith(f"{extent} · ")
    assert f"| elements | `{extent}` |" in tooltip and f"| unique elements | {unique} of 256 |" in tooltip, tooltip
    hover = line_markdown([r])
    assert f"- touched, all programs over 2 launches: `{extent}` — {unique} unique elements of 256" in hover, hover

    (js,) = [a for a in analysis.to_json()["accesses"] if (a["line"], a["arg"], a["kind"]) == (s.line, "x_ptr", "load")]
    assert (js["extent"], js["unique"], js["bytes"], js["oob"]) == (extent, unique, s.bytes, s.oob)
