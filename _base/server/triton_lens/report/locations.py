"""Where a finding is, as each format writes it. A line of an ordinary file is itself; a line of a
notebook's script (model/notebook.py) is a cell and a line inside it: the cell's index in the
notebook's `cells` list, from 0 as nbformat counts, and the line from 1. Lines of other files (a
helper module the notebook imports) are left as they are."""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Any

from ..model.notebook import NotebookScript, source_lines_in_file


def notebook_of(c, file: str) -> NotebookScript | None:
    """The notebook script when `file` is the checked notebook itself."""
    nb = getattr(c.target, "notebook", None)
    if nb is None or os.path.abspath(file) != os.path.abspath(c.target.path):
        return None
    return nb


def cell_line(c, file: str, line: int) -> tuple[int | None, int]:
    """(cell index, line in the cell) for a notebook's line; (None, line) otherwise."""
    nb = notebook_of(c, file)
    hit = nb.cell_line(line) if nb is not None else None
    if hit is None:
        return None, line
    return int(hit[0]), hit[1]  # type: ignore[call-overload]


def line_text(c, file: str, line: int) -> str:
    """`6` for a file, `cell 3:6` for a notebook (as text and the table write it)."""
    cell, ln = cell_line(c, file, line)
    return f"{ln}" if cell is None else f"cell {cell}:{ln}"


def in_words(c, file: str, line: int) -> str:
    """'cell 3, line 6: ' before a message where the location itself cannot say the cell; '' otherwise."""
    cell, ln = cell_line(c, file, line)
    return "" if cell is None else f"cell {cell}, line {ln}: "


@lru_cache(maxsize=16)
def _file_lines(path: str, mtime: float) -> dict[int, list[int]]:
    try:
        with open(path, encoding="utf-8") as f:
            return source_lines_in_file(f.read())
    except OSError:
        return {}


def file_line(c, file: str, line: int) -> int:
    """The line of the file itself that SARIF and GitHub annotations point at: for a notebook, the
    line of the .ipynb JSON that holds that cell line (1 when it cannot be found)."""
    cell, ln = cell_line(c, file, line)
    if cell is None:
        return line
    try:
        where = _file_lines(os.path.abspath(file), os.stat(file).st_mtime)
    except OSError:
        return 1
    lines = where.get(cell, [])
    return lines[ln - 1] if 0 < ln <= len(lines) else 1


def traceback_text(c, text: str) -> str:
    """A traceback with the notebook's frames as cell and line (`File "nb.ipynb", cell 3, line 6`)."""
    nb = getattr(c.target, "notebook", None)
    if nb is None or not text:
        return text
    path = os.path.abspath(c.target.path)

    def one(m: re.Match) -> str:
        cell, ln = cell_line(c, path, int(m["line"]))
        return m[0] if cell is None else f'File "{m["file"]}", cell {cell}, line {ln}'

    return re.sub(r'File "(?P<file>' + re.escape(path) + r')", line (?P<line>\d+)', one, text)


def message_text(c, text: str) -> str:
    """A message that names a notebook's script line as Python does (a SyntaxError's `(nb.ipynb, line
    11)`), with its cell and line instead."""
    nb = getattr(c.target, "notebook", None)
    if nb is None or not text:
        return text
    path = os.path.abspath(c.target.path)

    def one(m: re.Match) -> str:
        cell, ln = cell_line(c, path, int(m["line"]))
        return m[0] if cell is None else f"({m['name']}, cell {cell}, line {ln})"

    name = re.escape(os.path.basename(path))
    return re.sub(r"\((?P<name>" + name + r"), line (?P<line>\d+)\)", one, text)


def relocate_json(c, obj: dict[str, Any]) -> dict[str, Any]:
    """The `--json` object of a notebook with its lines as cell and line: every object with `file`
    the notebook gets `cell`, and `line` / `end_line` inside that cell."""
    if getattr(c.target, "notebook", None) is None:
        return obj

    def fix(d: Any) -> None:
        if isinstance(d, list):
            for x in d:
                fix(x)
            return
        if not isinstance(d, dict):
            return
        if isinstance(d.get("file"), str) and isinstance(d.get("line"), int):
            cell, ln = cell_line(c, d["file"], d["line"])
            if cell is not None:
                if isinstance(d.get("end_line"), int):
                    end_cell, end_ln = cell_line(c, d["file"], d["end_line"])
                    d["end_line"] = end_ln if end_cell == cell else ln
                d["cell"], d["line"] = cell, ln
        if isinstance(d.get("def_file"), str) and isinstance(d.get("def_line"), int):
            cell, ln = cell_line(c, d["def_file"], d["def_line"])
            if cell is not None:
                d["def_cell"], d["def_line"] = cell, ln
        if isinstance(d.get("detail"), str):
            d["detail"] = traceback_text(c, d["detail"])
        if isinstance(d.get("message"), str):
            d["message"] = message_text(c, d["message"])
        for k, v in d.items():
            if k != "file":
                fix(v)

    fix(obj)
    nb = c.target.notebook
    obj["notebook"] = {
        "cells": list(nb.cells),
        "skipped": [{"cell": s.cell, "line": s.line, "text": s.text, "why": s.why} for s in nb.skipped],
    }
    return obj
