"""Programs that wait for each other, under an interpreter that runs them one at a time.

On a GPU, program 3 can spin on a flag (or a lock) that program 5 sets, because both run at once. The
interpreter runs program 3 to its end before program 5 starts, so the spin never ends and the run would
only stop at the time limit. While one program runs nothing else writes memory, so a poll that keeps
reading the same value at the same addresses can only go on forever. After `LIMIT` such polls in a row we
stop the program with `ProgramsWaitOnEachOther`, raised inside the kernel at the waiting line.

A poll is an atomic (rmw, cas, poll) or a volatile load. Pure Python, no triton import: compat.py feeds it.
"""

from __future__ import annotations

from collections.abc import Sequence

LIMIT = 10_000  # identical polls in a row: a bounded retry loop stays far below, a deadlock reaches it in ~1 s


class ProgramsWaitOnEachOther(RuntimeError):
    pass


def pid_text(idx: Sequence[int], dim: Sequence[int]) -> str:
    used = [i for i, d in enumerate(dim) if d > 1] or [0]
    return "(" + ", ".join(str(idx[i]) for i in used) + ("," if len(used) == 1 else "") + ")"


def _later_text(idx: Sequence[int], dim: Sequence[int]) -> str:
    nx, ny, nz = dim
    x, y, z = idx
    linear = (z * ny + y) * nx + x
    total = nx * ny * nz
    later = total - 1 - linear
    if later <= 0:
        return "no program runs after it in this launch, and none before it set the value"
    last = (nx - 1, ny - 1, nz - 1)
    if later == 1:
        return f"1 program of this launch, {pid_text(last, dim)}, has not run yet"
    return f"{later} programs of this launch, up to {pid_text(last, dim)}, have not run yet"


class SpinWatch:
    def __init__(self, limit: int = LIMIT):
        self.limit = limit
        self._key: tuple[tuple[int, ...], str, bytes, bytes] | None = None
        self._count = 0

    @property
    def count(self) -> int:
        """Identical polls in a row so far."""
        return self._count

    def reset(self) -> None:
        self._key = None
        self._count = 0

    def observe(
        self, op: str, grid_idx: Sequence[int], grid_dim: Sequence[int], addresses: bytes, value: bytes
    ) -> None:
        """One poll by the running program; raises once it has read the same value `limit` times in a row."""
        key = (tuple(grid_idx), op, addresses, value)
        if key != self._key:
            self._key = key
            self._count = 1
            return
        self._count += 1
        if self._count >= self.limit:
            count = self._count
            self.reset()
            raise ProgramsWaitOnEachOther(
                f"program {pid_text(grid_idx, grid_dim)} waits on a flag or lock that only a program that has "
                f"not run yet sets: {op} read the same value {count} times in a row. The interpreter runs "
                f"programs one at a time, so it would wait forever; {_later_text(grid_idx, grid_dim)}. On a GPU "
                f"this works only if every program it waits for is resident at the same time."
            )
