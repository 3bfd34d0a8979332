"""The viewer protocol's JSON Schema (server/triton_lens/viewer_protocol.schema.json) as validators:
`check(method, "params" | "result", instance)` raises jsonschema's ValidationError on a mismatch.
Shared by the service's tests and the transports' (tests/lsp, tests/viz)."""

from __future__ import annotations

import functools

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
