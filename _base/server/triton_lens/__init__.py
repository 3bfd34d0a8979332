"""Triton Lens: what every tl.load and tl.store of a Triton kernel really did.

The package keeps the API of Triton-Viz (`trace`, `launch`, `clear`, `launches`, `Client`), so a
Triton-Viz script works with `import triton_lens as triton_viz`. They are imported on first use
(they need triton), so `import triton_lens` stays light for the CLI and the language server.
"""

__version__ = "0.1.0"

from .viz_names import TRITON_VIZ_NAMES as _VIZ_NAMES


def trace(client=None, backend="triton", *, clients=None, workers=1):
    """@trace(client) over @triton.jit: the Triton-Viz decorator (see triton_lens.viz.tracing.trace).
    The trace engine itself is the package triton_lens.trace_engine."""
    from .viz.tracing import trace as _trace

    return _trace(client, backend, clients=clients, workers=workers)


def __getattr__(name):
    if name in _VIZ_NAMES and name != "trace":
        from . import viz

        return getattr(viz, name)
    raise AttributeError(f"module 'triton_lens' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_VIZ_NAMES))
