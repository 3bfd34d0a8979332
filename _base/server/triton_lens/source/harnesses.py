"""The workspace's tests and scripts that import a kernel file: the runs a library file can borrow.

Most library files launch nothing of their own; their kernels run from a test suite or a script. For
such a file this finds the workspace files whose imports reach it (by the run plan's own import rule,
plan.imported_kernel_files), tests first, and the run comment each would need
(`# triton-lens: run pytest -q tests/test_ops.py`, relative to the workspace folder, as run comments
are). Text only: files are read and parsed, never run. Bounded: folders of environments, caches and
packages are skipped, and the walk stops after MAX_FILES files.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
from dataclasses import dataclass

from .plan import imported_kernel_files, workspace_root

MAX_FILES = 5000
MAX_BYTES = 1 << 20
SKIP_DIRS = {".git", ".hg", "node_modules", "__pycache__", "site-packages", "build", "dist", ".tox", ".nox"}


@dataclass(frozen=True)
class Harness:
    file: str  # absolute
    relative: str  # to the workspace folder, as the run comment names it
    is_test: bool
    command: str  # the run comment's command, e.g. "pytest -q tests/test_ops.py"


def _is_test(rel: str) -> bool:
    name = os.path.basename(rel)
    return name.startswith("test_") or name.endswith("_test.py") or "tests" in rel.split(os.sep)[:-1]


def _skip(dirname: str) -> bool:
    return dirname in SKIP_DIRS or dirname.startswith((".venv", "venv", ".mypy", ".pytest", ".ruff"))


def harnesses(path: str, roots: list[str], limit: int = 3) -> list[Harness]:
    """Up to `limit` workspace files that import `path`'s kernels: tests first, then by path."""
    path = os.path.abspath(path)
    root = workspace_root(path, roots)
    if root is None:
        return []
    stem = os.path.splitext(os.path.basename(path))[0]
    word = re.compile(rf"\b{re.escape(stem)}\b")  # a cheap filter before parsing: the module's name appears
    found: list[Harness] = []
    seen = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not _skip(d))
        for name in sorted(filenames):
            if not name.endswith(".py"):
                continue
            f = os.path.join(dirpath, name)
            seen += 1
            if seen > MAX_FILES:
                break
            if os.path.abspath(f) == path or not os.path.isfile(f) or os.path.getsize(f) > MAX_BYTES:
                continue
            try:
                text = open(f, encoding="utf-8", errors="replace").read()
            except OSError:
                continue
            if not word.search(text):
                continue
            try:
                tree = ast.parse(text, filename=f)
            except (SyntaxError, ValueError):
                continue
            if path not in {os.path.abspath(k) for k in imported_kernel_files(tree, f, roots)}:
                continue
            rel = os.path.relpath(f, root)
            test = _is_test(rel)
            command = f"pytest -q {shlex.quote(rel)}" if test else f"python {shlex.quote(rel)}"
            found.append(Harness(f, rel, test, command))
        if seen > MAX_FILES:
            break
    found.sort(key=lambda h: (not h.is_test, h.relative))
    return found[:limit]
