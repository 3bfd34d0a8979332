"""The sarif format: one SARIF 2.1.0 log for all files, for GitHub code scanning (upload-sarif) and
other viewers. One rule per finding kind (with its help), one result per finding with its physical
location and the related locations the editor also shows (the other access of a race). Paths are
relative to the current folder (%SRCROOT%) when inside it, so code scanning maps them to the repo."""

from __future__ import annotations

import json
import os
from typing import Any, TextIO
from urllib.parse import quote

from .. import __version__
from ..model.remedies import COMMAND_LINE
from .locations import cell_line, file_line, in_words, message_text
from .paths import rel
from .rules import RULES, rule_for

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "information": "note"}


def _artifact(path: str) -> dict:
    """A URI, percent-encoded as RFC 3986 wants (a raw space, "%", "#" or non-ASCII name is no URI,
    and a relative "a:b.py" would read as scheme "a"): quote() encodes all but letters, digits, "/"
    and "_.-~"."""
    r = rel(path)
    if os.path.isabs(r):
        return {"uri": "file://" + quote(r.replace(os.sep, "/"))}
    return {"uri": quote(r.replace(os.sep, "/")), "uriBaseId": "%SRCROOT%"}


def _region(line: int, col: int, end_line: int, end_col: int) -> dict:
    region = {"startLine": max(line, 1)}
    if col >= 0:
        region["startColumn"] = col + 1
    if end_line and end_line >= line:
        region["endLine"] = end_line
        if end_col >= 0 and (end_line > line or end_col > col):
            region["endColumn"] = end_col + 1
    return region


def _location(file: str, line: int, col: int, end_line: int, end_col: int) -> dict:
    return {"physicalLocation": {"artifactLocation": _artifact(file), "region": _region(line, col, end_line, end_col)}}


def _where(c, file: str, line: int, col: int, end_line: int, end_col: int) -> dict:
    """A location in a checked file; in a notebook, the line of the .ipynb file that holds the cell's
    line (what code scanning shows in the repository), no column: the JSON string is indented."""
    cell, _ = cell_line(c, file, line)
    if cell is None:
        return _location(file, line, col, end_line, end_col)
    at = file_line(c, file, line)
    return _location(file, at, -1, at, -1)


def _rule(kind: str) -> dict:
    r = rule_for(kind)
    return {
        "id": r.id,
        "name": r.name,
        "shortDescription": {"text": r.title},
        "fullDescription": {"text": r.help},
        "help": {"text": r.help, "markdown": r.help},
    }


def log(checked, problems: list[str]) -> dict:
    kinds: list[str] = list(RULES)  # every known rule, so rule indexes are stable; new kinds appended
    results = []
    for c in checked:
        for f in c.analysis.findings:
            if f.kind not in kinds:
                kinds.append(f.kind)
            res = {
                "ruleId": f.kind,
                "ruleIndex": kinds.index(f.kind),
                "level": _LEVEL.get(f.severity, "note"),
                "message": {"text": in_words(c, f.file, f.line) + message_text(c, f.message)},
                "locations": [_where(c, f.file, f.line, f.col, f.end_line, f.end_col)],
            }
            if f.related:
                res["relatedLocations"] = [
                    dict(
                        _where(c, r.file, r.line, r.col, r.end_line, r.end_col),
                        id=i,
                        message={"text": in_words(c, r.file, r.line) + r.message},
                    )
                    for i, r in enumerate(f.related)
                ]
            props = {
                k: v
                for k, v in (
                    ("arg", f.arg),
                    ("access", f.access),
                    ("lanes", f.lanes),
                    ("programs", f.programs),
                    ("elements", f.elements),
                )
                if v
            }
            if f.witness:
                props["witness"] = f.witness
            cell, cell_ln = cell_line(c, f.file, f.line)
            if cell is not None:
                props["cell"], props["cellLine"] = cell, cell_ln
            if props:
                res["properties"] = props
            results.append(res)
    notes: list[dict[str, Any]] = [{"level": "error", "message": {"text": p}} for p in problems]
    notes += [
        {
            "level": "error",
            "message": {"text": f"{rel(c.result.file)}: {c.result.error.text(COMMAND_LINE)}"},
            "locations": [_location(c.result.file, 1, -1, 0, -1)],
        }
        for c in checked
        if c.tool_error and c.result.error is not None
    ]
    invocation: dict[str, Any] = {"executionSuccessful": not notes}
    if notes:
        invocation["toolExecutionNotifications"] = notes
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "Triton Lens",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": [_rule(k) for k in kinds],
                    }
                },
                "originalUriBaseIds": {
                    "%SRCROOT%": {"uri": "file://" + quote(os.getcwd().replace(os.sep, "/").rstrip("/")) + "/"}
                },
                "invocations": [invocation],
                "results": results,
            }
        ],
    }


def write(checked, out: TextIO, problems: list[str]) -> None:
    json.dump(log(checked, problems), out, indent=1)
    out.write("\n")
