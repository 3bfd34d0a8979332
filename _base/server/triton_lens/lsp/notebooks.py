"""Notebooks in the language server (LSP 3.17 notebook document sync). A notebook runs as one
document: its Doc (uri: the notebook's, path: the .ipynb, text: the script its Python code cells make
in order, model/notebook.py) is run, mapped onto edits and turned into diagnostics, hints, hovers and
lenses exactly as a file's is, in the script's lines; this module moves each of them to the cell
document and line where its code is, and back for the requests a cell sends.

pygls keeps the notebook and its cells' texts (workspace.get_notebook_document / get_text_document);
what a run of a notebook means is the model's: every code cell once, in the notebook's order.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types as lsp
from pygls.workspace import Workspace

from ..model.notebook import CellText, NotebookScript, build
from .lenses import DEBUG
from .text import path_of, uri_of

NOTEBOOK_TYPES = ("jupyter-notebook", "interactive")  # VS Code's Jupyter notebooks and its interactive window

SYNC_OPTIONS = lsp.NotebookDocumentSyncOptions(
    notebook_selector=[
        lsp.NotebookDocumentFilterWithCells(cells=[lsp.NotebookCellLanguage("python")], notebook=t)
        for t in NOTEBOOK_TYPES
    ],
    save=True,
)


@dataclass
class Notebook:
    uri: str
    script: NotebookScript  # cells keyed by their document URI, as the client sent it
    published: set[str] = field(default_factory=set)  # cells that were last given diagnostics


def script_of(workspace: Workspace, notebook: lsp.NotebookDocument) -> NotebookScript:
    """The script of the notebook's Python code cells, in order (markdown cells and cells of other
    languages are not part of it)."""
    cells = []
    for cell in notebook.cells:
        if cell.kind != lsp.NotebookCellKind.Code:
            continue
        doc = workspace.get_text_document(cell.document)
        if getattr(doc, "language_id", "python") not in (None, "python"):
            continue
        cells.append(CellText(cell.document, doc.source))
    return build(cells)


def notebook_path(uri: str, roots: list[str]) -> str | None:
    """Where the notebook runs: its .ipynb file; an unsaved notebook or the interactive window (no
    file) runs as if it were a file in the first workspace folder, which is its working directory."""
    p = path_of(uri)
    if p:
        return os.path.abspath(p)
    if not roots:
        return None
    name = uri.split("?")[0].split("#")[0].rsplit("/", 1)[-1].rsplit(":", 1)[-1] or "notebook"
    return os.path.join(roots[0], name)


def line_names(nb: Notebook, notebook: lsp.NotebookDocument | None, path: str) -> list[dict[str, Any]]:
    """The viewer's names of the notebook's script lines (the overview's lineNames): each code cell's
    lines as `cell N`, N its 1-based position among the notebook's cells as the client sent them. VS Code
    sends only the Python cells, so its extension renames each by the cell's own index in the notebook
    (`cell` is the cell's URI), as its status bar counts ("Cell 3 of 5", markdown cells included)."""
    position = {c.document: i + 1 for i, c in enumerate(notebook.cells)} if notebook is not None else {}
    out = []
    for cell, first, last in nb.script.cell_ranges():
        n = position.get(str(cell))
        if n is not None:
            out.append({"file": path, "first": first, "last": last, "name": f"cell {n}", "cell": str(cell)})
    return out


def _to_cell(nb: Notebook, line0: int) -> tuple[str, int] | None:
    """The cell URI and 0-based line in it of a 0-based script line."""
    hit = nb.script.cell_line(line0 + 1)
    return None if hit is None else (str(hit[0]), hit[1] - 1)


def _moved(rng: lsp.Range, line0: int) -> lsp.Range:
    """The range moved so that its start is on `line0` (a range never spans two cells)."""
    d = line0 - rng.start.line
    return lsp.Range(lsp.Position(line0, rng.start.character), lsp.Position(rng.end.line + d, rng.end.character))


def cell_diagnostics(
    nb: Notebook, doc_uri: str, path: str, diags: list[lsp.Diagnostic]
) -> dict[str, list[lsp.Diagnostic]]:
    """The document's diagnostics (in the script's lines) per cell URI; every cell has an entry, so
    that a cell whose last diagnostic went away is cleared."""
    out: dict[str, list[lsp.Diagnostic]] = {str(c): [] for c in nb.script.cells}
    own = {doc_uri, uri_of(path)}
    for d in diags:
        hit = _to_cell(nb, d.range.start.line)
        if hit is None:
            continue
        related = []
        for ri in d.related_information or []:
            loc = ri.location
            if loc.uri in own:
                rh = _to_cell(nb, loc.range.start.line)
                if rh is None:
                    continue
                loc = lsp.Location(rh[0], _moved(loc.range, rh[1]))
            related.append(lsp.DiagnosticRelatedInformation(loc, ri.message))
        data = d.data
        if isinstance(data, dict) and isinstance(data.get("fix"), dict):  # the quick fix's edit, moved too
            data = dict(data)
            fix = dict(data.pop("fix"))
            r = fix["range"]
            fh = _to_cell(nb, r["start"]["line"])
            if fh is not None and fh[0] == hit[0] and r["start"]["line"] == r["end"]["line"]:
                fix["range"] = {
                    "start": {"line": fh[1], "character": r["start"]["character"]},
                    "end": {"line": fh[1], "character": r["end"]["character"]},
                }
                data["fix"] = fix
        out.setdefault(hit[0], []).append(
            lsp.Diagnostic(
                range=_moved(d.range, hit[1]),
                message=d.message,
                severity=d.severity,
                code=d.code,
                source=d.source,
                related_information=related or None,
                data=data,
                tags=d.tags,
            )
        )
    return out


def script_position(nb: Notebook, cell_uri: str, pos: lsp.Position) -> lsp.Position | None:
    line = nb.script.script_line(cell_uri, pos.line + 1)
    return None if line is None else lsp.Position(line - 1, pos.character)


def cell_hints(nb: Notebook, cell_uri: str, hints: list[lsp.InlayHint], rng: lsp.Range) -> list[lsp.InlayHint]:
    """The hints (in the script's lines) that fall in this cell and in the range asked for."""
    out = []
    for h in hints:
        hit = _to_cell(nb, h.position.line)
        if hit is None or hit[0] != cell_uri or not rng.start.line <= hit[1] <= rng.end.line:
            continue
        out.append(
            lsp.InlayHint(
                position=lsp.Position(hit[1], h.position.character),
                label=h.label,
                tooltip=h.tooltip,
                padding_left=h.padding_left,
            )
        )
    return out


def cell_hover(nb: Notebook, h: lsp.Hover | None) -> lsp.Hover | None:
    if h is None or h.range is None:
        return h
    hit = _to_cell(nb, h.range.start.line)
    return lsp.Hover(contents=h.contents, range=_moved(h.range, hit[1]) if hit else None)


def cell_lenses(nb: Notebook, cell_uri: str, lenses: list[lsp.CodeLens]) -> list[lsp.CodeLens]:
    """The lenses above the kernels of this cell. Their commands keep the notebook's URI and the
    script's line: the kernel is the notebook's, and the extension asks the server about it by those.
    No "Debug this kernel": the debugger runs a .py file and sets breakpoints by file path, which a
    cell does not have (the extension says so if the command is called on a notebook)."""
    out = []
    for lens in lenses:
        hit = _to_cell(nb, lens.range.start.line)
        if lens.command is not None and lens.command.command == DEBUG:
            continue
        if hit is not None and hit[0] == cell_uri:
            out.append(lsp.CodeLens(range=_moved(lens.range, hit[1]), command=lens.command, data=lens.data))
    return out
