"""The files `triton-lens check PATH...` runs, each with its run plan (trace_engine/plan.py).

A file named on the command line is always run. A folder, or a glob, contributes the `.py` files
and Jupyter notebooks (`.ipynb`: their code cells as one script, model/notebook.py) that are worth a run: those with their own `# triton-lens: run` command (or a runCommands entry),
and those that define a `@triton.jit` kernel and launch it. Helper modules that only define kernels
are left out: run alone they launch nothing.
"""

from __future__ import annotations

import glob as _glob
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model.notebook import NotebookError, NotebookScript, from_ipynb, is_notebook
from ..trace_engine.plan import Plan, plan, worth_a_run

# Folders never searched: tool caches, virtual environments, installed packages.
_SKIP_DIRS = {"__pycache__", "node_modules", "site-packages", "dist-packages", "build", "dist"}


@dataclass
class Target:
    path: str  # absolute
    plan: Plan
    notebook: NotebookScript | None = None  # a notebook: the script its code cells make, and the line mapping


@dataclass
class Targets:
    files: list[Target]
    problems: list[str]  # paths that name nothing: "no such file or folder: x"
    # Every file named, or .py file a folder or glob matched, run or not (a helper module that
    # launches nothing): `check -o` refuses to write its report over one of them.
    inputs: list[str] = field(default_factory=list)


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def _skipped_dir(root: str, name: str) -> bool:
    return name.startswith(".") or name in _SKIP_DIRS or os.path.isfile(os.path.join(root, name, "pyvenv.cfg"))


def _checkable(name: str) -> bool:
    return name.endswith(".py") or is_notebook(name)


def _walk(folder: str) -> list[str]:
    out = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not _skipped_dir(root, d))
        out += [os.path.join(root, f) for f in sorted(files) if _checkable(f)]
    return out


def find_targets(
    paths: list[str],
    run_commands: Mapping[str, Any] | None = None,
    roots: list[str] | None = None,
    filter_named_files: bool = False,
) -> Targets:
    """`filter_named_files`: named files too are run only when worth a run (pre-commit passes every
    changed .py file, most of which launch no kernel)."""
    roots = [os.path.abspath(r) for r in (roots or [os.getcwd()])]
    run_commands = run_commands or {}
    files: list[Target] = []
    seen: set[str] = set()
    problems: list[str] = []
    inputs: list[str] = []

    def add(path: str, explicit: bool) -> None:
        path = os.path.abspath(path)
        inputs.append(path)
        if path in seen:
            return
        text = _read(path)
        if text is None:
            if explicit:
                problems.append(f"cannot read {path}")
            return
        nb = None
        if is_notebook(path):
            try:
                nb = from_ipynb(text)
            except NotebookError as e:
                if explicit:
                    problems.append(f"{path}: {e}")
                return
            text = nb.script
        p = plan(path, text, run_commands, roots)
        if explicit or worth_a_run(p):
            seen.add(path)
            files.append(Target(path, p, nb))

    for arg in paths:
        if os.path.isdir(arg):
            for f in _walk(arg):
                add(f, explicit=False)
        elif os.path.isfile(arg):
            add(arg, explicit=not filter_named_files)
        elif _glob.has_magic(arg):
            hits = sorted(_glob.glob(arg, recursive=True))
            if not hits:
                problems.append(f"no file matches {arg}")
            for h in hits:
                if os.path.isdir(h):
                    for f in _walk(h):
                        add(f, explicit=False)
                elif _checkable(h):
                    add(h, explicit=False)
        else:
            problems.append(f"no such file or folder: {arg}")
    return Targets(files, problems, inputs)
