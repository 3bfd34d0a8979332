"""`triton_viz.interpreter.record_builder` of Triton-Viz 0.1 notebooks: reset() forgets the recorded
launches; anything else of the old module says what to use instead."""

from __future__ import annotations

import pytest

import triton_lens.viz as viz


def test_reset_clears_the_recorded_launches():
    viz.launches.append("a launch")  # (the list the Tracer appends to)
    viz.interpreter.record_builder.reset()
    assert viz.launches == []
    assert viz.interpreter.record_builder.launches is viz.launches


def test_other_old_names_say_what_to_use():
    with pytest.raises(AttributeError, match="triton_viz.launches"):
        viz.interpreter.record_builder.records  # noqa: B018
