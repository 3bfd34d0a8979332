"""Which @triton.jit kernels a source file defines (read from its syntax tree, nothing is run)."""
from __future__ import annotations

import ast

from ..model import KernelDef

_JIT_NAMES = {"jit", "autotune", "heuristics"}


def _decorator_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def find_kernels(source: str, file: str) -> list[KernelDef]:
    try:
        tree = ast.parse(source, filename=file)
    except (SyntaxError, ValueError):
        return []
    kernels = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(_decorator_name(d) == "jit" for d in node.decorator_list):
                kernels.append(KernelDef(node.name, file, node.lineno))
    return kernels
