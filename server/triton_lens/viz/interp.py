"""The Triton-Viz API's view of the interpreter; the release-specific code lives in trace/compat.py."""

from ..trace.compat import installed as engine_hooks_installed  # noqa: F401
