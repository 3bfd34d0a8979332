"""The engine's invariants of docs/architecture.md ("Invariants"), checked on the source: which modules may
reach into triton's interpreter, which must stay standard-library or numpy only, and that a module's
docstring saying it imports no triton is true. test_layers.py checks the one-way flow between layers."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "triton_lens"

# The interpreter room: the only modules that import triton.runtime.interpreter (its classes are what
# they patch, release by release). debug_launcher.py is the one front-end file with its own hook: it
# runs as a bare script under debugpy, before the package may be importable.
INTERPRETER_ROOM = {
    "trace_engine/compat.py",
    "trace_engine/semantics.py",
    "trace_engine/jit_api.py",
    "trace_engine/device_calls.py",
    "debug_launcher.py",
}
# Standard library only: the supervisor forks and watches the worker before anything else is imported.
STDLIB_ONLY = {"trace_engine/supervisor.py", "trace_engine/process_tree.py"}
# No triton, no torch: the analysis and the model are pure functions over numpy arrays and our types.
NO_TRITON_OR_TORCH = ("analysis/", "model/")


def _imported(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in a file; relative imports as '.name'."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                out.append((node.lineno, "." + (node.module or "")))
            elif node.module:
                out.append((node.lineno, node.module))
                out.extend((node.lineno, f"{node.module}.{a.name}") for a in node.names)
        elif isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
    return out


def _files():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), path


def violations() -> list[str]:
    bad: list[str] = []
    for rel, path in _files():
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        says_no_triton = "no triton import" in " ".join(doc.split())
        for line, name in _imported(path):
            top = name.split(".")[0]
            if name.startswith("triton.runtime.interpreter") and rel not in INTERPRETER_ROOM:
                bad.append(f"{rel}:{line}: imports triton.runtime.interpreter: only the interpreter room may")
            if rel in STDLIB_ONLY and not name.startswith(".") and top not in sys.stdlib_module_names:
                bad.append(f"{rel}:{line}: imports {name}: this module uses the standard library only")
            if (
                rel in STDLIB_ONLY
                and name.startswith(".")
                and name[1:].split(".")[0] not in {p.rsplit("/", 1)[-1][:-3] for p in STDLIB_ONLY}
            ):
                bad.append(f"{rel}:{line}: imports {name}: only the other standard-library-only modules")
            if rel.startswith(NO_TRITON_OR_TORCH) and top in ("triton", "torch"):
                bad.append(f"{rel}:{line}: imports {name}: the analysis and the model know neither triton nor torch")
            if says_no_triton and top == "triton":
                bad.append(f"{rel}:{line}: imports {name}, but its docstring says: no triton import")
    return list(dict.fromkeys(bad))  # an import names a module and its members: one line each


def test_the_engines_invariants_hold():
    assert not violations(), "\n".join(violations())


def test_the_rooms_named_exist():
    for rel in INTERPRETER_ROOM | STDLIB_ONLY:
        assert (PACKAGE / rel).is_file(), rel


@pytest.mark.parametrize(
    "rel, source, expected",
    [
        ("analysis/bad.py", "import torch\n", "know neither triton nor torch"),
        ("lsp/bad.py", "from triton.runtime.interpreter import GridExecutor\n", "only the interpreter room"),
        ("trace_engine/supervisor.py", "import numpy as np\n", "standard library only"),
        ("trace_engine/supervisor.py", "from .recorder import Recorder\n", "other standard-library-only"),
        ("trace_engine/pure.py", '"""Pure numpy, no triton import."""\nimport triton\n', "docstring says"),
    ],
)
def test_the_checker_sees_each_kind_of_violation(tmp_path, monkeypatch, rel, source, expected):
    fake = tmp_path / "triton_lens"
    (fake / rel).parent.mkdir(parents=True)
    (fake / rel).write_text(source)
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    found = violations()
    assert len(found) == 1 and expected in found[0], found
