"""What one finished run shows in the editor, computed once when the run ends (off the event loop) so
that hovers and hints are dictionary lookups: diagnostics, per-line hint and hover text, in the
coordinates of the text that ran. `documents.py` maps them onto the current text."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from lsprotocol import types as lsp

from ..analysis import Analysis
from ..analysis.findings import sample_findings
from ..analysis.records import AccessRecord
from ..model import RunResult
from .diagnostics import run_diagnostics
from .hints import line_hint
from .hover import dot_markdown, line_markdown
from .runplan import Plan
from .text import Lines


@dataclass
class HoverSpot:
    line: int  # 0-based
    col: int  # UTF-16 columns of the access call; -1: the whole line
    end_line: int
    end_col: int
    markdown: str


@dataclass
class PartialInfo:
    """A view made from a launch's sample (trace_engine/recording/progressive.py), before the launch completed."""

    kernel: str
    launch: int  # index
    programs_done: int
    programs_total: int

    @property
    def text(self) -> str:
        return f"{self.programs_done} of {self.programs_total} programs"

    @property
    def note(self) -> str:
        """What a tooltip, hover or diagnostic says of it."""
        return (
            f"partial: {self.text} of launch {self.launch + 1} ({self.kernel}) so far; the complete "
            "results replace these when the launch ends"
        )


@dataclass
class RunView:
    version: int
    text: str  # the text that ran
    result: RunResult
    analysis: Analysis
    plan: Plan
    diagnostics: list[lsp.Diagnostic] = field(default_factory=list)
    hints: dict[int, tuple[str, str]] = field(default_factory=dict)  # 0-based line -> (label, tooltip)
    hovers: dict[int, list[HoverSpot]] = field(default_factory=dict)  # 0-based line -> spots on it
    ms: float = 0.0  # wall time of the run
    # Set on a view of a run in progress (a sample's snapshot): its findings are the sample's own
    # (analysis.findings.SAMPLE_KINDS), its hints, hovers and diagnostics say so.
    partial: PartialInfo | None = None

    @property
    def status(self) -> str:
        return self.result.status


def _read_lines(path: str) -> list[str] | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().split("\n")
    except OSError:
        return None


def build_view(
    version: int,
    text: str,
    result: RunResult,
    analysis: Analysis,
    plan: Plan,
    partial: PartialInfo | None = None,
    hovers: bool = True,
) -> RunView:
    """The view of a run. hovers=False leaves its hovers to `add_hovers`: a partial view is shown first and
    its hovers (the costliest part: maps and first programs of each access) follow it."""
    if partial is not None:  # only what the sample's programs prove (races, unwritten ... need them all)
        analysis = replace(analysis, findings=sample_findings(analysis.findings))
    view = _build(version, text, result, analysis, plan)
    if partial is not None:
        view.partial = partial
        _mark_partial(view, partial)
    if hovers:
        add_hovers(view)
    return view


def add_hovers(view: RunView) -> None:
    """Computes the view's hovers and sets them at once (one attribute bound: the event loop, which may be
    showing the view already, sees no hovers or all of them)."""
    view.hovers = _hovers(view)


def _mark_partial(view: RunView, partial: PartialInfo) -> None:
    note = partial.note
    for d in view.diagnostics:
        d.message = f"{d.message} ({note})"
    view.hints = {l0: (label, f"*{note}*\n\n{tip}") for l0, (label, tip) in view.hints.items()}


def _build(version: int, text: str, result: RunResult, analysis: Analysis, plan: Plan) -> RunView:
    lines = Lines.from_text(text)
    view = RunView(version=version, text=text, result=result, analysis=analysis, plan=plan)
    view.diagnostics = run_diagnostics(result, analysis.findings, lines, analysis.record_for, _read_lines, plan)
    for l0, records in _records_by_line(view).items():
        view.hints[l0] = line_hint(records)
    return view


def _records_by_line(view: RunView) -> dict[int, list[AccessRecord]]:
    target = os.path.abspath(view.result.file)
    by_line: dict[int, list[AccessRecord]] = {}
    for r in view.analysis.records:
        if os.path.abspath(r.totals.file) == target:
            by_line.setdefault(r.totals.line - 1, []).append(r)
    return by_line


def _hovers(view: RunView) -> dict[int, list[HoverSpot]]:
    lines = Lines.from_text(view.text)
    analysis = view.analysis
    target = os.path.abspath(view.result.file)
    launches = analysis.performance.launches
    hovers: dict[int, list[HoverSpot]] = {}
    for l0, records in _records_by_line(view).items():
        # One spot per call range on the line; accesses of one call (a helper used twice) share it. An access
        # that never ran has no hover.
        spots: dict[tuple[int, int, int], list[AccessRecord]] = {}
        for r in records:
            if r.ran:
                spots.setdefault((r.totals.col, r.totals.end_line, r.totals.end_col), []).append(r)
        for (col, end_line, end_col), group in spots.items():
            if col >= 0 and end_col >= 0:
                e0 = max((end_line or l0 + 1) - 1, l0)
                spot = HoverSpot(
                    l0, lines.utf16_col(l0, col), e0, lines.utf16_col(e0, end_col), line_markdown(group, launches)
                )
            else:
                e0 = l0
                spot = HoverSpot(l0, -1, l0, -1, line_markdown(group, launches))
            for ln in range(l0, e0 + 1):  # a call over several lines answers on each of them
                hovers.setdefault(ln, []).append(spot)
    for d in analysis.performance.dots:  # tl.dot lines: FLOPs and the launch's roofline
        if os.path.abspath(d.file) != target:
            continue
        l0 = d.line - 1
        hovers.setdefault(l0, []).append(HoverSpot(l0, -1, l0, -1, dot_markdown(d, analysis.performance.launches)))
    if view.partial is not None:
        note = view.partial.note
        for spots_at in hovers.values():
            for spot in spots_at:
                if not spot.markdown.startswith("*partial"):
                    spot.markdown = f"*{note}*\n\n{spot.markdown}"
    return hovers
