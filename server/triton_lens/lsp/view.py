"""What one finished run shows in the editor, computed once when the run ends (off the event loop) so
that hovers and hints are dictionary lookups: diagnostics, per-line hint and hover text, in the
coordinates of the text that ran. `documents.py` maps them onto the current text."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from lsprotocol import types as lsp

from ..analysis import Analysis
from ..analysis.hover import access_facts
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

    @property
    def status(self) -> str:
        return self.result.status


def _read_lines(path: str) -> list[str] | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().split("\n")
    except OSError:
        return None


def build_view(version: int, text: str, result: RunResult, analysis: Analysis, plan: Plan) -> RunView:
    lines = Lines.from_text(text)
    facts = access_facts(analysis)
    view = RunView(version=version, text=text, result=result, analysis=analysis, plan=plan)
    view.diagnostics = run_diagnostics(result, analysis.findings, lines, facts, _read_lines, plan)
    target = os.path.abspath(result.file)
    perf = {(m.file, m.line, m.arg, m.kind): m for m in analysis.performance.lines}
    by_line: dict[int, list] = {}
    for s in analysis.accesses:
        if os.path.abspath(s.file) == target:
            by_line.setdefault(s.line - 1, []).append(s)
    for l0, stats in by_line.items():
        view.hints[l0] = line_hint(stats, facts)
        items = [(s, facts[(s.file, s.line, s.arg, s.kind)]) for s in stats if (s.file, s.line, s.arg, s.kind) in facts]
        if not items:
            continue
        # One spot per call range on the line; accesses of one call (a helper used twice) share it.
        spots: dict[tuple, list] = {}
        for s, f in items:
            spots.setdefault((s.col, s.end_line, s.end_col), []).append((s, f))
        for (col, end_line, end_col), group in spots.items():
            if col >= 0 and end_col >= 0:
                e0 = max((end_line or l0 + 1) - 1, l0)
                spot = HoverSpot(
                    l0,
                    lines.utf16_col(l0, col),
                    e0,
                    lines.utf16_col(e0, end_col),
                    line_markdown(group, perf, analysis.performance.launches),
                )
            else:
                e0 = l0
                spot = HoverSpot(l0, -1, l0, -1, line_markdown(group, perf, analysis.performance.launches))
            for ln in range(l0, e0 + 1):  # a call over several lines answers on each of them
                view.hovers.setdefault(ln, []).append(spot)
    for d in analysis.performance.dots:  # tl.dot lines: FLOPs and the launch's roofline
        if os.path.abspath(d.file) != target:
            continue
        l0 = d.line - 1
        view.hovers.setdefault(l0, []).append(HoverSpot(l0, -1, l0, -1, dot_markdown(d, analysis.performance.launches)))
    return view
