"""Odd text: characters str.splitlines breaks at but Python and VS Code do not (form feed, \\x0b,
U+2028) keep every result on its line; a latin-1 file with a coding cookie runs as Python runs
it; bytes that decode in no declared encoding are a clear error with valid JSON, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from markers import CORPUS

from triton_lens.analysis import analyze
from triton_lens.trace_engine.process.runner import RunRequest, run

ODD_LINE = "PAGE = 1  # \x0c \x0b \u2028 \u2029 \x1c \x85 are not line breaks\n"


def _oob_lines(r):
    return sorted(f.line for f in analyze(r).findings if f.kind == "oob")


@pytest.mark.parametrize("from_buffer", [True, False])
def test_characters_that_are_no_line_break_keep_results_on_their_lines(tmp_path, from_buffer):
    plain = (CORPUS / "oob_missing_mask.py").read_text()
    expected = [line + 1 for line in _oob_lines(run(RunRequest(path=str(CORPUS / "oob_missing_mask.py"))))]
    odd = ODD_LINE + plain
    path = tmp_path / "odd.py"
    path.write_text(plain if from_buffer else odd, encoding="utf-8", newline="")
    r = run(RunRequest(path=str(path), source=odd if from_buffer else None))
    assert r.status == "ok", r.error
    assert _oob_lines(r) == expected


def test_a_latin1_file_with_a_coding_cookie_runs_as_python_runs_it(tmp_path):
    src = (CORPUS / "vector_add.py").read_text()
    text = "# -*- coding: latin-1 -*-\n" + src + "\nprint('caf\u00e9 \u00b5s')\n"
    path = tmp_path / "latin1.py"
    path.write_bytes(text.encode("latin-1"))
    r = run(RunRequest(path=str(path)))
    assert r.status == "ok", r.error
    assert "caf\u00e9 \u00b5s" in r.stdout and r.launches


def test_undecodable_bytes_are_a_clear_error_and_check_exits_2_with_json(tmp_path):
    path = tmp_path / "broken.py"
    path.write_bytes(b"import torch\nname = '\xff\xfe caf\xe9'\nprint(name)\n")
    p = subprocess.run(
        [sys.executable, "-m", "triton_lens", "check", str(path), "--json"], capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    out = json.loads(p.stdout)
    assert out["status"] == "error"
    msgs = [f["message"] for f in out["findings"]]
    assert any("not valid utf-8" in m and "line 2" in m and "coding" in m for m in msgs), out
    assert any(f["line"] == 2 for f in out["findings"]), out["findings"]
    # Without --json: one line on stderr that says what to do.
    p = subprocess.run(
        [sys.executable, "-m", "triton_lens", "check", str(path)], capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr and "Save the file as UTF-8" in p.stderr


@pytest.mark.parametrize("from_buffer", [True, False])
def test_a_nul_byte_is_reported_at_its_line(tmp_path, from_buffer):
    # Python refuses the whole file ("source code string cannot contain null bytes") with no line.
    text = (CORPUS / "vector_add.py").read_text()
    lines = text.split("\n")
    lines[4] = lines[4] + "  # pasted \x00 here"
    bad = "\n".join(lines)
    path = tmp_path / "nul.py"
    path.write_text(text if from_buffer else bad, encoding="utf-8", newline="")
    r = run(RunRequest(path=str(path), source=bad if from_buffer else None))
    assert r.status == "exception" and r.error.type == "SyntaxError", r.error
    assert r.error.line == 5 and r.error.file == str(path), r.error
    assert "NUL" in r.error.message and "column" in r.error.message
