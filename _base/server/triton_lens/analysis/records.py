"""One record per access site (file, line, argument, kind), built once by `analyze()`: its totals
(stats.py), its performance metrics (performance.py) and its hover facts (hover.py, computed on first
use: the CLI never reads them). The CLI table and --json read its totals; the inlay hint, the hover, the
diagnostics and the profiler client the record, so that they cannot disagree on one access; a finding at
an access reaches its record through `Analysis.record_for`, never through a key rebuilt by a front end.
`flagged` is of the run's findings as analysed (a partial view shows fewer, lsp/view.py, but the hover
still claims no size in bounds where the full list has the access out of bounds)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from ..model import AccessStats, Finding, TensorInfo
from .groups import Group, Key
from .hover import FIRST_PROGRAMS, AccessFacts, access_facts_of, sizes_checked
from .performance import LineMetrics
from .stats import access_totals
from .touched import Touched, touched

# Findings that say the access leaves its tensor: where one stands, the hover does not claim the size
# check's other sizes stayed in bounds (the diagnostic says what they found).
OUT_OF_BOUNDS = ("oob", "oob-sizes", "wrap")


@dataclass(eq=False)
class AccessRecord:
    key: Key  # (file, line, arg name, kind), the group's own
    totals: AccessStats  # what the table, the hint, the hover and --json show
    perf: LineMetrics | None = None  # None where performance computed none (never, today: one per group)
    group: Group | None = field(default=None, repr=False)
    reach: Touched | None = field(default=None, repr=False)
    flagged: bool = False  # an OUT_OF_BOUNDS finding stands at this access

    @cached_property
    def facts(self) -> AccessFacts | None:
        """What a hover adds to the totals; None for an access that never ran (its group has no executions)."""
        g = self.group
        if g is None or not self.ran:
            return None
        f = access_facts_of(g, self.totals, self.reach, FIRST_PROGRAMS)
        if not self.flagged:
            f.sizes_checked = sizes_checked(g)
        return f

    @property
    def ran(self) -> bool:
        """The access executed (a hover has facts to show), read without computing them."""
        return self.group is not None and any(p.rows.size for p in self.group.parts)

    @property
    def kernel_def(self) -> tuple[str, str, int] | None:
        """(kernel, its file, its first line) of the first launch that has this access; None without one."""
        if self.group is None or not self.group.parts:
            return None
        L = self.group.parts[0].launch
        return L.kernel, L.def_file, L.def_line

    @property
    def tensor(self) -> TensorInfo | None:
        """The tensor as the first launch that ran the access saw it (the facts' own), without the facts."""
        return self.reach.tensor if self.reach is not None and self.ran else None

    @property
    def unique_of(self) -> int | None:
        """The element count `totals.unique` is out of: the tensor's, when every launch saw the first one's
        shape (touched.py's union is then of one index space); None when shapes differ or nothing ran. Read
        from the reach (no facts computed: the inlay hint's tooltip asks for it on every line)."""
        t = self.tensor
        if t is None or self.reach is None or self.reach.shapes_differ:
            return None
        return t.numel


def access_records(
    groups: dict[Key, Group], lines: dict[Key, LineMetrics], findings: list[Finding]
) -> list[AccessRecord]:
    """Every access's record, in the table's order (file, line, column, argument, kind); `lines`: the
    run's line_metrics (performance.py), by the same keys as `groups`."""
    flagged = {(f.file, f.line, f.arg) for f in findings if f.kind in OUT_OF_BOUNDS}
    out = []
    for key, g in groups.items():
        u = touched(g)
        out.append(AccessRecord(key, access_totals(g, u), lines.get(key), g, u, key[:3] in flagged))
    out.sort(key=lambda r: (r.totals.file, r.totals.line, r.totals.col, r.totals.arg, r.totals.kind))
    return out
