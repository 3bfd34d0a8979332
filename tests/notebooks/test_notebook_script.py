"""model/notebook.py: the script a notebook's code cells make and the line mapping both ways, the
IPython lines it skips, and where a cell's lines sit in the .ipynb file (for SARIF and GitHub)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from triton_lens.model.notebook import (
    CellText,
    NotebookError,
    build,
    code_cells,
    from_ipynb,
    source_lines_in_file,
)

DATA = Path(__file__).parent / "data"


def test_cells_run_in_order_and_lines_map_both_ways():
    nb = build([CellText("a", "x = 1\ny = 2\n"), CellText("b", ""), CellText("c", "z = x + y")])
    assert nb.script == "x = 1\ny = 2\nz = x + y\n"
    assert [nb.cell_line(n) for n in (1, 2, 3)] == [("a", 1), ("a", 2), ("c", 1)]
    assert nb.cell_line(0) is None and nb.cell_line(4) is None
    assert nb.script_line("c", 1) == 3 and nb.script_line("a", 2) == 2
    assert nb.script_line("b", 1) is None  # an empty cell has no line
    assert nb.script_line("a", 3) is None
    compile(nb.script, "nb", "exec")


def test_magics_and_shell_lines_become_pass_at_their_indentation():
    cell = "%matplotlib inline\nfor i in range(2):\n    !echo $i\nfiles = !ls\nlen?\nprint(1 % 2)"
    nb = build([CellText(0, cell)])
    lines = nb.script.splitlines()
    assert lines == ["pass", "for i in range(2):", "    pass", "pass", "pass", "print(1 % 2)"]
    assert [(s.cell, s.line) for s in nb.skipped] == [(0, 1), (0, 3), (0, 4), (0, 5)]
    compile(nb.script, "nb", "exec")
    assert "cell 0 line 1" in nb.skipped_note(lambda c: f"cell {c}")


def test_a_cell_magic_skips_its_cell_unless_its_body_is_python():
    nb = build([CellText(0, "%%bash\necho hi\n"), CellText(1, "%%time\nx = 1\n")])
    assert nb.script.splitlines() == ["", "", "pass", "x = 1"]
    assert [s.why for s in nb.skipped] == ["the cell magic %%bash: not Python", "an IPython magic or shell command"]
    assert nb.cell_line(4) == (1, 2)  # the skipped lines keep their places


def test_code_cells_of_an_ipynb_keep_their_index_in_the_cells_list():
    text = (DATA / "oob_cells.ipynb").read_text()
    cells = code_cells(text)
    assert [c.key for c in cells] == [1, 2, 4]  # cells 0 and 3 are markdown
    nb = from_ipynb(text)
    line = next(i for i, s in enumerate(nb.script.splitlines(), 1) if "tl.load" in s)
    assert nb.cell_line(line) == (2, 5)


def test_where_cell_lines_sit_in_the_file():
    text = (DATA / "oob_cells.ipynb").read_text()
    where = source_lines_in_file(text)
    file_lines = text.splitlines()
    assert "tl.load(x_ptr + offs)" in file_lines[where[2][4] - 1]
    # a cell whose source is one string: every line at its "source" key
    one = json.dumps({"cells": [{"cell_type": "code", "source": "a = 1\nb = 2", "outputs": []}]}, indent=1)
    assert source_lines_in_file(one) == {0: [5, 5]}  # line 5: `"source": "a = 1\nb = 2",`


@pytest.mark.parametrize(
    "text, words",
    [("{not json", "does not parse"), ('{"worksheets": []}', "nbformat 4")],
)
def test_a_file_that_is_not_a_notebook_says_what_to_do(text, words):
    with pytest.raises(NotebookError, match=words) as e:
        from_ipynb(text)
    assert "save it again" in str(e.value)
