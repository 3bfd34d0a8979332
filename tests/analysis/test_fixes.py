"""analysis/fixes.py on hand-written source lines: the edit each size finding proves, and nothing where
the edit could not be written with certainty. (tests/lsp/test_quick_fixes.py applies them for real.)"""

from __future__ import annotations

import pytest

from triton_lens.analysis.fixes import fix_for
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
