"""The names of the Triton-Viz API, in one place: `triton_lens` forwards them lazily (so importing
the package needs no triton) and `triton_lens.viz` exports them. This module imports nothing."""

TRITON_VIZ_NAMES = (
    "trace",
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
