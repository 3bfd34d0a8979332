"""The files `triton-lens check PATH...` runs, each with its run plan (source/plan.py).

A file named on the command line is always run. A folder, or a glob, contributes the `.py` files
and Jupyter notebooks (`.ipynb`: their code cells as one script, model/notebook.py) that are worth a run: those with their own `# triton-lens: run` command (or a runCommands entry),
and those that define a `@triton.jit` kernel and launch it. Helper modules that only define kernels
are left out: run alone they launch nothing.
"""

from __future__ import annotations

import glob as _glob
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model.notebook import NotebookError, NotebookScript, from_ipynb, is_notebook
from ..source.plan import Plan, plan, worth_a_run

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


MAX_SCRIPT_BYTES = 32 << 20  # no kernel script is this large; /dev/zero behind a *.py link is endless


def _read(path: str) -> tuple[str | None, str]:
    """(the text, "") or (None, why not). Only a regular file, and at most MAX_SCRIPT_BYTES of it:
    a FIFO named *.py would block the check forever, a link to /dev/zero fill memory. O_NONBLOCK:
    opening a FIFO with no writer returns at once (fstat then says what it is)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        return None, f"cannot read {path}: {e.strerror}"
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, f"cannot read {path}: not a regular file (a FIFO, device or socket); name the script itself"
        if st.st_size > MAX_SCRIPT_BYTES:
            return (
                None,
                f"cannot read {path}: {st.st_size >> 20} MB is larger than a script can be ({MAX_SCRIPT_BYTES >> 20} MB)",
            )
        try:
            os.set_blocking(fd, True)
            raw = f.read(MAX_SCRIPT_BYTES + 1)
        except OSError as e:
            return None, f"cannot read {path}: {e.strerror}"
    if len(raw) > MAX_SCRIPT_BYTES:
        return None, f"cannot read {path}: larger than a script can be ({MAX_SCRIPT_BYTES >> 20} MB)"
    return raw.decode("utf-8", errors="replace"), ""


def _glob_part(part: str) -> str:
    """One path part of a shell glob as a regex: `*` and `?` stay within the part, `[...]` is a class."""
    out, i = [], 0
    while i < len(part):
        c = part[i]
        j = part.find("]", i + 2) if c == "[" else -1
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif j > 0:
            body = part[i + 1 : j]
            neg = body[:1] in ("!", "^")
            out.append("[" + ("^" if neg else "") + re.escape(body[1:] if neg else body) + "]")
            i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _recursive_glob(pattern: str) -> list[str]:
    """glob.glob(pattern, recursive=True) without following symbolic links to folders under `**`
    (glob follows them, and never ends on a tree with a link loop), as pathlib's `**` does."""
    parts = pattern.replace(os.sep, "/").split("/")
    k = next(i for i, p in enumerate(parts) if _glob.has_magic(p))
    base = "/".join(parts[:k]) or ("/" if pattern.startswith("/") else ".")
    rx = "".join("(?:[^/]+/)*" if p == "**" else _glob_part(p) + "/" for p in parts[k:])
    # A last `**` matches everything below; otherwise the last part is the name itself (no "/").
    regex = re.compile(rx + "[^/]+" if parts[-1] == "**" else rx[:-1])
    hits = []
    for root, dirs, files in os.walk(base):  # followlinks=False: a link to a folder is not entered
        dirs.sort()
        for name in dirs + sorted(files):
            full = os.path.join(root, name)
            rel = os.path.relpath(full, base).replace(os.sep, "/")
            if regex.fullmatch(rel):
                hits.append(full if base != "." else os.path.relpath(full))
    return sorted(hits)


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
        text, why = _read(path)
        if text is None:
            if explicit:  # a file a folder or glob found is skipped, as one that cannot be read
                problems.append(why)
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
        elif os.path.isfile(arg) or os.path.exists(arg):  # a FIFO or a device too: add() says what it is
            add(arg, explicit=not filter_named_files)
        elif _glob.has_magic(arg):
            hits = _recursive_glob(arg) if "**" in arg else sorted(_glob.glob(arg))
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
