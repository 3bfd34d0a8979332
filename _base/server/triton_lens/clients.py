"""`from triton_viz.clients import Sanitizer` keeps working as `from triton_lens.clients import Sanitizer`."""

from .viz.clients import Access, Client, LaunchInfo, Profiler, Sanitizer, SanitizerError, Tracer  # noqa: F401
