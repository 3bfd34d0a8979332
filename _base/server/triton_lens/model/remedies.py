"""What a user can do about a stopped run, as a kind the engine and the analysis name, and the words each
front end phrases it in. The engine and the analysis know no front end's words (no setting or option
names in their messages): a ScriptError or a Finding carries `remedy`, one of the kinds below, and the
front end that shows the message adds its own sentence (`with_remedy`). Pure: no imports beyond typing."""

from __future__ import annotations

from collections.abc import Mapping

TIME_LIMIT = "time-limit"  # the run reached its time limit
MEMORY_LIMIT = "memory-limit"  # the run used more than its memory limit
PYTHON = "python"  # the Python interpreter the run was given cannot run it (missing, or without triton)

KINDS = (TIME_LIMIT, MEMORY_LIMIT, PYTHON)

# Words a front end gives each kind: one sentence, the fix in that front end's own terms.
Remedies = Mapping[str, str]

# When no front end is named (the analysis as a library, tests): the fix without a setting's name.
PLAIN: Remedies = {
    TIME_LIMIT: "Raise the time limit if it needs more time.",
    MEMORY_LIMIT: "Raise the memory limit if it really needs more.",
    PYTHON: "Use a Python that has triton, torch and numpy.",
}
# The language server (VS Code's settings).
EDITOR: Remedies = {
    TIME_LIMIT: "Raise the time limit (the tritonLens.timeLimit setting) if it needs more time.",
    MEMORY_LIMIT: "Raise tritonLens.memoryLimitMb if it really needs more.",
    PYTHON: "Set tritonLens.python to a Python that has triton, torch and numpy.",
}
# The command line (`triton-lens check`, `view`) and what it writes.
COMMAND_LINE: Remedies = {
    TIME_LIMIT: "Raise the time limit (--timeout) if it needs more time.",
    MEMORY_LIMIT: "Raise --memory if it really needs more.",
    PYTHON: "Pass --python a Python that has triton, torch and numpy.",
}


def with_remedy(message: str, remedy: str | None, words: Remedies = PLAIN) -> str:
    """`message` followed by the front end's sentence for `remedy` (none: the message alone)."""
    if remedy is None:
        return message
    sentence = words.get(remedy) or PLAIN.get(remedy)
    if not sentence:
        return message
    body = message.rstrip()
    return f"{body}{'' if body.endswith(('.', '!', '?')) else '.'} {sentence}"
