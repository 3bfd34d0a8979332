"""Analysis: pure functions from a recorded run (model.RunResult) to one record per access (records.py) and findings."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..model import AccessStats, Finding, RunResult
from ..model.remedies import PLAIN, Remedies, with_remedy
from .allocator import allocator_findings
from .autotune import autotune_findings
from .findings import all_findings
from .groups import Key, group_executions
from .performance import Performance, line_metrics, performance, sector_findings
from .precision import tf32_findings
from .records import AccessRecord, access_records


@dataclass
class Analysis:
    result: RunResult
    # One record per access (records.py): totals, hover facts, performance metrics; every front end reads it.
    records: list[AccessRecord] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    performance: Performance = field(default_factory=lambda: Performance([], [], []))
    _by_key: dict[Key, AccessRecord] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_key = {r.key: r for r in self.records}

    @property
    def accesses(self) -> list[AccessStats]:
        """The records' totals, in the table's order."""
        return [r.totals for r in self.records]

    def record_for(self, f: Finding) -> AccessRecord | None:
        """The record of the access a finding is at (an oob, race, unwritten ... finding names its argument
        and access kind); None for a finding at no access (an exception, a tl.dot, a timing note)."""
        if not (f.arg and f.access):
            return None
        return self._by_key.get((f.file, f.line, f.arg, f.access))

    def to_json(self) -> dict[str, Any]:
        r = self.result
        return {
            "file": r.file,
            "status": r.status,
            "triton": r.triton_version,
            "seconds": round(r.seconds, 3),
            "launches": [
                {
                    "kernel": L.kernel,
                    "grid": list(L.grid),
                    "file": L.file,
                    "line": L.line,
                    "def_file": L.def_file,
                    "def_line": L.def_line,
                    "complete": L.complete,
                    # an autotuned launch: the config kept (the one its accesses show) and every config tried
                    **({"autotune": L.autotune} if L.autotune is not None else {}),
                }
                for L in r.launches
            ],
            "accesses": [a.to_json() for a in self.accesses],
            "findings": [f.to_json() for f in self.findings],
            "error": r.error.to_json() if r.error else None,
            "performance": self.performance.to_json(),
            "cuda_standin": r.cuda_standin.to_json() if r.cuda_standin else None,
        }


def analyze(result: RunResult, remedies: Remedies = PLAIN) -> Analysis:
    """The run's per-access totals and findings; a stopped run's remedy in the front end's words (`remedies`)."""
    groups = group_executions(result.launches)
    lines = line_metrics(groups)
    perf = performance(result, lines)
    findings = (
        autotune_findings(result, all_findings(result, groups))
        + sector_findings(perf)
        + tf32_findings(result.launches)
        + allocator_findings(result.launches)
    )
    for f in findings:
        if f.remedy is not None:
            f.message = with_remedy(f.message, f.remedy, remedies)
    order = {"error": 0, "warning": 1, "information": 2}
    findings.sort(key=lambda f: (f.file, f.line, order.get(f.severity, 3), f.kind))
    return Analysis(
        result=result,
        records=access_records(groups, lines, findings),
        findings=findings,
        performance=perf,
    )
