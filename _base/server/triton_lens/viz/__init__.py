"""The Triton-Viz API: `trace(client)` on a kernel, `launch()` to see the recorded launches in a
browser, `clear()`, `launches`, and `Client` for your own callbacks.

    import triton_lens as triton_viz

    @triton_viz.trace("tracer")
    @triton.jit
    def add_kernel(x_ptr, y_ptr, z_ptr, N, B: tl.constexpr): ...

    add_kernel[(2,)](x, y, z, 128, 64)
    triton_viz.launch(share=False)
"""

from ..viz_names import TRITON_VIZ_NAMES
from .clients import Access, Client, LaunchInfo, Profiler, Sanitizer, SanitizerError, Tracer, clear, launches  # noqa: F401
from .config import config  # noqa: F401
from .tracing import TracedKernel, trace  # noqa: F401


def launch(share: bool = False, port=None, block=None):
    """Serve the viewer for the recorded launches on 127.0.0.1 (a public link only with share=True;
    see `triton_lens.viz.server.launch`)."""
    from .server import launch as _launch

    return _launch(share=share, port=port, block=block)


def stop() -> None:
    """Stop the viewer started by `launch(block=False)` (and its public tunnel)."""
    from .server import stop as _stop

    _stop()


def __getattr__(name: str):
    # `triton_viz.interpreter.record_builder.reset()` of Triton-Viz 0.1 notebooks, without importing
    # triton_viz.interpreter first (its package imported it).
    if name == "interpreter":
        from . import legacy_interpreter

        return legacy_interpreter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [*TRITON_VIZ_NAMES, "TracedKernel"]
