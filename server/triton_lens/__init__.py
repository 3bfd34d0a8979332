"""Triton Lens: what every tl.load and tl.store of a Triton kernel really did.

The package keeps the API of Triton-Viz (`trace`, `launch`, `clear`, `launches`, `Client`), so a
Triton-Viz script works with `import triton_lens as triton_viz`. They are imported on first use
(they need triton), so `import triton_lens` stays light for the CLI and the language server.
"""

import types as _types

__version__ = "0.1.0"

_VIZ_NAMES = (
    "launch",
    "stop",
    "clear",
    "launches",
    "Client",
    "Tracer",
    "Sanitizer",
    "Profiler",
    "SanitizerError",
    "Access",
    "LaunchInfo",
    "config",
)


# `triton_lens.trace` is both the trace-engine package (triton_lens.trace.recorder, ...) and the
# Triton-Viz decorator `trace(client)`: the package module is made callable. (The name cannot be a
# plain function: importing any submodule of the package would rebind it to the package.)
class _TracePackage(_types.ModuleType):
    def __call__(self, client=None, backend="triton", *, clients=None, workers=1):
        """@trace(client): see triton_lens.viz.tracing.trace."""
        from .viz.tracing import trace as _trace

        return _trace(client, backend, clients=clients, workers=workers)


from . import trace as _trace_package  # noqa: E402  (the package's __init__ imports nothing)

_trace_package.__class__ = _TracePackage


def __getattr__(name):
    if name in _VIZ_NAMES:
        from . import viz

        return getattr(viz, name)
    raise AttributeError(f"module 'triton_lens' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_VIZ_NAMES))
