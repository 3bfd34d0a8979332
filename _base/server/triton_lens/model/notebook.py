"""A notebook as one script: its code cells, top to bottom, joined into the script a run executes, and
the mapping between a line of that script and (cell, line inside the cell). The one owner of this
mapping: `triton-lens check` (cells keyed by their index in the notebook's `cells` list, from 0, as
nbformat counts) and the language server (cells keyed by their document URI) both build on it.

What a run of a notebook means: every code cell in the order of the notebook, once, as one script;
not the kernel's execution history (cells run out of order or twice in Jupyter are not replayed so).

Each cell line is one script line, so a line number maps back without a table per character. IPython
syntax is not Python: a line magic (`%timeit f()`), a shell line (`!pip install x`, `y = !ls`) and
a help line (`f?`) become `pass` at their indentation (the block around them still parses); a cell
magic (`%%bash`) makes the whole cell skipped, except the ones whose body is Python (`%%time`,
`%%capture`...), of which only the magic line is. Every skip is listed, to be said to the user.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

from .lines import split_lines

# Cell magics whose body is Python that IPython runs as such.
PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug"}

_SHELL_ASSIGN = re.compile(r"^\s*[A-Za-z_][\w.]*(\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[!%]")
_HELP = re.compile(r"^\s*(\?\??[\w.]+|[\w.]+\?\??)\s*$")


def is_notebook(path: str) -> bool:
    return path.lower().endswith(".ipynb")


class NotebookError(ValueError):
    """The file is not a notebook this can read (the message says what to do)."""


@dataclass(frozen=True)
class CellText:
    key: Hashable  # the cell's index in the notebook (check) or its document URI (the language server)
    text: str


@dataclass(frozen=True)
class Skipped:
    cell: Hashable
    line: int  # 1-based, inside the cell
    text: str
    why: str


@dataclass
class NotebookScript:
    script: str
    cells: list[Hashable]  # the code cells, in order
    skipped: list[Skipped] = field(default_factory=list)
    # script line i (0-based) -> (cell, 1-based line inside it)
    origin: list[tuple[Hashable, int]] = field(default_factory=list)
    start: dict[Hashable, int] = field(default_factory=dict)  # cell -> 0-based script line of its first line
    length: dict[Hashable, int] = field(default_factory=dict)  # cell -> how many lines it has

    def cell_line(self, script_line: int) -> tuple[Hashable, int] | None:
        """(cell, 1-based line in it) of a 1-based script line; None outside every cell."""
        if 1 <= script_line <= len(self.origin):
            return self.origin[script_line - 1]
        return None

    def script_line(self, cell: Hashable, line: int) -> int | None:
        """The 1-based script line of a 1-based line of a cell; None when the cell has no such line."""
        if cell not in self.start or not 1 <= line <= self.length[cell]:
            return None
        return self.start[cell] + line

    def cell_ranges(self) -> list[tuple[Hashable, int, int]]:
        """(cell, first, last): the 1-based script lines of each code cell that has lines, in order."""
        return [(c, self.start[c] + 1, self.start[c] + self.length[c]) for c in self.cells if self.length.get(c)]

    def skipped_note(self, name: Callable[[Hashable], str] = str) -> str:
        """One sentence saying which IPython lines did not run ('' when none); `name(cell)` names a cell."""
        if not self.skipped:
            return ""
        where = ", ".join(f"{name(s.cell)} line {s.line}" for s in self.skipped[:5])
        more = f" and {len(self.skipped) - 5} more" if len(self.skipped) > 5 else ""
        return (
            f"IPython lines skipped (magics and shell commands are not Python; the rest of the notebook runs "
            f"as one script): {where}{more}"
        )


def _python_lines(key: Hashable, lines: list[str], skipped: list[Skipped]) -> list[str]:
    first = next((i for i, s in enumerate(lines) if s.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        magic = lines[first].strip()[2:].split(maxsplit=1)[0] if lines[first].strip()[2:] else ""
        if magic not in PYTHON_CELL_MAGICS:
            skipped.append(Skipped(key, first + 1, lines[first].strip(), f"the cell magic %%{magic}: not Python"))
            return ["" for _ in lines]
    out = []
    for i, s in enumerate(lines):
        stripped = s.lstrip()
        # (A magic-looking line inside a triple-quoted string is taken as a magic too: IPython's own
        # line transforms work on lines as well, and notebooks rarely hold such strings.)
        if stripped.startswith(("%", "!")) or _SHELL_ASSIGN.match(s) or _HELP.match(s):
            indent = s[: len(s) - len(stripped)]
            skipped.append(Skipped(key, i + 1, s.strip(), "an IPython magic or shell command"))
            out.append(indent + "pass")
        else:
            out.append(s)
    return out


def build(cells: Sequence[CellText]) -> NotebookScript:
    """The script of these code cells, in this order."""
    nb = NotebookScript(script="", cells=[c.key for c in cells])
    parts: list[str] = []
    for c in cells:
        lines = split_lines(c.text)
        if lines and lines[-1] == "":
            lines.pop()  # a cell ending with a line break has no empty line after it
        nb.start[c.key] = len(nb.origin)
        nb.length[c.key] = len(lines)
        parts += _python_lines(c.key, lines, nb.skipped)
        nb.origin += [(c.key, i + 1) for i in range(len(lines))]
    nb.script = "".join(line + "\n" for line in parts)
    return nb


def code_cells(notebook_text: str) -> list[CellText]:
    """The code cells of an .ipynb file's text (nbformat 4: `source` a string or a list of strings),
    keyed by their index in the `cells` list."""
    try:
        data = json.loads(notebook_text)
    except ValueError as e:
        raise NotebookError(f"not a notebook: its JSON does not parse ({e}); save it again from Jupyter") from e
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise NotebookError(
            "not a notebook in nbformat 4 (no `cells` list): save it again from a current Jupyter or VS Code"
        )
    out = []
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        src = cell.get("source", "")
        out.append(CellText(i, "".join(src) if isinstance(src, list) else str(src)))
    return out


def from_ipynb(notebook_text: str) -> NotebookScript:
    return build(code_cells(notebook_text))


_SOURCE_KEY = re.compile(r'^\s*"source"\s*:\s*(?P<rest>.*)$')


def source_lines_in_file(notebook_text: str) -> dict[int, list[int]]:
    """Where each cell's source lines sit in the .ipynb file itself (1-based lines of the JSON text),
    by cell index: for SARIF and GitHub annotations, which point at lines of the file in the
    repository. Jupyter and VS Code write one JSON string per source line, after a `"source": [`
    line; a cell written otherwise gets the line of its `"source"` key for every line. {} when the
    file's `"source"` keys do not line up one to one with its cells (then callers say cell and line
    in the message only)."""
    try:
        cells = json.loads(notebook_text).get("cells", [])
    except (ValueError, AttributeError):
        return {}
    text_lines = split_lines(notebook_text)
    keys = [i for i, t in enumerate(text_lines) if _SOURCE_KEY.match(t)]
    if len(keys) != len(cells):
        return {}
    out: dict[int, list[int]] = {}
    for index, (cell, at) in enumerate(zip(cells, keys)):
        src = cell.get("source", "") if isinstance(cell, dict) else ""
        n = len(split_lines("".join(src) if isinstance(src, list) else str(src)))
        rest = _SOURCE_KEY.match(text_lines[at])["rest"].strip()  # type: ignore[index]
        if rest == "[" and isinstance(src, list) and len(src) >= 1:
            # one JSON string per list item; items end with "\n", so item k is cell line k + 1
            out[index] = [at + 2 + k for k in range(len(src))]
        else:
            out[index] = [at + 1] * max(n, 1)
    return out
