"""The server on a Jupyter notebook (LSP 3.17 notebook sync), over stdio as VS Code drives it: the
code cells run as one script; diagnostics are published on the kernel cell's URI at the line inside
the cell, hints, hovers and lenses answer the cell's own requests, and an edit of one cell reruns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsp_harness import Session, _plain, file_uri, session_fixture
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
    titles = [lens.command.title for lens in lenses]
    assert "▶ Visualize this kernel" in titles and "Debug this kernel" not in titles  # no debugging of a cell
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


async def ask(session: Session, method: str, params: dict):
    return _plain(await session.request(f"tritonLens/{method}", params))


async def test_the_access_map_lines_are_the_cells_lines(session: Session, tmp_path):
    """The access map names lines as the run does (the .ipynb and the script's line); the extension
    asks the server for the view's line of a cell's cursor, and for the cell and line of a line the
    page reveals. Both ways go through the notebook's own mapping, checked against the view's answers."""
    nb = tmp_path / "oob_cells.ipynb"
    nb.write_text((DATA / "oob_cells.ipynb").read_text())
    uri, cells, texts = open_notebook(session, nb)
    await session.finished_run(uri)
    kernel, launch = cells[2], cells[4]
    kernel_lines = texts[2].splitlines()
    load = kernel_lines.index("    x = tl.load(x_ptr + offs)") + 1  # 1-based, inside the cell
    store = kernel_lines.index("    tl.store(y_ptr + offs, x, mask=offs < n)") + 1

    ov = await ask(session, "kernels", {"uri": uri})
    (k,) = ov["kernels"]
    (li,) = k["launches"]
    at = {line: await ask(session, "viewLocation", {"uri": kernel, "line": line}) for line in (1, load, store)}
    assert all(a["uri"] == uri and a["file"] == k["file"] == str(nb.resolve()) for a in at.values())
    # the access map's statements of the cell's load and store are at the lines the cursor maps to
    amaps = [
        await ask(session, "accessMap", {"uri": uri, "launch": li["index"], "tensor": t["index"]})
        for t in li["tensors"]
    ]
    assert {at[load]["line"], at[store]["line"]} <= {s["line"] for m in amaps for s in m["sites"]}
    assert k["line"] in (at[1]["line"], at[1]["line"] + 1)  # the kernel's decorator or def: the cell's first lines
    # the launch's line, revealed, is the launch cell's launch line; the load's is the kernel cell's
    launch_line = texts[4].splitlines().index("copy_kernel[(triton.cdiv(1000, 128),)](x, y, 1000, BLOCK=128)") + 1
    back = await ask(session, "editorLocation", {"uri": uri, "file": li["file"], "line": li["line"]})
    assert back == {"uri": launch, "line": launch_line}
    back = await ask(session, "editorLocation", {"uri": uri, "file": k["file"], "line": at[load]["line"]})
    assert back == {"uri": kernel, "line": load}
    # the page names the notebook's lines by cell, as VS Code counts cells (from 1, markdown cells
    # too: cell 0 of the file is markdown, so the kernel's is "cell 3"): one range per code cell,
    # in order, over the script's lines, and the load's script line is line `load` of cell 3
    names = ov["lineNames"]
    kinds = [c["cell_type"] for c in json.loads(nb.read_text())["cells"]]
    assert [n["name"] for n in names] == [f"cell {i + 1}" for i, kind in enumerate(kinds) if kind == "code"]
    assert all(n["file"] == k["file"] for n in names)
    assert all(a["last"] < b["first"] for a, b in zip(names, names[1:]))
    (mine,) = [n for n in names if n["first"] <= at[load]["line"] <= n["last"]]
    assert (mine["name"], at[load]["line"] - mine["first"] + 1) == ("cell 3", load)
    assert mine["last"] - mine["first"] + 1 == len(kernel_lines)
    # a markdown cell is not part of the script; a line past a cell's end is nowhere
    assert await ask(session, "viewLocation", {"uri": cells[0], "line": 1}) is None
    assert await ask(session, "viewLocation", {"uri": kernel, "line": len(kernel_lines) + 1}) is None
    # a file of the kernel's other than the notebook is shown as itself
    other = str(tmp_path / "helpers.py")
    assert await ask(session, "editorLocation", {"uri": uri, "file": other, "line": 3}) == {
        "uri": file_uri(other),
        "line": 3,
    }
