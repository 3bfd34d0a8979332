"""The viewer protocol's JSON Schema (server/triton_lens/viewer_protocol.schema.json) as validators, and the
schema of Triton Lens's own LSP messages (lsp_messages.schema.json):
`check(method, "params" | "result", instance)` raises jsonschema's ValidationError on a mismatch.
Shared by the service's tests and the transports' (tests/lsp, tests/viz)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

from jsonschema import Draft202012Validator

from triton_lens.analysis.viewer_service import load_schema


@functools.cache
def schema() -> dict:
    return load_schema()


@functools.cache
def validator(pointer: str) -> Draft202012Validator:
    root = schema()
    assert pointer.startswith("#/$defs/") and pointer[len("#/$defs/") :] in root["$defs"], pointer
    return Draft202012Validator({"$defs": root["$defs"], "$ref": pointer})


def check(method: str, part: str, instance) -> None:
    validator(schema()["methods"][method][part]).validate(instance)


def check_error(instance) -> None:
    validator("#/$defs/Error").validate(instance)


# -- Triton Lens's own LSP messages (server/triton_lens/lsp_messages.schema.json) ---------------------------
MESSAGES_SCHEMA = Path(__file__).resolve().parents[1] / "server" / "triton_lens" / "lsp_messages.schema.json"


@functools.cache
def messages_schema() -> dict:
    return json.loads(MESSAGES_SCHEMA.read_text())


@functools.cache
def _message_validator(pointer: str) -> Draft202012Validator:
    root = messages_schema()
    return Draft202012Validator({"$defs": root["$defs"], "$ref": pointer})


def message_parts(method: str) -> dict[str, str] | None:
    """{"params": ..., "result"?: ...} of an LSP method the messages' schema defines, else None."""
    root = messages_schema()
    for entry in (*root["requests"].values(), *root["notifications"].values()):
        if entry["method"] == method:
            return {k: v for k, v in entry.items() if k in ("params", "result")}
    return None


def check_message(method: str, part: str, instance) -> None:
    """Raises jsonschema's ValidationError when `instance` is not the schema's `part` of `method`."""
    parts = message_parts(method)
    assert parts is not None and part in parts, f"{method} has no {part} in lsp_messages.schema.json"
    _message_validator(parts[part]).validate(instance)
