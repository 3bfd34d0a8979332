"""Programs of one launch that wait on each other, run by turns, as a GPU's resident programs run.

The interpreter runs a launch's programs one after another. A program that spins on a flag or lock that
only a later program sets would wait forever; on a GPU both are resident and it ends. spin.py sees such
a wait (the same poll reading the same value over and over). After `START` such polls in a row the rest
of the launch runs cooperatively (`Turns`):
- every program the grid loop has not reached yet gets a thread of its own, started in the loop's
  order; one thread runs at a time (a baton), each until its next poll (an atomic or a volatile load),
  where it hands the baton on. A program not started yet goes before a waiting one, as if every program
  of the launch were resident at once; waiting programs resume in the order they began to wait.
- the program that began to wait stays on the grid loop's thread; once it returns, the loop's
  remaining visits run nothing (their programs ran by turns) and the launch ends when every thread has.
- a program's own state (its ids in the builder, the recorder's access context) goes with its turn.
- when every program still running has polled twice in a row, seeing no new value, and nothing was
  written in between, no turn can change anything: ProgramsWaitOnEachOther, at the waiting line of
  the program whose turn it is, as before.
- an exception in any program ends the launch with that exception (the others are unwound).

Pure Python and threads, no triton import: compat.py gives the builder, the grid loop's arguments and
the kernel function, and says when memory changed. Turns only start from a plain one-process grid loop
(not in a parallel split's child, a progressive sample or a size-check re-launch), so a run that never
spins is exactly what it was.
"""

from __future__ import annotations

import itertools
import threading
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from .spin import ProgramsWaitOnEachOther, SpinWatch, pid_text

START = 200  # identical polls in a row before the launch goes on by turns (a bounded retry stays below)
ROUNDS = 2  # polls by every running program that saw nothing new: a deadlock


class _Unwind(BaseException):
    """Raised in a waiting program's thread to end it when the launch ends without it."""


class _Program:
    __slots__ = ("idx", "last", "epoch", "thread")

    def __init__(self, idx: tuple[int, int, int]) -> None:
        self.idx = idx
        self.last: tuple[str, bytes, bytes] | None = None  # its previous poll (op, addresses, value)
        self.epoch = -1  # the writes counted at its previous poll
        self.thread: threading.Thread | None = None


class Turns:
    """The launch's programs from the first wait on, one turn at a time.

    run(idx): run program idx to its end (the kernel function with the grid loop's arguments);
    save(): the running program's own state; load(state): install one; fresh(idx): a new program's."""

    def __init__(
        self,
        first: tuple[int, int, int],
        rest: Iterator[tuple[int, int, int]],
        grid: tuple[int, int, int],
        run: Callable[[tuple[int, int, int]], None],
        save: Callable[[], Any],
        load: Callable[[Any], None],
        fresh: Callable[[tuple[int, int, int]], Any],
    ) -> None:
        self._cv = threading.Condition()
        self._run, self._save, self._load, self._fresh = run, save, load, fresh
        self._grid = grid
        self._unstarted = rest
        self._peeked: tuple[int, int, int] | None = next(rest, None)
        self._waiting: deque[_Program] = deque()
        self.main = _Program(first)  # the program on the grid loop's own thread
        self._turn: _Program = self.main
        self._live = 1  # programs started and not ended, the loop's own included
        self._error: BaseException | None = None
        self._unwinding = False
        self._fruitless = 0  # polls in a row that saw no new value, with nothing written since
        self._epoch = 0  # writes so far (plain stores, atomics that changed memory)
        self._main_done = False
        self.started = 1
        self.executor: Any = None  # compat's: the launch's executor and its kernel function
        self.kernel_fn: Any = None

    def done_before_start(self) -> bool:
        """No program comes after the waiting one: turns cannot help."""
        return self._peeked is None

    # -- called by the program whose turn it is -----------------------------------------------
    def wrote(self) -> None:
        self._epoch += 1

    def poll(self, op: str, addresses: bytes, value: bytes) -> None:
        """The running program polled: it hands the baton on, or raises when no turn can change anything."""
        me = self._turn
        key = (op, addresses, value)
        if me.last == key and me.epoch == self._epoch:
            self._fruitless += 1
        else:
            self._fruitless = 0
        me.last, me.epoch = key, self._epoch
        if self._peeked is None and self._fruitless >= ROUNDS * self._live:
            raise ProgramsWaitOnEachOther(
                f"program {pid_text(me.idx, self._grid)} waits on a flag or lock that no program of this launch "
                f"sets: {op} reads the same value while every other program of the launch has ended or waits "
                f"too (the tool ran them by turns, as a GPU runs resident programs). On a GPU this launch hangs."
            )
        with self._cv:
            state = self._save()
            self._waiting.append(me)
            self._pass_baton()
            while self._turn is not me:
                self._cv.wait()
            self._load(state)
        if self._unwinding and me is not self.main:
            raise _Unwind
        self._raise_error()

    def main_returned(self) -> None:
        """The loop's own program ended: every other program runs to its end, then the loop goes on
        (its remaining visits run nothing). Raises the error of a program that raised."""
        if self._main_done:
            return
        self._main_done = True
        with self._cv:
            state = self._save()
            self._live -= 1
            self._pass_baton()
            while self._turn is not self.main or (self._live > 0 and self._error is None):
                self._cv.wait()
            self._load(state)
        self._raise_error()

    def unwind(self) -> None:
        """The launch ends early (an exception): every waiting program's thread is ended, one at a time."""
        with self._cv:
            self._unwinding = True
            self._peeked = None
            state = self._save()
            while self._waiting:
                p = self._waiting.popleft()
                if p is self.main:
                    continue
                self._turn = p
                self._cv.notify_all()
                while self._turn is not self.main:
                    self._cv.wait()
            self._turn = self.main
            self._load(state)

    # -- the baton ------------------------------------------------------------------------------
    def _pass_baton(self) -> None:
        """Give the turn to the next program: one not started yet, else the one that waited longest,
        else the loop's own. Holds the lock."""
        nxt: _Program | None = None
        if self._error is None and not self._unwinding:
            if self._peeked is not None:
                nxt = _Program(self._peeked)
                self._peeked = next(self._unstarted, None)
                self._live += 1
                self.started += 1
                self._fruitless = 0
                nxt.thread = threading.Thread(
                    target=self._body, args=(nxt,), name=f"triton-lens program {nxt.idx}", daemon=True
                )
                nxt.thread.start()
            elif self._waiting:
                nxt = self._waiting.popleft()
        self._turn = nxt if nxt is not None else self.main
        self._cv.notify_all()

    def _raise_error(self) -> None:
        if self._error is not None and self._turn is self.main:
            error, self._error = self._error, None
            raise error

    def _body(self, p: _Program) -> None:
        with self._cv:
            while self._turn is not p:
                self._cv.wait()
            self._load(self._fresh(p.idx))
        try:
            self._run(p.idx)
        except _Unwind:
            pass
        except BaseException as e:  # the launch's error: the loop's thread raises it
            if self._error is None:
                self._error = e
        with self._cv:
            self._live -= 1
            self._fruitless = 0
            if self._unwinding or self._error is not None:
                self._turn = self.main
                self._cv.notify_all()
            else:
                self._pass_baton()


def atomic_changes(
    op: str, old: np.ndarray, val: np.ndarray, mask: np.ndarray | None, cmp: np.ndarray | None = None
) -> bool:
    """Whether an atomic that returned `old` changed memory in an active lane (a poll that only reads,
    atomic_add(flag, 0) or a failed CAS, changes nothing). Unknown operations count as a change."""
    old = np.asarray(old)
    val = np.broadcast_to(np.asarray(val), old.shape)
    active = (
        np.ones(old.shape, dtype=bool) if mask is None else np.broadcast_to(np.asarray(mask, dtype=bool), old.shape)
    )
    if op == "tl.atomic_cas":
        assert cmp is not None
        changed = (old == np.broadcast_to(np.asarray(cmp), old.shape)) & (val != old)
    elif op == "tl.atomic_xchg":
        changed = val != old
    elif op in ("tl.atomic_add", "tl.atomic_sub", "tl.atomic_or", "tl.atomic_xor"):
        changed = val != 0
    elif op == "tl.atomic_and":
        changed = (old & val) != old
    elif op == "tl.atomic_max":
        changed = val > old
    elif op == "tl.atomic_min":
        changed = val < old
    else:
        return True
    return bool(np.any(changed & active))


def later_programs(idx: tuple[int, int, int], grid: tuple[int, int, int]) -> Iterator[tuple[int, int, int]]:
    """The programs the interpreter's grid loop visits after idx (x outermost, z innermost)."""
    nx, ny, nz = grid
    start = (idx[0] * ny + idx[1]) * nz + idx[2] + 1
    for linear in itertools.count(start):
        if linear >= nx * ny * nz:
            return
        yield (linear // (ny * nz), (linear // nz) % ny, linear % nz)


class Waits:
    """The run's polls: counted by SpinWatch while programs run one at a time, by `Turns` once a launch
    goes on by turns. `begin_turns()` (compat) answers whether turns may start here and starts them."""

    def __init__(self, limit: int | None = None) -> None:
        self.spin = SpinWatch() if limit is None else SpinWatch(limit)
        self.turns: Turns | None = None

    def reset(self) -> None:
        self.spin.reset()

    def observe(
        self, op: str, builder: Any, addresses: bytes, value: bytes, begin_turns: Callable[[Any], Turns | None]
    ) -> None:
        """One poll of the running program (`builder`: the interpreter's, with grid_idx and grid_dim)."""
        turns = self.turns
        if turns is not None:
            turns.poll(op, addresses, value)
            return
        self.spin.observe(op, builder.grid_idx, builder.grid_dim, addresses, value)
        if self.spin.count == START:
            self.turns = begin_turns(builder)
            if self.turns is not None:
                self.spin.reset()
                self.turns.poll(op, addresses, value)
