"""The text format: `file:line:col: severity: message [kind]` like a compiler, a per-line table of
every load/store, one status line per file, the script's own output when its run failed, and a total
over all files."""

from __future__ import annotations

import os
from typing import TextIO

from ..analysis.autotune import autotune_notices
from ..analysis.standin import standin_notice
from ..analysis.text import format_bytes, plural
from .locations import line_text, message_text, notebook_of, traceback_text
from .paths import rel

OUTPUT_LINES = 40  # of the script's stdout/stderr, shown when its run failed
FAILED = ("exception", "crashed", "timeout", "error")


def counts(findings) -> tuple[int, int]:
    return (sum(f.severity == "error" for f in findings), sum(f.severity == "warning" for f in findings))


def write_findings(c, out: TextIO) -> None:
    """`file:line:col:` like a compiler; in a notebook `nb.ipynb:cell 3:6:9:` (cell index from 0, line from 1)."""
    for f in c.analysis.findings:
        col = f.col + 1 if f.col >= 0 else 1
        print(
            f"{rel(f.file)}:{line_text(c, f.file, f.line)}:{col}: {f.severity}: {message_text(c, f.message)} [{f.kind}]",
            file=out,
        )
        for r in f.related:
            rcol = r.col + 1 if r.col >= 0 else 1
            print(f"{rel(r.file)}:{line_text(c, r.file, r.line)}:{rcol}: note: {r.message}", file=out)
        # The traceback of a SystemExit only shows where the runner called the command: its output says why.
        if (
            f.detail
            and f.kind in ("exception", "crashed", "timeout")
            and not f.detail.rstrip().splitlines()[-1].startswith("SystemExit")
        ):
            for line in message_text(c, traceback_text(c, f.detail)).rstrip().splitlines()[-12:]:
                print(f"    {line}", file=out)


def write_table(c, out: TextIO) -> None:
    """One row per access: its record's totals (analysis/records.py), the numbers the hint and hover show."""
    analysis = c.analysis
    rows = [r.totals for r in analysis.records]
    if not rows:
        return
    here = os.path.abspath(analysis.result.file)
    wheres = [
        line_text(c, a.file, a.line) if os.path.abspath(a.file) == here else f"{os.path.basename(a.file)}:{a.line}"
        for a in rows
    ]
    w = max(5, *map(len, wheres))  # a notebook's `cell 12:40` is wider than a line number
    print(file=out)
    print(
        f"{'line':>{w}}  {'kind':<6} {'arg':<12} {'launches':>8} {'programs':>8} {'lanes':>10} "
        f"{'active':>10} {'unique':>10} {'oob':>6} {'bytes':>9}  elements",
        file=out,
    )
    for where, a in zip(wheres, rows):
        print(
            f"{where:>{w}}  {a.kind:<6} {a.arg:<12} {a.launches:>8} {a.programs:>8} {a.lanes:>10} {a.active:>10} "
            f"{a.unique:>10} {a.oob:>6} {format_bytes(a.bytes):>9}  {a.extent}",
            file=out,
        )


def write_output_tail(result, out: TextIO, lines: int = OUTPUT_LINES) -> None:
    """The script's own stdout and stderr (their last lines): a failing assert's message, pytest's
    report, a warning printed before a crash. Only for runs that failed; the worker's own lines are
    not the user's."""
    for name, text in (("stdout", result.stdout), ("stderr", result.stderr)):
        body = text.rstrip().splitlines()
        if not body:
            continue
        cut = len(body) > lines
        print(f"\n--- the script's {name}{f' (last {lines} lines)' if cut else ''} ---", file=out)
        for line in body[-lines:]:
            print(line, file=out)


def status_line(c) -> str:
    r = c.result
    n_err, n_warn = counts(c.analysis.findings)
    how = f" ({' '.join(c.target.plan.command)})" if c.target.plan.command else ""
    return (
        f"{rel(r.file)}{how}: {r.status}, {plural(len(r.launches), 'launch', 'launches')}, "
        f"{plural(n_err, 'error')}, {plural(n_warn, 'warning')} "
        f"({r.seconds:.1f} s, triton {r.triton_version or '?'}"
        f"{', CPU stand-in for CUDA' if r.cuda_standin is not None else ''})"
    )


def write_file(c, out: TextIO, show_output_tail: bool = True) -> None:
    """One file's findings, table and status line (and its output when the run failed)."""
    if c.result.cuda_standin is not None:
        print(standin_notice(c.result.cuda_standin), file=out)
    for line in autotune_notices(c.result):
        print(line, file=out)
    nb = notebook_of(c, c.target.path)
    if nb is not None and nb.skipped:
        print(f"note: {nb.skipped_note(lambda cell: f'cell {cell}')}", file=out)
    write_findings(c, out)
    write_table(c, out)
    if show_output_tail and c.result.status in FAILED:
        write_output_tail(c.result, out)
    print(f"\n{status_line(c)}", file=out)


def write_total(checked, out: TextIO) -> None:
    """The line after many files: how many were clean, had findings, or could not be checked."""
    errors = sum(counts(c.analysis.findings)[0] for c in checked)
    warnings = sum(counts(c.analysis.findings)[1] for c in checked)
    tool = sum(c.tool_error for c in checked)
    bad = sum(c.bad and not c.tool_error for c in checked)
    clean = len(checked) - tool - bad
    parts = [f"{clean} clean", f"{bad} with findings"] + ([f"{tool} not checked (tool error)"] if tool else [])
    print(
        f"\ntriton-lens: {plural(len(checked), 'file')} checked: {', '.join(parts)}; "
        f"{plural(errors, 'error')}, {plural(warnings, 'warning')}",
        file=out,
    )
    for c in checked:
        if c.bad or c.tool_error:
            n_err, n_warn = counts(c.analysis.findings)
            print(
                f"  {rel(c.result.file)}: {c.result.status}, {plural(n_err, 'error')}, {plural(n_warn, 'warning')}",
                file=out,
            )
