"""`triton-lens check` of notebooks: a finding's location is the cell (index in the notebook's
`cells` list, from 0) and the line inside it, in text, json, sarif and github; folders contribute
their notebooks; the skipped IPython lines are said; the cells run with the notebook's folder as
the working directory."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from triton_lens.check.run_all import Options, check_all
from triton_lens.check.targets import find_targets
from triton_lens.report import github, sarif

DATA = Path(__file__).parent / "data"
# oob_cells.ipynb: cell 2 is the kernel, its line 5 the load without a mask; cell 4 launches it.
KERNEL_CELL, LOAD_LINE = 2, 5


def check(*args: str, cwd: Path):
    return subprocess.run(
        [sys.executable, "-m", "triton_lens", "check", *args], capture_output=True, text=True, timeout=300, cwd=cwd
    )


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("notebooks")
    for name in ("oob_cells.ipynb", "clean_cells.ipynb"):
        shutil.copy(DATA / name, root / name)
    return root


def test_text_names_cell_and_line(folder):
    p = check("oob_cells.ipynb", "--show-output", cwd=folder)
    assert p.returncode == 1, p.stdout + p.stderr
    assert f"oob_cells.ipynb:cell {KERNEL_CELL}:{LOAD_LINE}:9: error: x_ptr: 24 lanes" in p.stdout
    assert "note: IPython lines skipped" in p.stdout and "cell 1 line 1, cell 4 line 1" in p.stdout
    assert f"cell {KERNEL_CELL}:{LOAD_LINE}  load   x_ptr" in p.stdout  # the per-line table
    assert "copied [0.0, 1.0, 2.0]" in p.stdout  # --show-output: the cells' own output


def test_json_of_a_folder_finds_its_notebooks(folder):
    p = check(".", "--json", "--jobs", "1", cwd=folder)
    assert p.returncode == 1, p.stderr
    files = {Path(f["file"]).name: f for f in json.loads(p.stdout)["files"]}
    assert set(files) == {"oob_cells.ipynb", "clean_cells.ipynb"}
    assert files["clean_cells.ipynb"]["findings"] == [] and files["clean_cells.ipynb"]["status"] == "ok"
    oob = files["oob_cells.ipynb"]
    (f,) = oob["findings"]
    assert (f["kind"], f["cell"], f["line"], f["end_line"]) == ("oob", KERNEL_CELL, LOAD_LINE, LOAD_LINE)
    (launch,) = oob["launches"]
    assert (launch["cell"], launch["line"], launch["def_cell"], launch["def_line"]) == (4, 4, KERNEL_CELL, 2)
    assert {(a["cell"], a["line"], a["kind"]) for a in oob["accesses"]} == {(2, 5, "load"), (2, 6, "store")}
    assert [s["cell"] for s in oob["notebook"]["skipped"]] == [1, 4]


@pytest.fixture(scope="module")
def checked(folder, monkeypatch_module):
    monkeypatch_module.chdir(folder)
    t = find_targets(["oob_cells.ipynb"])
    return check_all(t.files, Options(jobs=1))


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_sarif_and_github_point_at_the_line_of_the_ipynb_file(folder, checked):
    text_lines = (folder / "oob_cells.ipynb").read_text().splitlines()
    (res,) = sarif.log(checked, [])["runs"][0]["results"]
    region = res["locations"][0]["physicalLocation"]["region"]
    assert "tl.load(x_ptr + offs)" in text_lines[region["startLine"] - 1]
    assert res["message"]["text"].startswith(f"cell {KERNEL_CELL}, line {LOAD_LINE}: x_ptr:")
    assert (res["properties"]["cell"], res["properties"]["cellLine"]) == (KERNEL_CELL, LOAD_LINE)
    (line,) = github.lines(checked)
    assert line.startswith(f"::error file=oob_cells.ipynb,line={region['startLine']},title=")
    assert f"::cell {KERNEL_CELL}, line {LOAD_LINE}: x_ptr:" in line


def test_cells_run_in_the_notebooks_folder(tmp_path):
    nb = json.loads((DATA / "clean_cells.ipynb").read_text())
    nb["cells"].append(
        {
            "cell_type": "code",
            "metadata": {},
            "outputs": [],
            "execution_count": None,
            "source": ["import os\n", "open('here.txt', 'w').write(os.getcwd())\n"],
        }
    )
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "nb.ipynb").write_text(json.dumps(nb))
    p = check("sub/nb.ipynb", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (tmp_path / "sub" / "here.txt").read_text() == str(tmp_path / "sub")


def test_a_notebook_that_is_not_json_is_a_tool_error_that_says_so(tmp_path):
    (tmp_path / "bad.ipynb").write_text("{ not json")
    p = check("bad.ipynb", cwd=tmp_path)
    assert p.returncode == 2
    assert "bad.ipynb: not a notebook: its JSON does not parse" in p.stdout + p.stderr


def test_a_syntax_error_names_its_cell_and_line(tmp_path):
    nb = json.loads((DATA / "clean_cells.ipynb").read_text())
    nb["cells"][4]["source"] = ["x = torch.arange(1000\n", "print(x)\n"]
    (tmp_path / "syn.ipynb").write_text(json.dumps(nb))
    p = check("syn.ipynb", "--json", cwd=tmp_path)
    (f,) = json.loads(p.stdout)["findings"]
    assert (f["kind"], f["cell"], f["line"]) == ("exception", 4, 1)
    assert "(syn.ipynb, cell 4, line 1)" in f["message"]
