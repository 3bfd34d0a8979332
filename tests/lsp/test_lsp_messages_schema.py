"""Triton Lens's own LSP messages have one definition, server/triton_lens/lsp_messages.schema.json: the server
sends and answers under its method names, every answer and notification the LSP tests see is validated against
it (lsp_harness.Session._checked, failing the module's fixture), and it ships with the package."""

from __future__ import annotations

from importlib import resources

import pytest
from jsonschema import ValidationError
from lsp_harness import Session
from protocol_schema import check_message, messages_schema

from triton_lens.lsp import outline, plan_request, server, source_lines


def test_the_server_names_every_message_as_the_schema_does():
    s = messages_schema()
    assert s["requests"]["runPlan"]["method"] == plan_request.RUN_PLAN
    assert s["requests"]["kernelOutline"]["method"] == outline.KERNEL_OUTLINE
    assert s["requests"]["viewLocation"]["method"] == source_lines.VIEW_LOCATION
    assert s["requests"]["editorLocation"]["method"] == source_lines.EDITOR_LOCATION
    assert s["notifications"]["runStarted"]["method"] == server.RUN_STARTED
    assert s["notifications"]["runPartial"]["method"] == server.RUN_PARTIAL
    assert s["notifications"]["runFinished"]["method"] == server.RUN_FINISHED


def test_the_schema_ships_with_the_package():
    text = resources.files("triton_lens").joinpath("lsp_messages.schema.json").read_text()
    assert '"tritonLens/runFinished"' in text


def test_a_message_off_the_schema_is_caught():
    ok = {"uri": "file:///k.py", "version": 2, "status": "ok", "ms": 12.5, "launches": 1, "running": False}
    check_message("tritonLens/runFinished", "params", ok)
    for bad in ({**ok, "launches": [1]}, {**ok, "status": "done"}, {k: v for k, v in ok.items() if k != "version"}):
        with pytest.raises(ValidationError):
            check_message("tritonLens/runFinished", "params", bad)
    session = Session(client=None)  # type: ignore[arg-type]
    session._checked("tritonLens/runFinished", "params", {**ok, "extra": 1})
    assert len(session.schema_errors) == 1 and "extra" in session.schema_errors[0]
