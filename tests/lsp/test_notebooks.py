"""The server on a Jupyter notebook (LSP 3.17 notebook sync), over stdio as VS Code drives it: the
code cells run as one script; diagnostics are published on the kernel cell's URI at the line inside
the cell, hints, hovers and lenses answer the cell's own requests, and an edit of one cell reruns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsp_harness import Session, file_uri, session_fixture
from lsprotocol import types as lsp

pytestmark = pytest.mark.asyncio(loop_scope="module")
DATA = Path(__file__).parent.parent / "notebooks" / "data"
client = session_fixture({"debounceMs": 100})


def cell_uri(nb: Path, index: int) -> str:
    return f"vscode-notebook-cell:{nb.resolve().as_posix()}#W{index}sZmlsZQ%3D%3D"  # as VS Code names cells


def open_notebook(session: Session, nb: Path) -> tuple[str, list[str], list[str]]:
    """Opens nb as VS Code does: (notebook uri, cell uris, cell texts)."""
    cells = json.loads(nb.read_text())["cells"]
    uris = [cell_uri(nb, i) for i in range(len(cells))]
    texts = ["".join(c["source"]) for c in cells]
    uri = file_uri(nb)
    session.versions[uri] = 1
    session.client.notebook_document_did_open(
        lsp.DidOpenNotebookDocumentParams(
            notebook_document=lsp.NotebookDocument(
                uri=uri,
                notebook_type="jupyter-notebook",
                version=1,
                cells=[
                    lsp.NotebookCell(
                        kind=lsp.NotebookCellKind.Code if c["cell_type"] == "code" else lsp.NotebookCellKind.Markup,
                        document=u,
                    )
                    for c, u in zip(cells, uris)
                ],
            ),
            cell_text_documents=[
                lsp.TextDocumentItem(u, "python" if c["cell_type"] == "code" else "markdown", 1, t)
                for c, u, t in zip(cells, uris, texts)
            ],
        )
    )
    return uri, uris, texts


async def test_diagnostics_hints_hovers_and_lenses_land_on_the_kernel_cell(session: Session, tmp_path):
    nb = tmp_path / "oob_cells.ipynb"
    nb.write_text((DATA / "oob_cells.ipynb").read_text())
    uri, cells, texts = open_notebook(session, nb)
    done = await session.finished_run(uri)
    assert done["status"] == "ok" and done["launches"] == 1
    kernel = cells[2]
    load_line = texts[2].splitlines().index("    x = tl.load(x_ptr + offs)")
    diags = await session.wait_for(lambda: session.diagnostics(kernel), what="diagnostics on the kernel cell")
    (d,) = diags
    assert (d.code, d.range.start.line, d.range.start.character) == ("oob", load_line, 8)
    assert "24 lanes of program (7,)" in d.message
    assert session.diagnostics(cells[4]) == [] and session.diagnostics(uri) == []  # not on the launch cell
    hints = await session.hints(kernel)
    assert {h.position.line for h in hints} == {load_line, load_line + 1}
    assert await session.hints(cells[4]) == []
    hover = await session.hover(kernel, load_line, 12)
    assert hover is not None and "x_ptr" in hover.contents.value
    assert hover.range is not None and hover.range.start.line == load_line
    lenses = await session.lenses(kernel)
    assert lenses and all(lens.range.start.line == 0 for lens in lenses)  # the kernel starts at its decorator
    assert await session.lenses(cells[4]) == []

    # Masking the load in the kernel cell reruns the notebook and clears its diagnostic.
    fixed = texts[2].replace("tl.load(x_ptr + offs)", "tl.load(x_ptr + offs, mask=offs < n)")
    session.versions[uri] = 2
    session.client.notebook_document_did_change(
        lsp.DidChangeNotebookDocumentParams(
            notebook_document=lsp.VersionedNotebookDocumentIdentifier(version=2, uri=uri),
            change=lsp.NotebookDocumentChangeEvent(
                cells=lsp.NotebookDocumentCellChanges(
                    text_content=[
                        lsp.NotebookDocumentCellContentChanges(
                            document=lsp.VersionedTextDocumentIdentifier(version=2, uri=kernel),
                            changes=[lsp.TextDocumentContentChangeWholeDocument(text=fixed)],
                        )
                    ]
                )
            ),
        )
    )
    await session.finished_run(uri, version=2)
    await session.wait_for(lambda: session.diagnostics(kernel) == [], what="the fixed cell's diagnostics cleared")

    session.client.notebook_document_did_close(
        lsp.DidCloseNotebookDocumentParams(
            notebook_document=lsp.NotebookDocumentIdentifier(uri),
            cell_text_documents=[lsp.TextDocumentIdentifier(u) for u in cells],
        )
    )
