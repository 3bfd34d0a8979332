"""lsp/notebooks.py without a server: where a notebook with no file runs, and diagnostics moved from
the script's lines to the cells (related locations in the notebook too)."""

from __future__ import annotations

from lsprotocol import types as lsp

from triton_lens.lsp.notebooks import Notebook, cell_diagnostics, notebook_path, script_position
from triton_lens.model.notebook import CellText, build


def test_a_notebook_without_a_file_runs_in_the_first_workspace_folder():
    assert notebook_path("file:///tmp/a%20b/nb.ipynb", ["/ws"]) == "/tmp/a b/nb.ipynb"
    assert notebook_path("vscode-interactive:/Interactive-1.interactive", ["/ws"]) == "/ws/Interactive-1.interactive"
    assert notebook_path("untitled:Untitled-1.ipynb", ["/ws"]) == "/ws/Untitled-1.ipynb"
    assert notebook_path("untitled:Untitled-1.ipynb", []) is None  # nowhere to run


def _rng(line: int, col: int = 0) -> lsp.Range:
    return lsp.Range(lsp.Position(line, col), lsp.Position(line, col + 3))


def test_diagnostics_move_to_their_cells_and_every_cell_gets_an_entry():
    nb = Notebook(
        "file:///n/nb.ipynb", build([CellText("c0", "a\nb\n"), CellText("c1", "c\nd\n"), CellText("c2", "e")])
    )
    related = lsp.DiagnosticRelatedInformation(lsp.Location("file:///n/nb.ipynb", _rng(1)), "the other access")
    d = lsp.Diagnostic(range=_rng(3, 4), message="m", code="race", related_information=[related])
    out = cell_diagnostics(nb, nb.uri, "/n/nb.ipynb", [d])
    assert set(out) == {"c0", "c1", "c2"} and out["c0"] == [] and out["c2"] == []
    (moved,) = out["c1"]
    assert (moved.range.start.line, moved.range.start.character, moved.range.end.line) == (1, 4, 1)
    (r,) = moved.related_information
    assert (r.location.uri, r.location.range.start.line) == ("c0", 1)
    assert script_position(nb, "c1", lsp.Position(1, 2)) == lsp.Position(3, 2)
    assert script_position(nb, "c1", lsp.Position(5, 0)) is None
