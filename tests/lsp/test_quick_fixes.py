"""Quick fixes of the size check's findings, over the real server: each is offered only once a run of
the text with its edit made no longer reports its finding (lsp/fixcheck.py), and its edit, applied to the
buffer, gives a kernel the next run finds right at those sizes (the fix is judged by a run, not by its
text). A fix that run refutes is not offered; nor is one of a text edited since."""

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


async def _actions(session: Session, uri: str, codes: set[str]) -> tuple[list[lsp.Diagnostic], list[lsp.CodeAction]]:
    diags = [d for d in session.diagnostics(uri) if d.code in codes]
    assert diags, [(d.code, d.message) for d in session.diagnostics(uri)]
    got = await session.client.text_document_code_action_async(
        lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri),
            range=lsp.Range(lsp.Position(0, 0), lsp.Position(10_000, 0)),
            context=lsp.CodeActionContext(diagnostics=diags, only=[lsp.CodeActionKind.QuickFix]),
        )
    )
    return diags, [a for a in got or [] if isinstance(a, lsp.CodeAction)]


async def _fixes(session: Session, uri: str, codes: set[str]) -> list[lsp.CodeAction]:
    diags, actions = await _actions(session, uri, codes)
    assert len(actions) == len(diags), [a.title for a in actions]
    return actions


def _rechecked(session: Session, name: str, version: int) -> list[str]:
    """The server's output-channel lines of the re-check of that version's fixes (fixcheck.py)."""
    prefix = f"{name} v{version}: quick fix"
    return [m.message for m in session.client.log_messages if m.message.startswith(prefix)]


async def _rechecks_done(session: Session, name: str, version: int) -> list[str]:
    await session.wait_for(
        lambda: any("quick fixes re-checked" in m for m in _rechecked(session, name, version)),
        240,
        f"the re-check of {name} v{version}'s quick fixes",
    )
    return _rechecked(session, name, version)


@pytest.mark.parametrize(
    ("name", "code", "titles", "fixed"),
    [
        (
            "int32_wrap_offsets.py",
            "wrap",
            [
                f"Widen `row * stride` to int64 before the arithmetic (re-checked: no wrap at {t}.shape = "
                "(524289, 4096) with this edit)"
                for t in ("x_ptr", "y_ptr")
            ],
            "tl.load(x_ptr + row.to(tl.int64) * stride + cols, mask=mask, other=0.0)",
        ),
        (
            "tail_hidden_by_size.py",
            "oob-sizes",
            ["Mask the load against n: `mask=offs < n` (re-checked: in bounds at n = 4097 with this edit)"],
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
    published = len(session.published)
    # Asked before the re-check ended (it runs the file again): nothing yet, rather than an unchecked edit.
    # (Its end is logged before the answer would be sent: on a loaded machine this question can come late.)
    early = (await _actions(session, uri, {code}))[1]
    assert early == [] or _rechecked(session, name, 1), [a.title for a in early]
    lines = await _rechecks_done(session, name, 1)
    assert f"{len(titles)} offered" in lines[0], lines
    # The same diagnostics again, so that the editor asks for the code actions anew.
    await session.wait_for(lambda: (uri, 1) in [(u, v) for u, v, _ in session.published[published:]], 30, "republish")
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


# Complex numbers as (real, imag) float pairs: the row offset counts two floats per value. The size check
# finds `row * stride * 2` overflowing first; the quick fix widens its left operand, `row * stride`, as a
# whole, and that product itself overflows at twice the size (16 GiB, which an H100 holds): the re-check
# still finds the wrap, so the fix is not offered (`row.to(tl.int64) * stride * 2`, the message's hint, is right).
PAIRS = """import torch
import triton
import triton.language as tl


@triton.jit
def conj_kernel(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    base = row * stride * 2
    re = tl.load(x_ptr + base + 2 * cols, mask=mask)
    im = tl.load(x_ptr + base + 2 * cols + 1, mask=mask)
    tl.store(y_ptr + base + 2 * cols, re, mask=mask)
    tl.store(y_ptr + base + 2 * cols + 1, -im, mask=mask)


x = torch.randn(8, 1024, 2)
y = torch.empty_like(x)
conj_kernel[(x.shape[0],)](x, y, x.shape[1], x.shape[1], BLOCK=1024)
assert torch.equal(y[..., 0], x[..., 0]) and torch.equal(y[..., 1], -x[..., 1])
"""


async def test_a_fix_that_a_run_of_the_edited_kernel_refutes_is_not_offered(session: Session, workspace):
    path = workspace / "complex_pairs.py"
    path.write_text(PAIRS)
    uri = session.open(path)
    assert (await session.finished_run(uri, 1, timeout=180))["status"] == "ok"
    wraps = [d for d in session.diagnostics(uri) if d.code == "wrap"]
    assert len(wraps) == 4 and all("`row * stride * 2`" in d.message for d in wraps), [d.message for d in wraps]
    lines = await _rechecks_done(session, "complex_pairs.py", 1)
    assert "0 offered, 4 not" in lines[0], lines
    why = [m for m in lines if "not offered" in m]
    assert len(why) == 4 and all("`row * stride` still wraps" in m for m in why), why
    assert (await _actions(session, uri, {"wrap"}))[1] == []


async def test_an_edit_while_the_fixes_are_re_checked_offers_none_of_the_old_text(session: Session, workspace):
    name = "wrap_then_edited.py"
    path = workspace / name
    shutil.copy(CORPUS / "int32_wrap_offsets.py", path)
    uri = session.open(path)
    assert (await session.finished_run(uri, 1, timeout=180))["status"] == "ok"
    v2 = session.edit(uri, 0, 0, 0, 0, "# edited\n")  # the same kernels, one line down, while v1's fixes re-check
    # Whichever diagnostics the editor holds (v1's, or v1's moved onto v2): no fix of v1's text for v2.
    assert (await _actions(session, uri, {"wrap"}))[1] == []
    assert (await session.finished_run(uri, v2, timeout=180))["status"] == "ok"
    await _rechecks_done(session, name, v2)
    actions = await _fixes(session, uri, {"wrap"})
    edits = [e for a in actions for e in (a.edit.changes or {})[uri]]
    assert sorted(e.range.start.line for e in edits) == [19, 21]  # v2's lines (v1's were 18 and 20)
    text = _apply("# edited\n" + path.read_text(), edits)
    assert "tl.load(x_ptr + row.to(tl.int64) * stride + cols, mask=mask" in text.split("\n")[19]


PROVED = """import torch
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, x * 2, mask=offs < n)


n = 4096
x = torch.randn(n)
out = torch.empty(n)
scale[lambda meta: (triton.cdiv(n, meta["BLOCK"]),)](x, out, n, BLOCK=1024)
"""


async def test_the_hover_of_an_access_z3_proves_says_for_which_sizes_and_what_it_assumed(session: Session, workspace):
    from triton_lens.trace_engine.recording.size_symbolic import z3_module

    if z3_module() is None:
        pytest.skip("z3 is off: z3-solver not installed (the extra triton-lens[symbolic]) or TRITON_LENS_SYMBOLIC=0")
    path = workspace / "proved.py"
    path.write_text(PROVED)
    uri = session.open(path)
    assert (await session.finished_run(uri, 1, timeout=180))["status"] == "ok"
    hover = await session.hover(uri, 8, 10)  # the load
    assert hover is not None and isinstance(hover.contents, lsp.MarkupContent)
    text = hover.contents.value
    assert (
        "- **in bounds for every n ≤ 2,147,483,647**: z3 proves that no active lane leaves `x_ptr` at any of these "
        "sizes, in any program (the largest n an int32 argument holds; assuming `x_ptr` holds n elements; the grid "
        "`(triton.cdiv(n, meta['BLOCK']),)`; n is the size 4096 of x_ptr and out_ptr)"
    ) in text, text
