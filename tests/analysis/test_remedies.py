"""A stopped run's remedy is a kind (model/remedies.py) that the engine and the analysis name, phrased by each
front end in its own words: the editor's settings, the command line's options."""

from __future__ import annotations

import pytest

from triton_lens.analysis import analyze
from triton_lens.model import CRASHED, ERROR, TIMEOUT, RunResult, ScriptError
from triton_lens.model.remedies import COMMAND_LINE, EDITOR, KINDS, MEMORY_LIMIT, PLAIN, PYTHON, TIME_LIMIT, with_remedy


def test_every_front_end_has_words_for_every_kind():
    for words in (PLAIN, EDITOR, COMMAND_LINE):
        assert set(words) == set(KINDS)
        assert all(s.endswith(".") and s[0].isupper() for s in words.values())


def test_the_sentence_follows_the_message():
    assert with_remedy("stopped", None, EDITOR) == "stopped"
    assert (
        with_remedy("stopped", MEMORY_LIMIT, EDITOR)
        == "stopped. Raise tritonLens.memoryLimitMb if it really needs more."
    )
    assert with_remedy("stopped.", MEMORY_LIMIT, COMMAND_LINE) == "stopped. Raise --memory if it really needs more."
    assert with_remedy("stopped", "a-kind-from-a-newer-engine", EDITOR) == "stopped"


@pytest.mark.parametrize(
    "status, error, editor, command_line",
    [
        (
            TIMEOUT,
            ScriptError(TIMEOUT, "Timeout", "the script was still running after 5 s", "k.py", 3, remedy=TIME_LIMIT),
            "tritonLens.timeLimit",
            "--timeout",
        ),
        (
            CRASHED,
            ScriptError(CRASHED, "MemoryLimit", "the script used more than 1200 MB", "k.py", 3, remedy=MEMORY_LIMIT),
            "tritonLens.memoryLimitMb",
            "--memory",
        ),
    ],
)
def test_a_stopped_runs_finding_says_the_fix_in_the_front_ends_words(status, error, editor, command_line):
    result = RunResult(file="k.py", status=status, error=error)
    (plain,) = [f for f in analyze(result).findings if f.kind == status]
    (in_editor,) = [f for f in analyze(result, EDITOR).findings if f.kind == status]
    (on_cli,) = [f for f in analyze(result, COMMAND_LINE).findings if f.kind == status]
    assert editor in in_editor.message and command_line not in in_editor.message
    assert command_line in on_cli.message and editor not in on_cli.message
    assert editor not in plain.message and command_line not in plain.message and "Raise the" in plain.message
    assert in_editor.to_json()["remedy"] == error.remedy  # --json keeps the kind for tools


def test_a_tool_error_says_the_fix_in_the_front_ends_words():
    e = ScriptError(ERROR, "FileNotFoundError", "cannot start the Python interpreter '/no/python3'.", remedy=PYTHON)
    assert e.text(EDITOR).endswith("Set tritonLens.python to a Python that has triton, torch and numpy.")
    assert e.text(COMMAND_LINE).endswith("Pass --python a Python that has triton, torch and numpy.")
    assert e.message == "cannot start the Python interpreter '/no/python3'."  # the engine's own words
    assert e.to_json()["remedy"] == PYTHON
