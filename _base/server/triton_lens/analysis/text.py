"""The one place for how numbers read to a kernel author: counts with their noun, bytes, durations,
program ids. Findings, hints, hovers, lenses, the CLI's reports and the profiler's table all use it."""

from __future__ import annotations

EXAMPLES = 3  # examples (programs, elements, offsets) a message lists


def plural(n: int, word: str, many: str | None = None) -> str:
    """ "1 lane", "3 lanes", "2 launches" (words ending in ch, sh, s or x take -es), or `many` when given."""
    if n == 1:
        return f"{n} {word}"
    return f"{n} {many or (word + ('es' if word.endswith(('ch', 'sh', 's', 'x')) else 's'))}"


def format_bytes(n: float) -> str:
    """512 B, 3.9 KB, 25.0 MB: for hints, tables and hovers alike."""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def format_seconds(t: float) -> str:
    """12.3 ns, 4.56 µs, 1.23 ms: roofline estimates."""
    if t >= 1e-3:
        return f"{t * 1e3:.2f} ms"
    if t >= 1e-6:
        return f"{t * 1e6:.2f} µs"
    return f"{t * 1e9:.1f} ns"


def format_program(p: tuple[int, ...]) -> str:
    """A program id as the kernel's grid has it: "(3,)", "(1, 2)"."""
    return "(" + ", ".join(str(v) for v in p) + ("," if len(p) == 1 else "") + ")"
