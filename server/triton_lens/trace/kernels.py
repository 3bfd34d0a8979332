"""Which @triton.jit kernels a source file defines (read from its syntax tree, nothing is run)."""
from __future__ import annotations

import ast

from ..model import KernelDef

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
