"""Which @triton.jit kernels a source file defines (read from its syntax tree, nothing is run).

The one kernel finder: the run plan, the language server's lenses and diagnostics, and the extension
(through the `tritonLens/kernelOutline` request) all take kernels, their ranges and their parameters'
positions from here.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from ..model import KernelDef
from ..model.lines import split_lines

_JIT = {"jit"}


def triton_names(tree: ast.AST) -> tuple[set[str], set[str]]:
    """(names bound to triton modules, names bound to triton's `jit`) by the file's imports."""
    modules, jits = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "triton" or a.name.startswith("triton."):
                    modules.add(a.asname or a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "triton":
            for a in node.names:
                if a.name in _JIT:
                    jits.add(a.asname or a.name)
                else:
                    modules.add(a.asname or a.name)  # `from triton import language as tl`, `runtime`
    return modules, jits


def is_triton_jit(node: ast.expr, modules: set[str], jits: set[str]) -> bool:
    """`@triton.jit`, `@triton.jit(...)`, `@triton.runtime.jit.jit`, or `@jit` imported from triton
    (not numba's or jax's jit)."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id in jits
    if isinstance(node, ast.Attribute) and node.attr in _JIT:
        root = node.value
        while isinstance(root, ast.Attribute):
            root = root.value
        return isinstance(root, ast.Name) and root.id in modules
    return False


def find_kernels(source: str, file: str) -> list[KernelDef]:
    try:
        tree = ast.parse(source, filename=file)
    except (SyntaxError, ValueError):
        return []
    modules, jits = triton_names(tree)
    kernels = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(is_triton_jit(d, modules, jits) for d in node.decorator_list):
                kernels.append(KernelDef(node.name, file, node.lineno))
    kernels.sort(key=lambda k: k.line)
    return kernels


@dataclass
class Param:
    name: str
    line: int  # 1-based
    col: int  # 0-based, of the name
    end_col: int


@dataclass
class KernelOutline:
    """Where a kernel sits in its file. Lines are 1-based; `col` is the 0-based column of its name."""

    name: str
    line: int  # the `def`
    col: int
    first_line: int  # the first decorator
    end_line: int  # the last line of the body
    body_line: int  # the first statement of the body, after a docstring
    params: list[Param] = field(default_factory=list)
    exact: bool = True  # False: read from the lines of a file that does not parse (while typing)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "line": self.line,
            "col": self.col,
            "firstLine": self.first_line,
            "endLine": self.end_line,
            "bodyLine": self.body_line,
            "exact": self.exact,
            "params": [{"name": p.name, "line": p.line, "col": p.col, "endCol": p.end_col} for p in self.params],
        }

    def param(self, name: str) -> Param | None:
        """A parameter by name; "t[1]" (a tuple member) and "desc.base" are found by their parameter."""
        base = re.split(r"[\[.]", name, maxsplit=1)[0]
        return next((p for p in self.params if p.name == base), None)


def _outline_node(node: ast.FunctionDef | ast.AsyncFunctionDef) -> KernelOutline:
    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
    body = node.body
    start = (
        1
        if (
            len(body) > 1
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        )
        else 0
    )
    body_line = body[start].lineno if body else node.lineno
    a = node.args
    params = [
        Param(x.arg, x.lineno, x.col_offset, x.col_offset + len(x.arg))
        for x in a.posonlyargs
        + a.args
        + ([a.vararg] if a.vararg else [])
        + a.kwonlyargs
        + ([a.kwarg] if a.kwarg else [])
    ]
    col = node.col_offset + (len("async def ") if isinstance(node, ast.AsyncFunctionDef) else len("def "))
    return KernelOutline(node.name, node.lineno, col, first, node.end_lineno or node.lineno, body_line, params)


_DEF = re.compile(r"^(?P<indent>[ \t]*)(async[ \t]+)?def[ \t]+(?P<name>\w+)[ \t]*\((?P<args>[^)]*)")


def outline_lenient(source: str) -> list[KernelOutline]:
    """Kernels of a file that does not parse, from its lines: a `def` below a decorator naming triton's `jit`."""
    out = []
    lines = split_lines(source)
    # The file's import statements that parse on their own say which names are triton's.
    imports = []
    for text in lines:
        if text.lstrip().startswith(("import ", "from ")):
            try:
                imports.append(ast.parse(text.strip()))
            except SyntaxError:
                pass
    modules, jits = triton_names(ast.Module(body=[n for t in imports for n in t.body], type_ignores=[]))

    def triton_jit(decorator: str) -> bool:
        try:
            return is_triton_jit(ast.parse(decorator.strip()[1:], mode="eval").body, modules, jits)
        except SyntaxError:
            return False

    for i, text in enumerate(lines):
        m = _DEF.match(text)
        if not m:
            continue
        j, first, jit = i - 1, i, False
        while j >= 0 and lines[j].strip().startswith("@"):
            jit |= triton_jit(lines[j])
            first, j = j, j - 1
        if not jit:
            continue
        indent = len(m.group("indent").expandtabs(4))
        end = i
        for k in range(i + 1, len(lines)):
            t = lines[k]
            if t.strip() and not t.lstrip().startswith("#"):
                if len(t) - len(t.lstrip()) <= indent and len(t[: len(t) - len(t.lstrip())].expandtabs(4)) <= indent:
                    break
                end = k
        params = []
        for pm in re.finditer(r"[A-Za-z_]\w*", m.group("args")):
            before = m.group("args")[: pm.start()]
            if before.rstrip().endswith((":", "=")) or "." in before[-1:]:
                continue  # an annotation or a default, not a parameter name
            col = m.start("args") + pm.start()
            params.append(Param(pm.group(0), i + 1, col, col + len(pm.group(0))))
        out.append(
            KernelOutline(
                m.group("name"), i + 1, m.start("name"), first + 1, end + 1, min(end + 1, i + 2), params, exact=False
            )
        )
    return out


def outline(source: str, file: str = "<kernel>") -> list[KernelOutline]:
    """Every @triton.jit kernel of a source text, in line order (read from the lines when it does not parse)."""
    try:
        tree = ast.parse(source, filename=file)
    except (SyntaxError, ValueError):
        return outline_lenient(source)
    return outline_tree(tree)


def outline_tree(tree: ast.AST) -> list[KernelOutline]:
    """Every @triton.jit kernel of a parsed module, in line order."""
    modules, jits = triton_names(tree)
    found = [
        _outline_node(n)
        for n in ast.walk(tree)
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
        and any(is_triton_jit(d, modules, jits) for d in n.decorator_list)
    ]
    return sorted(found, key=lambda k: k.line)


def launched_on_line(source: str, line: int, names: set[str]) -> str | None:
    """The kernel launched (`name[grid](...)`) by the statement at a 1-based line, if one is."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        lines = split_lines(source)
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        return next((m.group(1) for m in re.finditer(r"([A-Za-z_]\w*)\s*\[", text) if m.group(1) in names), None)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Subscript)
            and node.lineno <= line <= (node.end_lineno or node.lineno)
        ):
            f = node.func.value
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in names:
                return name
    return None


def kernel_at(source: str, line: int) -> KernelOutline | None:
    """The kernel for a 1-based cursor line: the one whose decorators..body hold it, else the one launched
    on that line, else the file's only kernel."""
    kernels = outline(source)
    inside = next((k for k in kernels if k.first_line <= line <= k.end_line), None)
    if inside is not None:
        return inside
    launched = launched_on_line(source, line, {k.name for k in kernels})
    if launched is not None:
        return next(k for k in kernels if k.name == launched)
    return kernels[0] if len(kernels) == 1 else None
