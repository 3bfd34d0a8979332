"""The Triton-Viz API's view of the interpreter; the release-specific code lives in trace_engine/interpreter/compat.py."""

from ..trace_engine import hooks_installed as engine_hooks_installed  # noqa: F401
from ..trace_engine import jit_calls_interpreted, to_interpreted  # noqa: F401
