"""analysis/fixes.py on hand-written source lines: the edit each size finding proves, and nothing where
the edit could not be written with certainty. (tests/lsp/test_quick_fixes.py applies them for real.)"""

from __future__ import annotations

from dataclasses import replace

import pytest

from triton_lens.analysis.fixes import Fix, applied, checked_title, fix_for, still_reported
from triton_lens.model import Finding


def _at(lines: list[str], line: int, text: str) -> tuple[int, int]:
    col = lines[line - 1].index(text)
    return col, col + len(text)


def _apply(lines: list[str], fix) -> str:
    row = lines[fix.line - 1]
    return row[: fix.col] + fix.new_text + row[fix.end_col :]


def _oob_sizes(lines, line, call, size="n = 4097", arg="x_ptr"):
    col, end = _at(lines, line, call)
    return Finding("oob-sizes", "warning", "k.py", line, "", col, line, end, arg=arg, witness={"size": size})


def _wrap(lines, line, op):
    col, end = _at(lines, line, op)
    w = {"op": {"text": op, "file": "k.py", "line": line, "col": col, "end_col": end}}
    return Finding("wrap", "warning", "k.py", line, "", 0, line, 1, arg="x_ptr", witness=w)


@pytest.mark.parametrize(
    ("src", "op", "fixed"),
    [
        ("    x = tl.load(x_ptr + row * stride + cols)", "row * stride", "row.to(tl.int64) * stride"),
        ("    p = x_ptr + (pid + 1) * stride", "(pid + 1) * stride", "(pid + 1).to(tl.int64) * stride"),
        ("    p = x_ptr + pid * BLOCK * stride", "pid * BLOCK * stride", "(pid * BLOCK).to(tl.int64) * stride"),
    ],
)
def test_a_wrap_is_fixed_by_widening_the_left_operand(src, op, fixed):
    lines = [src]
    fix = fix_for(_wrap(lines, 1, op), lines)
    assert fix is not None and fix.new_text == fixed and _apply(lines, fix) == src.replace(op, fixed)


def test_a_wrap_whose_source_moved_since_the_run_gets_no_fix():
    lines = ["    x = tl.load(x_ptr + row * stride + cols)"]
    f = _wrap(lines, 1, "row * stride")
    assert fix_for(f, ["    x = tl.load(x_ptr + rows * stride + cols)"]) is None


@pytest.mark.parametrize(
    ("src", "call", "fixed"),
    [
        ("    x = tl.load(x_ptr + offs)", "tl.load(x_ptr + offs)", "tl.load(x_ptr + offs, mask=offs < n)"),
        ("    x = tl.load(offs + x_ptr,)", "tl.load(offs + x_ptr,)", "tl.load(offs + x_ptr, mask=offs < n)"),
        (
            "    tl.store(x_ptr + pid * B + r, v)",
            "tl.store(x_ptr + pid * B + r, v)",
            None,  # `x_ptr + pid * B + r` is (x_ptr + pid * B) + r: not the parameter plus one offset
        ),
        (
            "    tl.store(x_ptr + (pid * B + r), v)",
            "tl.store(x_ptr + (pid * B + r), v)",
            "tl.store(x_ptr + (pid * B + r), v, mask=(pid * B + r) < n)",
        ),
        ("    x = tl.load(x_ptr + offs, mask=m)", "tl.load(x_ptr + offs, mask=m)", None),
        ("    x = tl.load(y_ptr + offs)", "tl.load(y_ptr + offs)", None),  # the finding's tensor is x_ptr
    ],
)
def test_an_unmasked_access_out_of_bounds_at_a_size_is_fixed_by_a_mask_against_it(src, call, fixed):
    lines = [src]
    fix = fix_for(_oob_sizes(lines, 1, call), lines)
    if fixed is None:
        assert fix is None
    else:
        assert fix is not None and _apply(lines, fix) == src.replace(call, fixed)


def test_a_size_that_is_a_tensors_shape_gets_no_mask():
    lines = ["    x = tl.load(x_ptr + offs)"]
    assert fix_for(_oob_sizes(lines, 1, "tl.load(x_ptr + offs)", size="x.shape = (4097,)"), lines) is None


def test_the_text_a_re_check_runs_is_the_source_with_the_edit_made():
    src = "import triton\r\n# é\n    x = tl.load(x_ptr + row * stride + cols)\nrest\n"
    lines = src.replace("\r", "").split("\n")
    fix = fix_for(_wrap(lines, 3, "row * stride"), lines)
    assert fix is not None
    assert applied(src, fix) == src.replace("row * stride", "row.to(tl.int64) * stride")
    past = Fix(fix.title, 9, 0, 9, 1, "x")
    assert applied(src, past) is None  # the range is not in the text


def test_the_re_runs_finding_at_the_same_access_is_the_same_one_whatever_operation_wraps():
    lines = ["    base = row * stride * 2", "    x = tl.load(x_ptr + base + cols)"]
    f = _wrap(lines, 1, "row * stride * 2")
    f = replace(f, line=2, end_line=2, access="load")
    fix = fix_for(f, lines)
    assert fix is not None and fix.new_text == "(row * stride).to(tl.int64) * 2"
    other_op = replace(f, witness={"op": {"text": "row * stride", "line": 1}})
    assert still_reported(f, fix, [other_op]) is other_op  # the access still wraps: refuted
    assert still_reported(f, fix, [replace(f, arg="y_ptr"), replace(f, kind="oob-sizes"), replace(f, line=3)]) is None


def test_a_finding_below_an_edit_that_adds_lines_is_looked_for_where_it_moved():
    lines = ["    x = tl.load(x_ptr + offs)", "", "    tl.store(y_ptr + offs, x)"]
    f = _oob_sizes(lines, 3, "tl.store(y_ptr + offs, x)", arg="y_ptr")
    edit = Fix("t", 1, 0, 1, 0, "# a\n# b\n")  # two lines added above the store
    assert still_reported(f, edit, [replace(f, line=5, end_line=5)]) is not None
    assert still_reported(f, edit, [f]) is None


def test_a_re_checked_title_says_what_the_run_showed_and_at_which_size():
    lines = ["    x = tl.load(x_ptr + offs)"]
    f = _oob_sizes(lines, 1, "tl.load(x_ptr + offs)")
    fix = fix_for(f, lines)
    assert fix is not None
    assert (
        checked_title(f, fix)
        == "Mask the load against n: `mask=offs < n` (re-checked: in bounds at n = 4097 with this edit)"
    )
    w = _wrap(["    x = tl.load(x_ptr + row * stride)"], 1, "row * stride")
    w.witness["size"] = "x_ptr.shape = (524289, 4096)"
    wfix = fix_for(w, ["    x = tl.load(x_ptr + row * stride)"])
    assert wfix is not None and checked_title(w, wfix).endswith(
        "(re-checked: no wrap at x_ptr.shape = (524289, 4096) with this edit)"
    )
