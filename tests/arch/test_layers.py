"""The one-way flow of docs/architecture.md, checked on the source: no module imports from a layer
after its own (model → source → trace_engine and analysis, side by side → the front ends lsp / viz / report → the cli and the
package's entry points), and the front ends do not import each other."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "triton_lens"

# Rank of each top-level module or subpackage of triton_lens. Same rank = siblings, which must not
# import each other (except a package importing itself).
RANK = {
    "model": 0,
    "source": 1,  # the run plan and the kernel finder: text only
    "trace_engine": 2,
    "analysis": 2,  # a sibling of the engine: pure functions over what a run recorded, no engine module
    "report": 3,
    "lsp": 3,
    "viz": 3,
    "debug_launcher": 3,
    "clients": 4,
    "cli": 4,
    "check": 4,
    "pytest_plugin": 4,  # like the cli, it writes with the reports
    "__main__": 4,
    "__init__": 4,
    "__version__": -1,  # a constant of the package root, importable from anywhere
    "viz_names": -1,
    "cli_options": -1,  # argparse types of the command lines' options: standard library only  # the Triton-Viz API's names: a tuple of strings, importable from anywhere
}


def _layer(parts: tuple[str, ...]) -> str:
    return parts[0] if parts else "__init__"


def _imports(path: Path) -> list[tuple[int, tuple[str, ...]]]:
    """(line, target module parts inside triton_lens) of every import of the package in a file."""
    rel = path.relative_to(PACKAGE).with_suffix("").parts
    pkg = rel[:-1]  # the package this module sits in (for __init__, the package itself)
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg[: len(pkg) - (node.level - 1)]
                mod = tuple(node.module.split(".")) if node.module else ()
                targets = [base + mod] if mod else [base + (a.name,) for a in node.names]
            elif node.module and node.module.split(".")[0] == "triton_lens":
                targets = [tuple(node.module.split(".")[1:])]
            else:
                continue
        elif isinstance(node, ast.Import):
            targets = [tuple(a.name.split(".")[1:]) for a in node.names if a.name.split(".")[0] == "triton_lens"]
        else:
            continue
        out.extend((node.lineno, t) for t in targets)
    return out


def violations() -> list[str]:
    bad = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).with_suffix("").parts
        own = _layer(rel)
        assert own in RANK, (
            f"{path}: new top-level module {own!r}: give it a layer in RANK (and in docs/architecture.md)"
        )
        for line, target in _imports(path):
            other = _layer(target)
            if other == own or other not in RANK:
                continue
            if RANK[other] > RANK[own] or (RANK[other] == RANK[own] and RANK[own] < 4):
                bad.append(
                    f"{path.relative_to(PACKAGE)}:{line}: {own} (layer {RANK[own]}) imports "
                    f"{'.'.join(target)} (layer {RANK[other]})"
                )
    return bad


def test_imports_flow_one_way():
    assert not violations(), "\n".join(violations())


def test_the_checker_sees_a_violation(tmp_path, monkeypatch):
    # The check itself can fail: a model module importing the analysis is caught.
    fake = tmp_path / "triton_lens"
    (fake / "model").mkdir(parents=True)
    (fake / "model" / "bad.py").write_text("from ..analysis import analyze\nfrom ..model import Finding\n")
    (fake / "analysis").mkdir()
    (fake / "analysis" / "ok.py").write_text(
        "from ..model import Finding\nfrom triton_lens.source.kernels import outline\n"
    )
    (fake / "analysis" / "bad.py").write_text("from ..trace_engine import run\n")  # siblings: the engine's layer
    monkeypatch.setattr(__import__(__name__), "PACKAGE", fake)
    found = violations()
    assert len(found) == 2, found
    assert found[0] == "analysis/bad.py:1: analysis (layer 2) imports trace_engine (layer 2)", found
    assert found[1].startswith("model/bad.py:1: model (layer 0) imports analysis"), found
