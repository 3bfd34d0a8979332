"""The engine's invariants of docs/architecture.md ("Invariants"), checked on the source: which modules may
reach into triton's interpreter, which must stay standard-library or numpy only, and that a module's
docstring saying it imports no triton is true. test_layers.py checks the one-way flow between layers."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "triton_lens"

# The interpreter room: the only code that imports triton.runtime.interpreter (its classes are what it
# patches, release by release). debug_launcher.py is the one front-end file with its own hook: it runs as a
# bare script under debugpy, before the package may be importable.
INTERPRETER_ROOM = ("trace_engine/interpreter/", "debug_launcher.py")
# Standard library only: the supervisor forks and watches the worker before anything else is imported.
STDLIB_ONLY = {"trace_engine/process/supervisor.py", "trace_engine/process/process_tree.py"}
# No triton, no torch: the analysis and the model are pure functions over numpy arrays and our types; the
# run plan and the kernel finder read text.
NO_TRITON_OR_TORCH = ("analysis/", "model/", "source/")
# The engine's rooms and the other rooms each may import (the face, trace_engine/__init__.py, may import
# them all). process/ is the top: it runs the others in a contained worker.
ROOMS = {
    "interpreter": set(),
    "standin": {"interpreter"},
    "recording": {"interpreter", "standin.gpu_profiles"},  # the size check's bound: the GPU's memory
    "process": {"interpreter", "standin", "recording"},
}
# Where a process is started: by exec only in process/; recording forks a launch's programs only here.
EXECS = "trace_engine/process/"
FORKS = {"trace_engine/recording/parallel.py", "trace_engine/recording/progressive.py"}
# The one module that puts saved attributes back (patch for a run, undo after it): the engine's other modules
# patch through its PatchScope, so no run leaves a change behind and every undo runs in one place.
PATCHES = "trace_engine/interpreter/patches.py"
PROCESS_CALLS = ("subprocess", "os.fork", "posix.fork", "os.exec", "os.spawn", "os.posix_spawn", "multiprocessing")


def _imported(path: Path, rel: str) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in a file, relative ones resolved (triton_lens.x.y)."""
    parts = ("triton_lens", *Path(rel).with_suffix("").parts)
    pkg = parts if parts[-1] == "__init__" else parts[:-1]
    pkg = pkg[:-1] if pkg[-1] == "__init__" else pkg
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = ".".join(pkg[: len(pkg) - (node.level - 1)])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            out.append((node.lineno, module))
            out.extend((node.lineno, f"{module}.{a.name}") for a in node.names)
        elif isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
    return out


def _engine_subclasses(path: Path, rel: str) -> list[tuple[int, str]]:
    """(line, class) of each class outside the engine built on a class of the engine's face: a front end
    composes the engine (the recorder's callbacks), it does not extend it and read its private state."""
    engine = {"triton_lens.trace_engine"}
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            module = {m for line, m in _imported_one(node, rel)}
            if module & engine:
                names.update(a.asname or a.name for a in node.names)
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef):
            for b in node.bases:
                if (isinstance(b, ast.Name) and b.id in names) or (
                    isinstance(b, ast.Attribute) and isinstance(b.value, ast.Name) and b.value.id == "trace_engine"
                ):
                    out.append((node.lineno, node.name))
    return out


def _imported_one(node: ast.ImportFrom, rel: str) -> list[tuple[int, str]]:
    parts = ("triton_lens", *Path(rel).with_suffix("").parts)
    pkg = parts if parts[-1] == "__init__" else parts[:-1]
    pkg = pkg[:-1] if pkg[-1] == "__init__" else pkg
    if node.level:
        base = ".".join(pkg[: len(pkg) - (node.level - 1)])
        return [(node.lineno, f"{base}.{node.module}" if node.module else base)]
    return [(node.lineno, node.module or "")]


def _process_calls(path: Path) -> list[tuple[int, str]]:
    """(line, dotted name) of each use of a process-starting call or module (PROCESS_CALLS)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            name = f"{node.value.id}.{node.attr}"
            if name.startswith(PROCESS_CALLS[1:]):
                out.append((node.lineno, name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            out.extend((node.lineno, m) for m in mods if m.split(".")[0] in ("subprocess", "multiprocessing"))
    return out


def _attribute_dict(node: ast.AST) -> bool:
    """`vars(x)` or `x.__dict__`: an object's own attributes."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars":
        return True
    return isinstance(node, ast.Attribute) and node.attr == "__dict__"


def _restores(path: Path) -> list[tuple[int, str]]:
    """(line, what) of each way a module puts saved attributes back by hand: delattr, `del x.attr`, an
    attribute dict cleared or refilled wholesale, or a value saved from an attribute dict (`old =
    vars(x).get(name)`, `x.__dict__[name]`) set as an attribute again (setattr, `x.attr = old`). (Filling a new
    object's __dict__, `self.__dict__.update(fields)`, is no restore.)"""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    saved: set[str] = set()  # names bound to a value read from an attribute dict
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            v = node.value
            if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "get":
                v = v.func.value  # vars(x).get(name)
            elif isinstance(v, ast.Subscript):
                v = v.value  # vars(x)[name]
            else:
                continue
            if _attribute_dict(v):
                saved.add(node.targets[0].id)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "delattr":
                out.append((node.lineno, "delattr"))
            elif node.func.id == "setattr" and len(node.args) == 3 and isinstance(node.args[2], ast.Name):
                if node.args[2].id in saved:
                    out.append((node.lineno, f"setattr(..., {node.args[2].id}) of a saved attribute"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "clear" and _attribute_dict(node.func.value):  # (then refilled as saved)
                out.append((node.lineno, "an attribute dict's .clear()"))
        elif isinstance(node, ast.Delete) and any(isinstance(t, ast.Attribute) for t in node.targets):
            out.append((node.lineno, "del of an attribute"))
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in saved:
            if any(isinstance(t, ast.Attribute) for t in node.targets):
                out.append((node.lineno, f"an attribute set to the saved {node.value.id}"))
    return out


def _files():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path.relative_to(PACKAGE).as_posix(), path


def _room(rel: str) -> str | None:
    parts = rel.split("/")
    return parts[1] if parts[0] == "trace_engine" and len(parts) > 2 else None


def _is_stdlib_only_module(name: str) -> bool:
    """`name` (an absolute import) is one of STDLIB_ONLY, a member of one, or the package holding them."""
    mods = {"triton_lens." + p[:-3].replace("/", ".") for p in STDLIB_ONLY}
    return any(name == m or name.startswith(m + ".") or m.startswith(name + ".") for m in mods)


def violations() -> list[str]:
    found: dict[tuple[str, int, str], str] = {}  # an import names a module and its members: one line each

    def bad(rel: str, line: int, rule: str, message: str) -> None:
        found.setdefault((rel, line, rule), f"{rel}:{line}: {message}")

    for rel, path in _files():
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        says_no_triton = "no triton import" in " ".join(doc.split())
        room = _room(rel)
        for line, name in _imported(path, rel):
            top = name.split(".")[0]
            if name.startswith("triton.runtime.interpreter") and not rel.startswith(INTERPRETER_ROOM):
                bad(rel, line, "interpreter", "imports triton.runtime.interpreter: only the interpreter room may")
            if rel in STDLIB_ONLY and top != "triton_lens" and top not in sys.stdlib_module_names:
                bad(rel, line, "stdlib", f"imports {name}: this module uses the standard library only")
            if rel in STDLIB_ONLY and top == "triton_lens" and not _is_stdlib_only_module(name):
                bad(rel, line, "stdlib-own", f"imports {name}: only the other standard-library-only modules")
            if rel.startswith(NO_TRITON_OR_TORCH) and top in ("triton", "torch"):
                what = "the analysis, the model and the source know neither triton nor torch"
                bad(rel, line, "pure", f"imports {name}: {what}")
            if says_no_triton and top == "triton":
                bad(rel, line, "docstring", f"imports {name}, but its docstring says: no triton import")
            inner = name.split(".")
            if inner[:2] == ["triton_lens", "trace_engine"] and len(inner) > 2 and inner[2] in ROOMS:
                allowed = ROOMS.get(room or "", set())
                if not rel.startswith("trace_engine/"):
                    face = "outside the engine, import its face (triton_lens.trace_engine)"
                    bad(rel, line, "face", f"imports {name}: {face}")
                elif room is not None and inner[2] != room and not {inner[2], ".".join(inner[2:4])} & allowed:
                    may = ", ".join(sorted(allowed)) or "no other room"
                    bad(rel, line, "rooms", f"the {room} room imports {name}: it may import {may}")
        for line, call in _process_calls(path):
            starts_by_exec = (
                call.split(".")[0] in ("subprocess", "multiprocessing") or ".exec" in call or "spawn" in call
            )
            if starts_by_exec and not rel.startswith(EXECS) and rel.startswith("trace_engine/"):
                bad(rel, line, "exec", f"{call}: only the process room starts a process")
            if "fork" in call and rel.startswith("trace_engine/recording/") and rel not in FORKS:
                bad(rel, line, "fork", f"{call}: recording forks only in {sorted(FORKS)}")
        if not rel.startswith("trace_engine/"):
            for line, cls in _engine_subclasses(path, rel):
                bad(rel, line, "compose", f"class {cls} extends an engine class: compose it (the recorder's callbacks)")
        if rel.startswith("trace_engine/") and rel != PATCHES:
            for line, what in _restores(path):
                bad(rel, line, "restore", f"{what}: only {PATCHES} puts saved attributes back (use its PatchScope)")
    return list(found.values())


def test_the_engines_invariants_hold():
    assert not violations(), "\n".join(violations())


def test_the_rooms_named_exist():
    for rel in (*INTERPRETER_ROOM, *STDLIB_ONLY, *FORKS, EXECS, *NO_TRITON_OR_TORCH, PATCHES):
        assert (PACKAGE / rel).exists(), rel
    for room in ROOMS:
        doc = ast.get_docstring(ast.parse((PACKAGE / "trace_engine" / room / "__init__.py").read_text()))
        assert doc and "must not" in doc, f"trace_engine/{room}/__init__.py: say what the room owns and must not import"


def test_the_face_exports_what_it_names():
    import triton_lens.trace_engine as face

    assert face.__all__ == sorted(face._FACE)
    for name in face.__all__:
        assert getattr(face, name) is not None, name


@pytest.mark.parametrize(
    "rel, source, expected",
    [
        ("analysis/bad.py", "import torch\n", "know neither triton nor torch"),
        ("lsp/bad.py", "from triton.runtime.interpreter import GridExecutor\n", "only the interpreter room"),
        ("trace_engine/process/supervisor.py", "import numpy as np\n", "standard library only"),
        (
            "trace_engine/process/supervisor.py",
            "from ..recording.recorder import Recorder\n",
            "other standard-library-only",
        ),
        ("trace_engine/recording/pure.py", '"""Pure numpy, no triton import."""\nimport triton\n', "docstring says"),
        ("source/plan.py", "import torch\n", "know neither triton nor torch"),
        ("lsp/runs.py", "from ..trace_engine.process.runner import run\n", "import its face"),
        ("viz/x.py", "from triton_lens.trace_engine.recording import recorder\n", "import its face"),
        (
            "trace_engine/interpreter/compat.py",
            "from ..recording.recorder import Recorder\n",
            "it may import no other room",
        ),
        ("trace_engine/standin/cuda_api.py", "from ..recording import stream\n", "the standin room imports"),
        ("trace_engine/recording/recorder.py", "from ..process.runner import run\n", "the recording room imports"),
        ("trace_engine/recording/recorder.py", "import subprocess\n", "only the process room starts a process"),
        ("trace_engine/recording/stream.py", "import os\nos.fork()\n", "recording forks only in"),
        ("trace_engine/interpreter/compat.py", "def undo(c):\n    delattr(c, 'f')\n", "only trace_engine/interpreter"),
        ("trace_engine/standin/cuda_api.py", "def undo(c):\n    del c.f\n", "puts saved attributes back"),
        (
            "trace_engine/interpreter/semantics.py",
            "def f(c, n):\n    old = vars(c).get(n)\n    setattr(c, n, 1)\n    setattr(c, n, old)\n",
            "setattr(..., old) of a saved attribute",
        ),
        (
            "trace_engine/standin/cuda_reentry.py",
            "def f(c):\n    old = c.__dict__['g']\n    c.g = 1\n    c.g = old\n",
            "an attribute set to the saved old",
        ),
        ("trace_engine/recording/recorder.py", "def f(c, saved):\n    vars(c).clear()\n", "attribute dict's"),
        (
            "viz/tracing.py",
            "from ..trace_engine import ParallelRecorder\nclass R(ParallelRecorder):\n    pass\n",
            "compose it",
        ),
    ],
)
def test_the_checker_sees_each_kind_of_violation(tmp_path, monkeypatch, rel, source, expected):
    fake = tmp_path / "triton_lens"
    (fake / rel).parent.mkdir(parents=True)
    (fake / rel).write_text(source)
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    found = violations()
    assert len(found) == 1 and expected in found[0], found


# A front end's words: its settings (tritonLens.timeLimit) and options (--timeout). The engine, the analysis,
# the model and the source name a remedy's kind (model/remedies.py) and each front end phrases it.
FRONT_END_WORDS = re.compile(r"tritonLens\.[a-z]|(?<![\w-])--(?:timeout|memory|python|cpu|gpu|workers|jobs)(?![\w-])")
NO_FRONT_END_WORDS = ("trace_engine/", "analysis/", "model/", "source/")
WORDS_OWNER = "model/remedies.py"  # the words of each front end, side by side


def front_end_words() -> list[str]:
    """Each string constant (docstrings aside) of the engine, analysis, model or source naming a setting or option."""
    bad = []
    for rel, path in _files():
        if not rel.startswith(NO_FRONT_END_WORDS) or rel == WORDS_OWNER:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                m = FRONT_END_WORDS.search(node.value)
                if m:
                    bad.append((rel, node.lineno, f"{m.group(0)!r}: a front end's word; give the remedy's kind"))
    return [f"{rel}:{line}: {what}" for rel, line, what in sorted(bad)]


def test_the_engine_and_the_analysis_know_no_front_ends_words():
    assert not front_end_words(), "\n".join(front_end_words())


def test_the_words_checker_sees_a_setting_and_an_option(tmp_path, monkeypatch):
    fake = tmp_path / "triton_lens"
    (fake / "analysis").mkdir(parents=True)
    (fake / "analysis" / "bad.py").write_text(
        '"""Mentions tritonLens.timeLimit in a docstring: fine."""\n'
        'A = "raise tritonLens.timeLimit"\nB = f"or --memory {1}"\nC = "a --memory-like word-free text"\n'
    )
    (fake / "model").mkdir()
    (fake / "model" / "remedies.py").write_text('EDITOR = {"t": "tritonLens.timeLimit"}\n')
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", fake)
    found = front_end_words()
    assert [f.split(": ")[0] for f in found] == ["analysis/bad.py:2", "analysis/bad.py:3"], found


ANALYSIS_TESTS = Path(__file__).resolve().parents[1] / "analysis"


def worker_runs(folder: Path) -> list[str]:
    """Where a test of the analysis starts a worker process (the runner: RunRequest / run)."""
    out = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("triton_lens.trace_engine"):
                for a in node.names:
                    if a.name in ("RunRequest", "run") or "process" in (node.module or ""):
                        out.append(f"{path.name}:{node.lineno}: imports {node.module}.{a.name}")
    return out


def test_the_analysis_tests_run_on_recorded_results_without_a_worker():
    # tests/analysis/recorded.py records a script in the test's own process; the worker is tests/engine's
    assert not worker_runs(ANALYSIS_TESTS), worker_runs(ANALYSIS_TESTS)


def test_the_worker_check_sees_a_run(tmp_path):
    (tmp_path / "test_x.py").write_text("from triton_lens.trace_engine.process.runner import RunRequest, run\n")
    (tmp_path / "test_y.py").write_text("from triton_lens.trace_engine import Recorder\n")
    assert worker_runs(tmp_path) == [
        "test_x.py:1: imports triton_lens.trace_engine.process.runner.RunRequest",
        "test_x.py:1: imports triton_lens.trace_engine.process.runner.run",
    ]
