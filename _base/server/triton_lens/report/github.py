"""The github format: workflow commands (`::error file=…,line=…,col=…,title=…::message`) that GitHub
Actions turns into annotations on the pull request's diff. Related locations (the other access of a
race) become `::notice` lines; a tool error is an `::error` without a file."""

from __future__ import annotations

from typing import TextIO

from ..model.remedies import COMMAND_LINE
from .locations import cell_line, file_line, in_words, message_text
from .paths import uri_rel
from .rules import rule_for

_LEVEL = {"error": "error", "warning": "warning", "information": "notice"}


def _data(s: str) -> str:
    """The message part: %, CR and LF escaped (a multi-line message stays one annotation)."""
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(s: str) -> str:
    return _data(s).replace(":", "%3A").replace(",", "%2C")


def _loc(file: str, line: int, col: int, end_line: int = 0, end_col: int = -1) -> str:
    parts = [f"file={_prop(uri_rel(file))}", f"line={max(line, 1)}"]
    if col >= 0:
        parts.append(f"col={col + 1}")
    if end_line and end_line >= line:
        parts.append(f"endLine={end_line}")
        if end_line == line and end_col > col >= 0:
            parts.append(f"endColumn={end_col}")
    return ",".join(parts)


def _where(c, file: str, line: int, col: int, end_line: int = 0, end_col: int = -1) -> str:
    """In a notebook: the line of the .ipynb file that holds the cell's line (the diff GitHub shows)."""
    if cell_line(c, file, line)[0] is None:
        return _loc(file, line, col, end_line, end_col)
    return _loc(file, file_line(c, file, line), -1)


def lines(checked) -> list[str]:
    out = []
    for c in checked:
        for f in c.analysis.findings:
            level = _LEVEL.get(f.severity, "notice")
            title = f"Triton Lens: {rule_for(f.kind).title}"
            out.append(
                f"::{level} {_where(c, f.file, f.line, f.col, f.end_line, f.end_col)},title={_prop(title)}"
                f"::{_data(in_words(c, f.file, f.line) + message_text(c, f.message))}"
            )
            for r in f.related:
                out.append(
                    f"::notice {_where(c, r.file, r.line, r.col, r.end_line, r.end_col)},"
                    f"title={_prop('Triton Lens: related location')}::{_data(in_words(c, r.file, r.line) + r.message)}"
                )
        if c.tool_error and c.result.error is not None:
            out.append(
                f"::error title={_prop('Triton Lens could not check ' + uri_rel(c.result.file))}"
                f"::{_data(c.result.error.text(COMMAND_LINE))}"
            )
    return out


def write(checked, out: TextIO, problems: list[str]) -> None:
    for p in problems:
        print(f"::error title={_prop('Triton Lens')}::{_data(p)}", file=out)
    for line in lines(checked):
        print(line, file=out)
