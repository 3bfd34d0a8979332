"""Findings -> LSP diagnostics: severity, code, exact range of the access call, related information."""

from __future__ import annotations

import os
from collections.abc import Callable

from lsprotocol import types as lsp

from ..analysis.fixes import fix_for
from ..analysis.hover import param_location
from ..analysis.records import AccessRecord
from ..model import ERROR, Finding, RunResult
from ..model.remedies import EDITOR
from ..source.kernels import KernelOutline
from .runplan import Plan, SyntaxProblem
from .text import Lines, uri_of

SOURCE = "triton-lens"
# Finding kinds -> diagnostic codes users can filter on.
CODES = {
    "oob": "oob",
    "race": "race",
    "dead": "dead-mask",
    "oob-sizes": "oob-sizes",
    "wrap": "wrap",
    "overrun": "overrun",
    "unwritten": "unwritten",
    "uninit": "uninit",
    "exception": "exception",
    "timeout": "timeout",
    "crashed": "crashed",
    "no-launch": "no-launch",
}
SEVERITY = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "information": lsp.DiagnosticSeverity.Information,
    "hint": lsp.DiagnosticSeverity.Hint,
}
TRACEBACK_LINES = 12


def _range(lines: Lines, line: int, col: int, end_line: int, end_col: int) -> lsp.Range:
    """A 1-based line and 0-based (UTF-8) columns as an LSP range; the trimmed line when no columns."""
    l0 = max(line - 1, 0)
    if col >= 0 and end_col >= 0:
        e0 = max((end_line or line) - 1, l0)
        return lsp.Range(lsp.Position(l0, lines.utf16_col(l0, col)), lsp.Position(e0, lines.utf16_col(e0, end_col)))
    return lines.trimmed(l0)


def _tail(text: str, n: int = TRACEBACK_LINES) -> str:
    rows = [r for r in text.rstrip().splitlines() if r.strip()]
    return "\n".join(rows[-n:])


def finding_diagnostic(
    f: Finding,
    lines: Lines,
    record: AccessRecord | None,
    result: RunResult,
    read_lines: Callable[[str], list[str] | None],
) -> lsp.Diagnostic:
    """`record`: the access the finding is at (Analysis.record_for), None for a finding at none."""
    rng = _range(lines, f.line, f.col, f.end_line, f.end_col)
    message = f.message
    related: list[lsp.DiagnosticRelatedInformation] = []
    for r in f.related:
        rl = lines if os.path.abspath(r.file) == os.path.abspath(result.file) else Lines.of(read_lines(r.file) or [])
        related.append(
            lsp.DiagnosticRelatedInformation(
                lsp.Location(uri_of(r.file), _range(rl, r.line, r.col, r.end_line, r.end_col)), r.message
            )
        )
    if f.kind in ("oob", "oob-sizes", "wrap", "overrun", "dead", "unwritten", "uninit", "race") and f.arg:
        # (the record's kernel and tensor, not its hover facts: a view's diagnostics come before its hovers)
        kdef = record.kernel_def if record is not None and record.ran else None
        if record is not None and kdef is not None and kdef[1]:
            kernel, def_file, def_line = kdef
            src = (
                lines.text_lines if os.path.abspath(def_file) == os.path.abspath(result.file) else read_lines(def_file)
            )
            loc = param_location(src or [], def_line, f.arg)
            if loc is not None:
                pl, pc, pe = loc
                dl = lines if src is lines.text_lines else Lines.of(src or [])
                t = record.tensor
                what = (
                    f"{t.dtype}, shape ({', '.join(str(s) for s in t.shape)}{',' if len(t.shape) == 1 else ''}), "
                    f"strides ({', '.join(str(s) for s in t.strides)}{',' if len(t.strides) == 1 else ''})"
                    if t is not None
                    else ""
                )
                related.append(
                    lsp.DiagnosticRelatedInformation(
                        lsp.Location(uri_of(def_file), _range(dl, pl, pc, pl, pe)),
                        f"{f.arg}: parameter of {kernel}" + (f" — the tensor passed was {what}" if what else ""),
                    )
                )
    if f.kind in ("exception", "timeout", "crashed") and f.detail:
        e = result.error
        in_file = e is not None and e.file and e.line and os.path.abspath(e.file) == os.path.abspath(result.file)
        if not in_file:
            message += "\n\n" + _tail(f.detail)
    data = {"kind": f.kind, "arg": f.arg, "lanes": f.lanes, "programs": f.programs, "elements": f.elements}
    fix = fix_for(f, lines.text_lines) if os.path.abspath(f.file) == os.path.abspath(result.file) else None
    if fix is not None:  # served as a quick fix by the code action request (lsp/fixes.py)
        edit = _range(lines, fix.line, fix.col, fix.end_line, fix.end_col)
        # `key`: what its re-check's verdict is filed under (lsp/fixcheck.py); offered once that run shows it right
        data["fix"] = {"title": fix.title, "range": _position_json(edit), "newText": fix.new_text, "key": fix.key}
    return lsp.Diagnostic(
        range=rng,
        message=message,
        severity=SEVERITY.get(f.severity, lsp.DiagnosticSeverity.Warning),
        code=CODES.get(f.kind, f.kind),
        source=SOURCE,
        related_information=related or None,
        data=data,
    )


def _position_json(r: lsp.Range) -> dict[str, dict[str, int]]:
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }


def run_diagnostics(
    result: RunResult,
    findings: list[Finding],
    lines: Lines,
    record_for: Callable[[Finding], AccessRecord | None],
    read_lines: Callable[[str], list[str] | None],
    plan: Plan,
) -> list[lsp.Diagnostic]:
    """The diagnostics of one run for the analysed file, in the coordinates of the text it ran;
    `record_for`: the analysis' own (Analysis.record_for), the record of the access a finding is at."""
    target = os.path.abspath(result.file)
    out = [
        finding_diagnostic(f, lines, record_for(f), result, read_lines)
        for f in findings
        if os.path.abspath(f.file) == target
    ]
    if result.status == ERROR and result.error is not None and result.error.type != "Cancelled":
        e = result.error
        detail = f"\n\n{_tail(e.traceback)}" if e.traceback else ""
        out.append(
            lsp.Diagnostic(
                range=lines.trimmed(0),
                message=f"Triton Lens could not run this file: {e.text(EDITOR)}{detail}",
                severity=lsp.DiagnosticSeverity.Warning,
                code="tool-error",
                source=SOURCE,
            )
        )
    own = [L for L in result.launches if L.def_file and os.path.abspath(L.def_file) == target]
    if plan.command and not own and result.status != ERROR:
        cmd = " ".join(plan.command)
        where = (
            f"the run comment's command `{cmd}`"
            if plan.origin == "comment"
            else f"`{cmd}` (the tritonLens.runCommands setting)"
        )
        if result.launches:  # it launched kernels, none of them defined here
            for k in plan.kernels:
                out.append(
                    lsp.Diagnostic(
                        range=lines.trimmed(k.line - 1),
                        message=f"{k.name}: {where} launched {len(result.launches)} kernel(s), "
                        "none of them defined in this file",
                        severity=lsp.DiagnosticSeverity.Information,
                        code="no-launch",
                        source=SOURCE,
                    )
                )
        if plan.origin == "comment" and plan.origin_line:
            out.append(
                lsp.Diagnostic(
                    range=lines.trimmed(plan.origin_line - 1),
                    message=f"`{cmd}` ran ({result.status}), but launched no kernel of this file",
                    severity=lsp.DiagnosticSeverity.Information,
                    code="no-launch",
                    source=SOURCE,
                )
            )
    return out


def syntax_diagnostic(s: SyntaxProblem, lines: Lines) -> lsp.Diagnostic:
    l0, e0 = s.line - 1, max(s.end_line - 1, s.line - 1)
    return lsp.Diagnostic(
        range=lsp.Range(lsp.Position(l0, lines.utf16_col(l0, s.col)), lsp.Position(e0, lines.utf16_col(e0, s.end_col))),
        message=f"{s.message} — Triton Lens runs the file again once it parses",
        severity=lsp.DiagnosticSeverity.Error,
        code="syntax",
        source=SOURCE,
    )


def untrusted_diagnostic(lines: Lines, kernels: list[KernelOutline]) -> lsp.Diagnostic:
    line = kernels[0].line - 1 if kernels else 0
    return lsp.Diagnostic(
        range=lines.trimmed(line),
        message="Triton Lens does not run code in an untrusted workspace, so it shows no memory "
        "accesses for this file. Trust the workspace (Manage Workspace Trust) to run it.",
        severity=lsp.DiagnosticSeverity.Information,
        code="untrusted",
        source=SOURCE,
    )


def mark_stale(d: lsp.Diagnostic, version: int) -> lsp.Diagnostic:
    """A diagnostic of an earlier version of the text, shown until the run of the current one ends."""
    data = dict(d.data or {})
    data.update({"stale": True, "fromVersion": version})
    return lsp.Diagnostic(
        range=d.range,
        message=f"(from an earlier version of this file, updating…) {d.message}",
        severity=d.severity,
        code=d.code,
        source=d.source,
        related_information=d.related_information,
        data=data,
        tags=d.tags,
    )
