"""Quick fixes for the size check's findings: edits of the kernel's source that the finding itself proves.

- `wrap`: the int32 operation that overflows (the witness' `op`, at its exact columns) widened to int64
  before the arithmetic: `row * stride` -> `row.to(tl.int64) * stride`.
- `oob-sizes` at an unmasked `tl.load(ptr + offs)` / `tl.store(ptr + offs, v)`: a mask against the size
  that moved (`mask=offs < n`), when the size is a kernel argument and the pointer is the tensor's
  parameter plus an offset expression.

Pure functions over a Finding and the source lines; columns are UTF-8 byte offsets like the Finding's.
Nothing is offered where the edit could not be written with certainty (another pointer form, a mask
already there, a size that is a tensor's shape).

A fix is offered only once a run of the edited text showed it right (lsp/fixcheck.py runs it): `applied`
is that text, `still_reported` the re-run's finding that is the same one again, `checked_title` what the
light bulb then says.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..model import Finding
from ..model.lines import split_lines


@dataclass(frozen=True)
class Fix:
    title: str
    line: int  # 1-based
    col: int  # UTF-8 byte offsets in the line, end exclusive
    end_line: int
    end_col: int
    new_text: str

    @property
    def key(self) -> str:
        """The edit as one string: what a re-check's verdict is filed under (the diagnostic carries it)."""
        return f"{self.line}:{self.col}-{self.end_line}:{self.end_col}={self.new_text}"


def applied(text: str, fix: Fix) -> str | None:
    """`text` with the fix's edit made; None when its range is not in the text."""
    rows = [r.encode() for r in split_lines(text, keepends=True)]
    if not (1 <= fix.line <= fix.end_line <= len(rows)):
        return None

    def offset(line: int, col: int) -> int | None:
        row = rows[line - 1]
        body = len(row.rstrip(b"\r\n"))
        return sum(len(r) for r in rows[: line - 1]) + col if 0 <= col <= body else None

    start, end = offset(fix.line, fix.col), offset(fix.end_line, fix.end_col)
    if start is None or end is None or end < start:
        return None
    raw = b"".join(rows)
    return (raw[:start] + fix.new_text.encode() + raw[end:]).decode(errors="replace")


def still_reported(f: Finding, fix: Fix, findings: Iterable[Finding]) -> Finding | None:
    """The finding of a run of the fixed text that is `f` again: the same kind at the same access (its
    tensor, and its line as the edit moved it). For a `wrap`, whichever operation overflows: the widened
    one no longer can, so a wrap left at the access is another operation's, and the access still breaks
    (`row * stride * 2` widened as `(row * stride).to(tl.int64) * 2` still wraps in `row * stride`)."""
    shift = fix.new_text.count("\n") - (fix.end_line - fix.line)
    line = f.line + shift if f.line > fix.end_line else f.line
    for g in findings:
        if (
            g.kind == f.kind
            and g.arg == f.arg
            and g.access == f.access
            and g.line == line
            and os.path.abspath(g.file) == os.path.abspath(f.file)
        ):
            return g
    return None


def checked_title(f: Finding, fix: Fix) -> str:
    """The fix's title once a run of the edited kernel no longer reports `f`: what the re-check showed."""
    size = f.witness.get("size")
    at = f" at {size}" if size else ""
    shown = f"no wrap{at}" if f.kind == "wrap" else f"in bounds{at}"
    return f"{fix.title} (re-checked: {shown} with this edit)"


_SIZE = re.compile(r"^([A-Za-z_]\w*) = -?\d+$")


def fix_for(f: Finding, lines: list[str]) -> Fix | None:
    if f.kind == "wrap":
        return _widen(f, lines)
    if f.kind == "oob-sizes":
        return _mask(f, lines)
    return None


def _text(lines: list[str], line: int, col: int, end_line: int, end_col: int) -> str | None:
    """The source between two (1-based line, UTF-8 column) positions, None when they are not in `lines`."""
    if not (1 <= line <= end_line <= len(lines)) or col < 0 or end_col < 0:
        return None
    rows = [lines[i].encode() for i in range(line - 1, end_line)]
    if line == end_line:
        return rows[0][col:end_col].decode(errors="replace")
    return b"\n".join([rows[0][col:], *rows[1:-1], rows[-1][:end_col]]).decode(errors="replace")


def _widen(f: Finding, lines: list[str]) -> Fix | None:
    op = f.witness.get("op") or {}
    line, col, end_col = op.get("line", 0), op.get("col", -1), op.get("end_col", -1)
    text = _text(lines, line, col, line, end_col)
    if not text or text != op.get("text"):
        return None  # the source moved since the run
    src = text.strip()
    try:
        node = ast.parse(src, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.BinOp):
        return None
    if src != text or node.left.end_col_offset is None:
        return None
    # The left operand as written, with the parentheses around it: `(pid + 1)` of `(pid + 1) * stride`.
    end = node.left.end_col_offset
    while end < len(src) and src[end] == ")":
        end += 1
    seg = src[:end]
    atom = isinstance(node.left, ast.Name | ast.Attribute | ast.Call | ast.Subscript) or (
        seg.startswith("(") and seg.endswith(")")
    )
    wide = f"{seg if atom else f'({seg})'}.to(tl.int64){src[end:]}"
    return Fix(f"Widen `{src}` to int64 before the arithmetic", line, col, line, end_col, wide)


def _mask(f: Finding, lines: list[str]) -> Fix | None:
    m = _SIZE.match(str(f.witness.get("size", "")))
    call = _text(lines, f.line, f.col, f.end_line or f.line, f.end_col)
    if m is None or call is None or not call.endswith(")"):
        return None
    try:
        node = ast.parse(call, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    name, positional = node.func.attr, {"load": 1, "store": 2}.get(node.func.attr)
    if positional is None or len(node.args) != positional or any(k.arg == "mask" for k in node.keywords):
        return None
    ptr = node.args[0]
    if not isinstance(ptr, ast.BinOp) or not isinstance(ptr.op, ast.Add):
        return None
    if isinstance(ptr.left, ast.Name) and ptr.left.id == f.arg:
        offs = ptr.right
    elif isinstance(ptr.right, ast.Name) and ptr.right.id == f.arg:
        offs = ptr.left
    else:
        return None
    bound = ast.unparse(offs) if isinstance(offs, ast.Name) else f"({ast.unparse(offs)})"
    mask = f"mask={bound} < {m.group(1)}"
    body = call[:-1].rstrip()
    sep = " " if body.endswith(",") else ", "
    # The edit replaces the call's closing parenthesis (one character, ASCII) with the mask and itself.
    end_line = f.end_line or f.line
    return Fix(
        f"Mask the {name} against {m.group(1)}: `{mask}`", end_line, f.end_col - 1, end_line, f.end_col, f"{sep}{mask})"
    )
