"""The json format: today's object for one file (analysis.to_json(), plus the tails of the script's
stdout and stderr), `{"files": [...], "summary": {...}}` for many."""

from __future__ import annotations

import json
from typing import TextIO

from .locations import relocate_json

OUTPUT_TAIL_CHARS = 8000


def file_object(c) -> dict:
    d = c.analysis.to_json()
    r = c.result
    d["command"] = list(c.target.plan.command) if c.target.plan.command else None
    d["stdout"] = r.stdout[-OUTPUT_TAIL_CHARS:]
    d["stderr"] = r.stderr[-OUTPUT_TAIL_CHARS:]
    return relocate_json(c, d)  # a notebook's lines as cell and line


def summary(checked, exit_code: int) -> dict:
    sev = [f.severity for c in checked for f in c.analysis.findings]
    return {
        "files": len(checked),
        "errors": sev.count("error"),
        "warnings": sev.count("warning"),
        "information": sev.count("information"),
        "tool_errors": sum(c.tool_error for c in checked),
        "exit_code": exit_code,
    }


def write(checked, out: TextIO, many: bool, exit_code: int, problems: list[str]) -> None:
    if many:
        obj = {
            "files": [file_object(c) for c in checked],
            "summary": summary(checked, exit_code),
            "problems": list(problems),
        }
    else:
        obj = file_object(checked[0])
    json.dump(obj, out)
    out.write("\n")
