"""The Triton-Viz API's view of the interpreter; the release-specific code lives in trace/compat.py."""

from ..trace.compat import installed as engine_hooks_installed  # noqa: F401
from ..trace.compat import jit_calls_interpreted, to_interpreted  # noqa: F401
