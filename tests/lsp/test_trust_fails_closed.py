"""An editor that does not say the workspace is trusted (no "trusted", or not a boolean) gets a
server that runs nothing: trust fails closed."""

from __future__ import annotations

import asyncio

import pytest
from lsp_harness import CORPUS_FILE, Session, session_fixture

pytestmark = pytest.mark.asyncio(loop_scope="module")

client = session_fixture({}, init_options={"trusted": "yes", "settings": {"debounceMs": 100}})


async def test_a_non_boolean_trusted_runs_nothing(session: Session, tmp_path):
    path = tmp_path / "k.py"
    path.write_text(CORPUS_FILE("oob_missing_mask.py").read_text())
    uri = session.open(path)
    await session.wait_for(lambda: session.diagnostics(uri), 10, "the untrusted notice")
    assert [x.code for x in session.diagnostics(uri)] == ["untrusted"]
    await asyncio.sleep(1.0)
    assert session.started == [] and session.finished == []
