"""The next run's worker, forked ahead: one spare per zygote, forked when a run ends, taken by the next run.

Why: a worker forked from the zygote when its run starts costs that run 15-20 ms on a 2-core machine (the
zygote forks the run's supervisor, which forks the worker, which then reads its job), on the way to every
edit's first hints. Nothing a run does reaches the zygote (zygote.py), so the pair for the next run can be
forked as soon as a run ends; its worker waits, blocked reading its job, until a run takes it.

Invariants (tests/engine/test_spares.py):
- at most one spare per zygote, forked by that zygote (its interpreter and environment), taken at most once;
- a spare that died while it waited, or whose zygote died, is discarded, and the run forks its own;
- `discard_all()` (shutdown, the tests) ends every spare, and a fork still in flight then ends its own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from .zygote_client import Zygote

# What a spare's worker reads before its job (worker.serve): it makes the zygote's warm-up launch again while
# it waits. The zygote's pages that a run writes (the hooks' patches, the interpreter's and numpy's objects
# whose reference counts a launch changes) stay shared with the zygote until written, and each first write
# copies one (a page fault): done here, not in the run, that is 10-25 ms less before a run's first hints.
REHEARSE = '{"rehearse": 1}\n'


class Spare(Protocol):
    def alive(self) -> bool: ...

    def discard(self) -> None: ...


W = TypeVar("W", bound=Spare)


class Spares(Generic[W]):
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ready: dict[Zygote, W] = {}
        self._forking: set[Zygote] = set()
        self._generation = 0  # discard_all's count: a fork begun before it is not kept

    def take(self, zygote: Zygote) -> W | None:
        """zygote's spare, alive, or None (the run forks its own)."""
        with self._lock:
            w = self._ready.pop(zygote, None)
            stale = self._drop_dead()
        for s in stale:
            s.discard()
        if w is not None and not zygote.dead and w.alive():
            return w
        if w is not None:
            w.discard()
        return None

    def refill(self, zygote: Zygote, fork: Callable[[], W]) -> None:
        """Forks zygote's next spare in the background (`fork()`), unless it has one or one is on its way."""
        with self._lock:
            if zygote.dead or zygote in self._ready or zygote in self._forking:
                return
            self._forking.add(zygote)
            generation = self._generation
        threading.Thread(
            target=self._fork, args=(zygote, fork, generation), name="triton-lens-spare-worker", daemon=True
        ).start()

    def _fork(self, zygote: Zygote, fork: Callable[[], W], generation: int) -> None:
        try:
            w: W | None = fork()
        except Exception:  # noqa: BLE001 - the zygote gone, out of descriptors: the next run finds out itself
            w = None
        with self._lock:
            self._forking.discard(zygote)
            keep = w is not None and generation == self._generation and not zygote.dead
            if keep and w is not None:
                self._ready[zygote] = w
        if w is not None and not keep:
            w.discard()

    def _drop_dead(self) -> list[W]:
        """(under the lock) The spares of zygotes that died, out of the table."""
        dead = [z for z in self._ready if z.dead]
        return [self._ready.pop(z) for z in dead]

    def discard_all(self) -> None:
        with self._lock:
            spares = list(self._ready.values())
            self._ready.clear()
            self._generation += 1
        for w in spares:
            w.discard()

    def waiting(self) -> list[W]:
        """The spares ready now (the tests: what is below a zygote besides a run's own processes)."""
        with self._lock:
            return list(self._ready.values())
