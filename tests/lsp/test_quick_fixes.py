"""Quick fixes of the size check's findings, over the real server: each code action's edit, applied to
the buffer, gives a kernel the next run finds right at those sizes (the fix is judged by a run, not by
its text)."""

from __future__ import annotations

import shutil

import pytest
from lsp_harness import Session, session_fixture
from lsprotocol import types as lsp
from markers import CORPUS

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    return tmp_path_factory.mktemp("fixes")


client = session_fixture({"timeLimit": 120}, with_workspace=True)


def _apply(text: str, edits: list[lsp.TextEdit]) -> str:
    lines = text.split("\n")
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        s, t = e.range.start, e.range.end
        assert s.line == t.line  # the fixes edit one line (ASCII here: UTF-16 units are characters)
        row = lines[s.line]
        lines[s.line] = row[: s.character] + e.new_text + row[t.character :]
    return "\n".join(lines)


async def _fixes(session: Session, uri: str, codes: set[str]) -> list[lsp.CodeAction]:
    diags = [d for d in session.diagnostics(uri) if d.code in codes]
    assert diags, [(d.code, d.message) for d in session.diagnostics(uri)]
    got = await session.client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri),
            range=lsp.Range(lsp.Position(0, 0), lsp.Position(10_000, 0)),
            context=lsp.CodeActionContext(diagnostics=diags, only=[lsp.CodeActionKind.QuickFix]),
        )
    )
    actions = [a for a in got or [] if isinstance(a, lsp.CodeAction)]
    assert len(actions) == len(diags), [a.title for a in actions]
    return actions


@pytest.mark.parametrize(
    ("name", "code", "titles", "fixed"),
    [
        (
            "int32_wrap_offsets.py",
            "wrap",
            ["Widen `row * stride` to int64 before the arithmetic"] * 2,
            "tl.load(x_ptr + row.to(tl.int64) * stride + cols, mask=mask, other=0.0)",
        ),
        (
            "tail_hidden_by_size.py",
            "oob-sizes",
            ["Mask the load against n: `mask=offs < n`"],
            "x = tl.load(x_ptr + offs, mask=offs < n)",
        ),
    ],
)
async def test_a_quick_fix_gives_a_kernel_right_at_the_failing_size(
    session: Session, workspace, name, code, titles, fixed
):
    path = workspace / name
    shutil.copy(CORPUS / name, path)
    uri = session.open(path)
    assert (await session.finished_run(uri, 1, timeout=180))["status"] == "ok"
    actions = await _fixes(session, uri, {code})
    assert [a.title for a in actions] == titles and all(a.is_preferred for a in actions)
    edits = [e for a in actions for e in (a.edit.changes or {})[uri]]
    text = _apply(path.read_text(), edits)
    assert fixed in text
    v = session.replace_all(uri, text)
    assert (await session.finished_run(uri, v, timeout=180))["status"] == "ok"
    left = [d for d in session.diagnostics(uri) if d.code in ("wrap", "oob-sizes", "oob")]
    assert session.published_version(uri) == v and left == [], [d.message for d in left]


LIBRARY = """import triton
import triton.language as tl


@triton.jit
def double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)
"""

LIBRARY_TEST = """import torch
import triton

from double_ops import double_kernel


def test_double():
    x = torch.arange(300, dtype=torch.float32)
    y = torch.empty_like(x)
    double_kernel[(triton.cdiv(300, 128),)](x, y, 300, BLOCK=128)
    assert torch.equal(y, 2 * x)
"""


async def test_a_library_file_is_offered_the_workspaces_tests_that_import_it(session: Session, workspace):
    (workspace / "tests").mkdir(exist_ok=True)
    (workspace / "tests" / "test_double.py").write_text(LIBRARY_TEST)
    (workspace / "tests" / "conftest.py").write_text(
        "import sys, os\nsys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))\n"
    )
    (workspace / "unrelated.py").write_text("import torch\n")
    path = workspace / "double_ops.py"
    path.write_text(LIBRARY)
    uri = session.open(path)
    await session.finished_run(uri, 1, timeout=180)
    actions = await _fixes(session, uri, {"no-launch"})
    assert [a.title for a in actions] == [
        "Run this file's kernels through tests/test_double.py (add `# triton-lens: run pytest -q tests/test_double.py`)"
    ]
    text = _apply(path.read_text(), (actions[0].edit.changes or {})[uri])
    assert "# triton-lens: run pytest -q tests/test_double.py\n@triton.jit\ndef double_kernel" in text
    v = session.replace_all(uri, text)
    assert (await session.finished_run(uri, v, timeout=180))["status"] == "ok"
    assert not [d for d in session.diagnostics(uri) if d.code == "no-launch"]
    (hint,) = [h for h in await session.hints(uri) if h.position.line == 8]  # the store line, now launched
    assert "y_ptr[0:300]" in hint.label
