"""What Triton-Viz 0.1 notebooks call on `triton_viz.interpreter`: `record_builder.reset()` before
each puzzle, to forget the launches recorded so far. Here that is `clear()`; the rest of the old
interpreter module (its record classes) has no counterpart, and says what to use instead."""

from __future__ import annotations

from .clients import clear, launches


class RecordBuilder:
    def reset(self) -> None:
        """Forget every recorded launch (Triton Lens: `triton_viz.clear()`)."""
        clear()

    @property
    def launches(self):
        return launches

    def __getattr__(self, name: str):
        raise AttributeError(
            f"triton_viz.interpreter.record_builder.{name} is Triton-Viz 0.1's and has no counterpart in "
            "Triton Lens: read the recorded launches from triton_viz.launches (or triton_lens.launches)"
        )


record_builder = RecordBuilder()
