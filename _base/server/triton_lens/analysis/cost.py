"""What a run cost, and which launch it went to: under the interpreter a run's time is its programs', so
one launch of many programs usually dominates, and that launch is what a smaller size would speed up.
Pure: the run's recorded seconds in, facts out (the front ends say what helps, in their own words)."""

from __future__ import annotations

from dataclasses import dataclass

from ..model import RunResult

# A run this long is slow enough to notice on each edit; a launch with this share of it dominates.
NOTICEABLE_RUN_S = 2.0
DOMINANT_SHARE = 0.5


@dataclass(frozen=True)
class LaunchCost:
    index: int  # 0-based, in the run's order
    kernel: str
    programs: int
    seconds: float  # the launch's own time (wall clock, its workers included)
    run_seconds: float  # the whole run's

    @property
    def share(self) -> float:
        return self.seconds / self.run_seconds if self.run_seconds > 0 else 0.0


def dominant_launch(result: RunResult) -> LaunchCost | None:
    """The launch that took most of a noticeably slow run, or None (a quick run, or time spread out)."""
    if result.seconds < NOTICEABLE_RUN_S or not result.launches:
        return None
    i, L = max(enumerate(result.launches), key=lambda p: p[1].seconds)
    cost = LaunchCost(i, L.kernel, L.n_programs, L.seconds, result.seconds)
    return cost if cost.share >= DOMINANT_SHARE else None
