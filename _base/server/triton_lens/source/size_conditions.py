"""What a kernel's author says of its sizes where the kernel cannot: `# triton-lens: sizes n <= 2**24, M % 16 == 0`.

A kernel states some preconditions itself (`tl.assume`, `tl.static_assert`); others live only in its host
code or its documentation (the caller pads M to 16, the library never passes more than 2**24 rows). The size
check (trace_engine/recording/size_probe.py) would otherwise try sizes no caller makes. The comment says:

    # triton-lens: sizes COND[, COND ...]

in the comment lines directly above the kernel's decorators (or `def`), or on any line of its body. Each
COND is a Python expression over the kernel's integer arguments (and constexprs) by name: integer literals,
`+ - * // % **`, comparisons (chained ones too), `and`, `or`, `not`. Several comments add up. A size the
conditions refuse is one the kernel does not admit, as one a `tl.assume` refuses.

Text only: read from the file's lines and syntax tree, evaluated by a walk of that tree (nothing is run).
"""

from __future__ import annotations

import ast
import io
import operator
import re
import tokenize
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

_COMMENT = re.compile(r"#\s*triton-lens:\s*sizes\b(.*)$")

_BIN: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_CMP: dict[type[ast.cmpop], Callable[[int, int], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
EXAMPLE = "# triton-lens: sizes n <= 2**24, M % 16 == 0"


@dataclass(frozen=True)
class Condition:
    text: str  # as written
    line: int  # 1-based line of its comment
    node: ast.expr = field(compare=False, repr=False)
    names: frozenset[str] = frozenset()


@dataclass
class SizeConditions:
    """A kernel's conditions, and what of its comments could not be read: (line, message)."""

    conditions: list[Condition] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)

    def holds(self, values: Mapping[str, int]) -> bool:
        """Every condition holds with these values (a condition naming a value not given holds)."""
        return all(evaluate(c.node, values) is not False for c in self.conditions)

    def unknown_names(self, known: set[str]) -> list[tuple[Condition, list[str]]]:
        return [(c, sorted(c.names - known)) for c in self.conditions if c.names - known]


def _split(text: str) -> list[str]:
    """The comment's conditions: split at commas outside brackets."""
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [c.strip() for c in out if c.strip()]


def _readable(node: ast.AST) -> str | None:
    """None when the expression uses only what a condition may; else what it may not."""
    for n in ast.walk(node):
        if isinstance(n, ast.Constant):
            if type(n.value) is not int:
                return f"the literal {ast.unparse(n)}"
        elif isinstance(n, ast.BinOp):
            if type(n.op) not in _BIN:
                return f"the operator in `{ast.unparse(n)}`"
        elif isinstance(n, ast.Compare):
            if any(type(o) not in _CMP for o in n.ops):
                return f"the comparison `{ast.unparse(n)}`"
        elif not isinstance(
            n,
            (ast.Name, ast.BoolOp, ast.UnaryOp, ast.Load, ast.And, ast.Or, ast.Not, ast.USub, ast.UAdd, *_BIN, *_CMP),
        ):
            return f"`{ast.unparse(n)}`"
        if isinstance(n, ast.UnaryOp) and not isinstance(n.op, (ast.Not, ast.USub, ast.UAdd)):
            return f"`{ast.unparse(n)}`"
    return None


def parse(text: str, line: int) -> tuple[list[Condition], list[tuple[int, str]]]:
    """The conditions of one comment's text (after `sizes`), and what could not be read."""
    conds: list[Condition] = []
    errors: list[tuple[int, str]] = []
    parts = _split(text)
    if not parts:
        errors.append((line, f"`# triton-lens: sizes` states no condition: write them after it, e.g. `{EXAMPLE}`"))
    for part in parts:
        try:
            node = ast.parse(part, mode="eval").body
        except SyntaxError:
            errors.append(
                (line, f"cannot read the size condition `{part}`: write a Python comparison, e.g. `{EXAMPLE}`")
            )
            continue
        bad = _readable(node)
        if bad is not None:
            errors.append(
                (
                    line,
                    f"the size condition `{part}` uses {bad}: a condition is integers, argument names, "
                    f"+ - * // % **, comparisons, and/or/not (e.g. `{EXAMPLE}`)",
                )
            )
            continue
        names = frozenset(n.id for n in ast.walk(node) if isinstance(n, ast.Name))
        conds.append(Condition(part, line, node, names))
    return conds, errors


def evaluate(node: ast.AST, values: Mapping[str, int]) -> int | bool | None:
    """The condition's value with these names' values; None where a name has none (or an arithmetic error)."""
    try:
        return _eval(node, values)
    except (KeyError, ZeroDivisionError, OverflowError, ValueError):
        return None


def _eval(node: ast.AST, values: Mapping[str, int]) -> int | bool:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        return int(values[node.id])
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, values), _eval(node.right, values)
        if isinstance(node.op, ast.Pow) and (b < 0 or b > 256):
            raise ValueError("exponent")
        return _BIN[type(node.op)](int(a), int(b))
    if isinstance(node, ast.UnaryOp):
        x = _eval(node.operand, values)
        return (not x) if isinstance(node.op, ast.Not) else -x if isinstance(node.op, ast.USub) else +x
    if isinstance(node, ast.Compare):
        left = _eval(node.left, values)
        for op, right_node in zip(node.ops, node.comparators):
            right = _eval(right_node, values)
            if not _CMP[type(op)](int(left), int(right)):
                return False
            left = right
        return True
    if isinstance(node, ast.BoolOp):
        vals = [_eval(v, values) for v in node.values]
        return all(vals) if isinstance(node.op, ast.And) else any(vals)
    raise ValueError(ast.dump(node))


def _kernel_node(tree: ast.Module, def_line: int) -> ast.FunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and (
            node.lineno == def_line or any(d.lineno == def_line for d in node.decorator_list)
        ):
            return node
    return None


_read: dict[tuple[int, int], SizeConditions] = {}  # (hash of the file's text, def_line) -> its conditions


def conditions_for(lines: list[str], def_line: int) -> SizeConditions:
    """The conditions of the kernel whose first line (its first decorator, or `def`) is `def_line` (1-based)
    in a file of these lines: its body's comments and the comment lines directly above it. Read once per
    text and kernel (the size check asks after every launch); the caller must not change what it gets."""
    text = "".join(lines)
    key = (hash(text), def_line)
    if key not in _read:
        if len(_read) > 256:
            _read.clear()
        _read[key] = _conditions_for(lines, text, def_line)
    return _read[key]


def _conditions_for(lines: list[str], text: str, def_line: int) -> SizeConditions:
    out = SizeConditions()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return out
    fn = _kernel_node(tree, def_line)
    if fn is None:
        return out
    first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
    above = first - 1
    while above >= 1 and lines[above - 1].strip().startswith("#"):
        above -= 1
    for i, comment in _comments(text):
        m = _COMMENT.match(comment)
        if m and above < i <= (fn.end_lineno or fn.lineno):
            conds, errors = parse(m.group(1), i)
            out.conditions += conds
            out.errors += errors
    return out


def _comments(text: str) -> list[tuple[int, str]]:
    """(line, text) of every comment token of the file (a `#` inside a string is none)."""
    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                out.append((tok.start[0], tok.string))
    except (tokenize.TokenError, SyntaxError):
        pass
    return out
