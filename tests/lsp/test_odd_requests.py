"""Odd text and bad requests: every request gets an answer (InvalidParams for params that do not
fit), a change with an older version is dropped visibly, and lines are counted as VS Code counts
them (a form feed or U+2028 above a kernel moves no result, edits below it land where typed)."""

from __future__ import annotations

import asyncio

import pytest
from lsp_harness import CORPUS_FILE, Session, session_fixture
from lsprotocol import types as lsp

pytestmark = pytest.mark.asyncio(loop_scope="module")

client = session_fixture({"debounceMs": 100})

INVALID_PARAMS = -32602


def raw_request(s: Session, method: str, params):
    """Send params exactly as given (the client's own types would refuse to send malformed ones)."""
    import uuid
    from concurrent.futures import Future

    proto = s.client.protocol
    msg_id = str(uuid.uuid4())
    fut: Future = Future()
    proto._request_futures[msg_id] = fut
    proto._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    return asyncio.wrap_future(fut)


async def answer(s: Session, method: str, params):
    """The server's answer (a result, or the error it sent), within 10 s: never silence."""
    try:
        return await asyncio.wait_for(raw_request(s, method, params), 10)
    except asyncio.TimeoutError:
        raise AssertionError(f"no answer to {method} {params!r}") from None
    except Exception as e:  # noqa: BLE001 - the error response, as the client raises it
        return e


@pytest.mark.parametrize(
    "method,params",
    [
        ("textDocument/hover", {"textDocument": {"uri": "file:///w/k.py"}}),  # no position
        ("textDocument/inlayHint", {"textDocument": {"uri": "file:///w/k.py"}, "range": None}),
        ("textDocument/hover", [{"uri": "file:///w/k.py"}, {"line": 0, "character": 0}]),  # list params
        ("textDocument/codeLens", {"textDocument": None}),
    ],
)
async def test_malformed_params_get_invalid_params(session: Session, method, params):
    got = await answer(session, method, params)
    assert isinstance(got, Exception) and getattr(got, "code", None) == INVALID_PARAMS, repr(got)
    assert method in str(got)


async def test_values_without_count_use_the_default(session: Session, tmp_path):
    path = tmp_path / "k.py"
    path.write_text(CORPUS_FILE("vector_add.py").read_text())
    uri = session.open(path)
    await session.finished_run(uri, 1)
    got = await answer(session, "tritonLens/values", {"uri": uri, "launch": 0, "tensor": 0})
    assert not isinstance(got, Exception), got
    explicit = await answer(session, "tritonLens/values", {"uri": uri, "launch": 0, "tensor": 0, "count": 256})
    assert got.start == 0 and got.values == explicit.values and len(got.values) == 128  # x: all 128 elements
    few = await answer(session, "tritonLens/values", {"uri": uri, "launch": 0, "tensor": 0, "count": 3})
    assert few.values == [0.0, 1.0, 2.0]
    session.close(uri)


ODD = "PAGE = 1  # \x0c \x0b \u2028 \u2029 \x85: no line breaks for VS Code or Python\n"


async def test_odd_characters_above_a_kernel_move_no_result_and_edits_below_land_where_typed(
    session: Session, tmp_path
):
    plain = CORPUS_FILE("oob_missing_mask.py").read_text()
    text = ODD + plain
    path = tmp_path / "odd.py"
    path.write_text(text, newline="")
    uri = session.open(path, text)
    await session.finished_run(uri, 1)
    oob = [d for d in session.diagnostics(uri) if d.code == "oob"]
    assert [d.range.start.line for d in oob] == [12]  # corpus line 12 (1-based) + 1, 0-based
    # Type below the odd line: the server's copy must change where the editor's did.
    lines = text.split("\n")
    v = session.edit(uri, 3, 0, 3, 0, "# typed\n")
    await session.finished_run(uri, v)
    oob = [d for d in session.diagnostics(uri) if d.code == "oob"]
    assert [d.range.start.line for d in oob] == [13]
    got = await answer(session, "tritonLens/kernels", {"uri": uri})
    assert got.docVersion == v and [k.line for k in got.kernels] == [
        lines.index(next(x for x in lines if "def " in x)) + 2
    ]
    session.close(uri)


async def test_a_change_with_an_older_version_is_ignored_and_said_so(session: Session, tmp_path):
    path = tmp_path / "old.py"
    path.write_text("print(1)\n")
    uri = session.open(path, version=5)
    session.client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=3),
            [lsp.TextDocumentContentChangeWholeDocument(text="garbage(\n")],
        )
    )
    await session.wait_for(
        lambda: [m for m in session.client.log_messages if "ignored a change" in m.message],
        10,
        "the server to say it ignored the change",
    )
    (m,) = [m for m in session.client.log_messages if "ignored a change" in m.message]
    assert "version 3" in m.message and "version 5" in m.message and m.type == lsp.MessageType.Warning
    got = await answer(session, "tritonLens/kernels", {"uri": uri})
    assert got.docVersion == 5
    session.close(uri)


async def test_typing_word_by_word_below_a_form_feed_runs_the_typed_text(session: Session, tmp_path):
    # A form feed alone on its line (Emacs' page break) and one inside a line, above and below the
    # kernel; then a name typed one keystroke at a time below them: the run must see the whole word.
    plain = CORPUS_FILE("oob_missing_mask.py").read_text()
    text = "\x0c\nPAGE = 1  # \x0c page\n" + plain.replace("\n\n\n", "\n\x0c\n\n", 1) + "\x0c\nDONE = 1\n"
    path = tmp_path / "pages.py"
    path.write_text(text, newline="")
    uri = session.open(path, text)
    await session.finished_run(uri, 1)
    lines = text.split("\n")
    last = len(lines) - 2  # 0-based "DONE = 1"
    v = 1
    for i, ch in enumerate("renamed = DONE + PAGE\n"):
        v = session.edit(uri, last + 1, i, last + 1, i, ch)
    await session.finished_run(uri, v)
    assert not [d for d in session.diagnostics(uri) if d.code in ("exception", "crashed")], session.diagnostics(uri)
    # A word replaced on the line after a lone form feed: for pygls' copy that line is "\n", and its
    # codec clamped the edit's end to column 0 in the params our copy got (PAGE_SIZEPAGE = 1).
    v = session.edit(uri, 1, 0, 1, len("PAGE"), "PAGE_SIZE")
    v = session.edit(uri, last + 1, len("renamed = DONE + "), last + 1, len("renamed = DONE + PAGE"), "PAGE_SIZE")
    await session.finished_run(uri, v)
    errors = [d for d in session.diagnostics(uri) if d.code in ("exception", "crashed")]
    assert [d.message for d in errors] == [], errors
    session.close(uri)


async def test_a_huge_buffer_is_not_planned_and_requests_are_still_answered(session: Session, tmp_path):
    path = tmp_path / "huge.py"
    small = CORPUS_FILE("vector_add.py").read_text()
    path.write_text(small)
    uri = session.open(path)
    assert (await session.finished_run(uri, 1))["status"] == "ok"
    # A 10 MB buffer (a pasted table): once it parsed and planned on every change, on the event loop.
    v = session.replace_all(uri, small + "DATA = [" + "0, " * 3_500_000 + "]\n")
    await session.wait_for(
        lambda: session.published_version(uri) == v and [d for d in session.diagnostics(uri) if d.code == "too-large"],
        what="the too-large diagnostic",
    )
    (d,) = [d for d in session.diagnostics(uri) if d.code == "too-large"]
    assert "Not run: the file is 10.0 MB of text: Triton Lens runs files up to 1 MB" in d.message
    for _ in range(3):  # each answered (answer() fails after 10 s of silence), and nothing is shown
        assert (
            await answer(
                session, "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 12, "character": 10}}
            )
            is None
        )
    v = session.replace_all(uri, small)  # back to the kernel: it runs again
    assert (await session.finished_run(uri, v))["status"] == "ok"
    assert not [d for d in session.diagnostics(uri) if d.code == "too-large"]
