"""The triton releases the engine supports (each one's engine tests run in `make test`). No triton import:
the CLI asks before anything heavy is loaded."""

from __future__ import annotations

SUPPORTED = ("3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9")
TESTED = ("3.2.0", "3.3.1", "3.4.0", "3.5.1", "3.6.0", "3.7.1", "3.8.0", "3.9.0")


def unsupported_note(version: str) -> str | None:
    """None for a supported release; otherwise what to tell the user."""
    minor = ".".join(version.split("+")[0].split(".")[:2])
    if minor in SUPPORTED:
        return None
    return (
        f"triton {version} is not supported by Triton Lens: it runs kernels under triton "
        f"{SUPPORTED[0]} to {SUPPORTED[-1]} (tested: {', '.join(TESTED)}). "
        f"Install one of them, e.g. `python -m pip install triton=={TESTED[-1]}`, or point Triton Lens "
        f"at a Python that has one."
    )
