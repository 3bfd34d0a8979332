"""A finding at an access takes the call's range from one constructor (model.Finding.at), whatever holds it:
a recorded Site, the site's JSON (the size check's and the allocator's records), performance's LineMetrics."""

from triton_lens.analysis.performance import LineMetrics
from triton_lens.model import Finding, Site

SITE = Site("/k.py", 7, 4, 8, 30, 0, "load", "tl.load")
RANGE = {"file": "/k.py", "line": 7, "col": 4, "end_line": 8, "end_col": 30}


def _range(f: Finding) -> dict:
    return {k: getattr(f, k) for k in RANGE}


def test_a_finding_at_a_site_its_json_or_its_metrics_has_the_calls_range():
    metrics = LineMetrics(file="/k.py", line=7, arg="x", kind="load", op="tl.load", col=4, end_line=8, end_col=30)
    for where in (SITE, SITE.to_json(), metrics):
        f = Finding.at(where, kind="oob", severity="error", message="m", arg="x", access="load")
        assert _range(f) == RANGE and (f.kind, f.arg, f.access, f.message) == ("oob", "x", "load", "m")
