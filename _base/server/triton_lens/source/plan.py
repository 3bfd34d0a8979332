"""The run plan: which command a file gets, and whether it gets one at all. The one owner of this
rule; the language server, `triton-lens check`, `triton-lens view` and the debugger all ask here.
Read from the text only (a cheap parse):

1. a `# triton-lens: run <command>` comment in the file;
2. the runCommands setting: a plain mapping of globs to commands (first match wins, in order);
3. else the file itself, as `__main__`.

Only files that define a `@triton.jit` kernel, import one from the workspace, or have a run comment
(their kernels may live in an installed library) are run. A file that does not parse is not run: its
syntax error is reported instead.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .kernels import KernelOutline, outline_lenient, outline_tree

# Larger texts are not planned or run: no kernel file is this big (a generated table or data is), and
# parsing it on every keystroke would keep the language server from answering (issue: a 10 MB buffer made a
# hover wait 70 s). Measured in characters, as the editor sends the text.
MAX_TEXT = 1 << 20

RUN_COMMENT = re.compile(r"^[ \t]*#[ \t]*triton-lens:[ \t]*run[ \t]+(?P<cmd>\S.*?)[ \t]*$", re.MULTILINE)


@dataclass
class SyntaxProblem:
    line: int  # 1-based
    col: int  # 0-based
    end_line: int
    end_col: int
    message: str


@dataclass
class Plan:
    runnable: bool
    why_not: str = ""
    syntax: SyntaxProblem | None = None
    command: list[str] | None = None
    origin: str = "file"  # "file" | "comment" | "setting"
    origin_line: int = 0  # the comment's line, for "comment"
    cwd: str | None = None
    kernels: list[KernelOutline] = field(default_factory=list)
    imported_kernels: list[str] = field(default_factory=list)  # workspace files that define imported kernels
    launches: bool = False  # the file's own code launches a kernel it defines (`kernel[grid](...)`)
    too_large: int = 0  # the text's length, when over MAX_TEXT (then nothing is parsed or run)


def in_library(path: str) -> bool:
    """Installed packages (site-packages, the interpreter's own library): opened to read, never run."""
    p = os.path.abspath(path)
    parts = p.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts:
        return True
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        lib = os.path.join(prefix, "lib")
        if p.startswith(lib + os.sep):
            return True
    return False


_kernel_file_cache: dict[str, tuple[float, bool]] = {}


def _file_defines_kernels(path: str) -> bool:
    try:
        mtime = os.stat(path).st_mtime
    except OSError:
        return False
    hit = _kernel_file_cache.get(path)
    if hit and hit[0] == mtime:
        return hit[1]
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        ok = "jit" in text and bool(outline_tree(ast.parse(text)))
    except (OSError, SyntaxError, ValueError):
        ok = False
    _kernel_file_cache[path] = (mtime, ok)
    return ok


def _module_files(module: str, bases: list[str]) -> list[str]:
    rel = module.replace(".", os.sep)
    out = []
    for base in bases:
        for cand in (os.path.join(base, rel + ".py"), os.path.join(base, rel, "__init__.py")):
            if os.path.isfile(cand):
                out.append(cand)
    return out


def imported_kernel_files(tree: ast.AST, path: str, roots: list[str]) -> list[str]:
    """Workspace files imported by this one that define @triton.jit kernels."""
    here = os.path.dirname(path)
    found: list[str] = []
    for node in ast.walk(tree):
        mods: list[tuple[str, list[str]]] = []
        if isinstance(node, ast.Import):
            mods = [(a.name, [here] + roots) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here
                for _ in range(node.level - 1):
                    base = os.path.dirname(base)
                bases = [base]
            else:
                bases = [here] + roots
            prefix = node.module or ""
            mods = [(prefix, bases)] if prefix else []
            mods += [((prefix + "." if prefix else "") + a.name, bases) for a in node.names if a.name != "*"]
        for mod, bases in mods:
            top = mod.split(".")[0]
            if top in ("triton", "torch", "numpy"):
                continue
            for f in _module_files(mod, bases):
                if os.path.abspath(f) != os.path.abspath(path) and _file_defines_kernels(f) and f not in found:
                    found.append(f)
    return found


def workspace_root(path: str, roots: list[str]) -> str | None:
    best = None
    for r in roots:
        try:
            rel = os.path.relpath(path, r)
        except ValueError:
            continue
        if not rel.startswith("..") and (best is None or len(r) > len(best)):
            best = r
    return best


def plan(path: str, text: str, run_commands: Mapping[str, Any] | None = None, roots: list[str] | None = None) -> Plan:
    """The plan for `path` whose text is `text`. `run_commands`: glob -> command line (str) or argv
    (list), as in the tritonLens.runCommands setting; `roots`: the workspace folders (globs and run
    comments are relative to the one holding the file)."""
    roots = list(roots or [])
    if not path.endswith((".py", ".pyw")) and "triton" not in text:
        return Plan(False, "not a Python file")
    if in_library(path):
        return Plan(False, "an installed library file")
    if len(text) > MAX_TEXT:
        return Plan(
            False,
            f"the file is {len(text) / (1 << 20):.1f} MB of text: Triton Lens runs files up to "
            f"{MAX_TEXT >> 20} MB (move the data it holds into a file it loads)",
            too_large=len(text),
        )
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as e:
        line = max(int(e.lineno or 1), 1)
        col = max(int(e.offset or 1) - 1, 0)
        end_line = int(getattr(e, "end_lineno", None) or line)
        end_col = int(getattr(e, "end_offset", None) or 0) - 1
        if end_line < line or (end_line == line and end_col <= col):
            end_line, end_col = line, col + 1
        return Plan(
            False,
            "the file does not parse",
            syntax=SyntaxProblem(line, col, end_line, end_col, f"{type(e).__name__}: {e.msg}"),
            kernels=outline_lenient(text),
        )
    except ValueError as e:  # e.g. NUL bytes
        return Plan(False, f"the file does not parse: {e}", syntax=SyntaxProblem(1, 0, 1, 1, str(e)))
    kernels = outline_tree(tree)
    launches = _launches(tree, {k.name for k in kernels})
    imported = [] if kernels else imported_kernel_files(tree, path, roots)
    root = workspace_root(path, roots)
    m = RUN_COMMENT.search(text)
    # A run comment is the author saying the file runs kernels: a test of a library whose kernels live
    # outside it (installed, or outside the workspace, where the import cannot be followed) runs too.
    if not kernels and not imported and not m:
        return Plan(False, "the file defines no @triton.jit kernel and imports none from the workspace")
    if m:
        argv = expand_variables(split_command(m.group("cmd")), path, root)
        if not argv and not kernels and not imported:
            return Plan(False, "the file's `# triton-lens: run` comment names no command it can run")
        if argv:
            line = text.count("\n", 0, m.start()) + 1
            return Plan(
                True,
                command=argv,
                origin="comment",
                origin_line=line,
                cwd=root or os.path.dirname(path),
                kernels=kernels,
                imported_kernels=imported,
                launches=launches,
            )
    argv = expand_variables(command_for(path, run_commands or {}, roots), path, root)
    if argv:
        return Plan(
            True,
            command=argv,
            origin="setting",
            cwd=root or os.path.dirname(path),
            kernels=kernels,
            imported_kernels=imported,
            launches=launches,
        )
    return Plan(True, kernels=kernels, imported_kernels=imported, launches=launches)


def _launches(tree: ast.AST, kernel_names: set[str]) -> bool:
    """Whether the code launches one of `kernel_names`: `k[grid](...)` or `k.run(...)`."""
    if not kernel_names:
        return False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Subscript) and isinstance(f.value, ast.Name) and f.value.id in kernel_names:
            return True
        if (
            isinstance(f, ast.Attribute)
            and f.attr == "run"
            and isinstance(f.value, ast.Name)
            and f.value.id in kernel_names
        ):
            return True
    return False


def worth_a_run(p: Plan) -> bool:
    """Whether a file found in a folder gets checked: it has its own run command (comment or setting),
    or it defines a kernel and launches it. A module that only defines kernels would only say "no launch"."""
    return p.runnable and (p.origin != "file" or p.launches)


# -- the runCommands setting: globs -> commands --------------------------------------------------


def command_for(path: str, run_commands: Mapping[str, Any], roots: list[str]) -> list[str] | None:
    """The command `run_commands` gives `path`: the first glob that matches it, relative to a
    workspace root or as an absolute path."""
    candidates = [path.replace(os.sep, "/")]
    for root in roots:
        try:
            rel = os.path.relpath(path, root)
        except ValueError:
            continue
        if not rel.startswith(".."):
            candidates.append(rel.replace(os.sep, "/"))
    for glob, command in run_commands.items():
        rx = glob_to_regex(str(glob))
        if any(rx.fullmatch(c) for c in candidates):
            return split_command(command)
    return None


_VARIABLE = re.compile(r"\$\{([^}]+)\}")


def expand_variables(
    argv: list[str] | None, path: str, root: str | None, env: Mapping[str, str] | None = None
) -> list[str] | None:
    """${workspaceFolder}, ${file}, ${fileDirname}, ${userHome}, ${env:NAME} and a leading ~ in each
    argument, as VS Code expands them (`pytest ${file} -x`). Unknown variables stay as written."""
    if not argv:
        return argv
    env = os.environ if env is None else env
    home = os.path.expanduser("~")
    values = {
        "workspaceFolder": root or os.path.dirname(path),
        "file": path,
        "fileDirname": os.path.dirname(path),
        "userHome": home,
    }

    def one(m: re.Match[str]) -> str:
        name = m.group(1)
        if name.startswith("env:"):
            return env.get(name[4:], "")
        return str(values.get(name, m.group(0)))

    out = []
    for a in argv:
        a = _VARIABLE.sub(one, a)
        if a == "~" or a.startswith("~/"):
            a = home + a[1:]
        out.append(a)
    return out


def split_command(command: Any) -> list[str] | None:
    if isinstance(command, list):
        argv = [str(a) for a in command]
    elif isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError:
            argv = command.split()
    else:
        return None
    return argv or None


def _translate(glob: str) -> str:
    out = ""
    i = 0
    while i < len(glob):
        ch = glob[i]
        if ch == "*":
            if glob[i + 1 : i + 2] == "*":
                if glob[i + 2 : i + 3] == "/":
                    out += "(?:.*/)?"
                    i += 3
                else:
                    out += ".*"
                    i += 2
                continue
            out += "[^/]*"
        elif ch == "?":
            out += "[^/]"
        elif ch == "{" and glob.find("}", i) > 0:
            j = glob.find("}", i)
            out += "(?:" + "|".join(_translate(p) for p in glob[i + 1 : j].split(",")) + ")"
            i = j
        else:
            out += re.escape(ch)
        i += 1
    return out


def glob_to_regex(glob: str) -> re.Pattern[str]:
    """`**` any number of path parts, `*` and `?` within one part, `{a,b}` alternatives. A glob with
    no slash matches a file name in any folder (`*.py`), like VS Code's files.exclude. A leading
    `./` is the workspace root."""
    if glob.startswith("./"):
        glob = glob[2:]
    out = _translate(glob)
    if "/" not in glob:
        out = "(?:.*/)?" + out
    return re.compile(out)
