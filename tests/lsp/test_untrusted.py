"""initializationOptions {"trusted": false}: the server never runs user code, and says so once."""

from __future__ import annotations

import asyncio

import pytest
from lsp_harness import CORPUS_FILE, Session, session_fixture

pytestmark = pytest.mark.asyncio(loop_scope="module")

client = session_fixture({}, init_options={"trusted": False, "settings": {"debounceMs": 100}})


async def test_untrusted_workspace_runs_nothing_and_says_why(session: Session, tmp_path):
    path = tmp_path / "k.py"
    path.write_text(CORPUS_FILE("oob_missing_mask.py").read_text())
    uri = session.open(path)
    await session.wait_for(lambda: session.diagnostics(uri), 10, "the untrusted notice")
    d = session.diagnostics(uri)
    assert [x.code for x in d] == ["untrusted"] and d[0].severity == 3
    assert "untrusted" in d[0].message and "Trust" in d[0].message
    assert d[0].range.start.line == 7  # at the kernel's def
    session.edit(uri, 0, 3, 0, 3, "edited ")  # in place: the notice stays where it is
    session.save(uri)
    await asyncio.sleep(1.5)
    assert session.started == [] and session.finished == []
    n = len([p for p in session.published if p[0] == uri])
    assert n == 1, "the notice is published once"
    lenses = await session.lenses(uri)
    assert any("not trusted" in lens.command.title for lens in lenses)
    assert await session.hints(uri) == []
    # a file with no kernel gets no notice
    plain = tmp_path / "plain.py"
    plain.write_text("print(1)\n")
    puri = session.open(plain)
    await asyncio.sleep(0.5)
    assert session.diagnostics(puri) == []
