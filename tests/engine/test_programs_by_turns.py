"""Programs of one launch that wait on each other run by turns (trace_engine/interpreter/cooperative.py), and the
races between them respect the flags they wait on (analysis/flags.py)."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from findings_script import Script

from triton_lens.analysis import analyze
from triton_lens.trace_engine.interpreter.cooperative import Turns, atomic_changes, later_programs
from triton_lens.trace_engine.interpreter.spin import ProgramsWaitOnEachOther
from triton_lens.trace_engine.process.runner import RunRequest, run

pytestmark = pytest.mark.engine

SEMANTICS = Path(__file__).parent / "scripts" / "semantics"


# -- the scheduler alone, on programs written in Python ---------------------------------------------


class _Launch:
    """A grid of Python 'programs' over a dict as memory, run as the interpreter's loop would: program 0
    on this thread, Turns from its first wait on, the loop's later visits empty."""

    def __init__(self, n: int, body):
        self.n, self.body, self.memory = n, body, {"flag": 0, "count": 0, "order": []}
        self.running = (0, 0, 0)
        self.turns: Turns | None = None

    def poll(self, name: str):
        value = self.memory[name]
        if self.turns is None:
            self.turns = Turns(
                self.running,
                later_programs(self.running, (self.n, 1, 1)),
                (self.n, 1, 1),
                run=lambda idx: self.body(self, idx[0]),
                save=lambda: self.running,
                load=self._load,
                fresh=lambda idx: idx,
            )
        self.turns.poll("poll", name.encode(), repr(value).encode())
        return self.memory[name]

    def _load(self, state):
        self.running = state

    def wrote(self):
        if self.turns is not None:
            self.turns.wrote()

    def go(self):
        for pid in range(self.n):
            if self.turns is not None:
                self.turns.main_returned()
                return
            self.running = (pid, 0, 0)
            try:
                self.body(self, pid)
            except BaseException:
                if self.turns is not None:
                    self.turns.unwind()
                raise


def _program_threads():
    return [t for t in threading.enumerate() if t.name.startswith("triton-lens program")]


def test_a_program_waits_while_later_ones_run_and_each_keeps_its_own_state():
    seen = []

    def body(launch, pid):
        if pid == 0:
            while True:  # its state after every turn is its own again
                flag = launch.poll("flag")
                seen.append(launch.running)
                if flag:
                    break
        else:
            launch.memory["order"].append((pid, launch.running))
            if pid == 3:
                launch.memory["flag"] = 1
                launch.wrote()

    launch = _Launch(4, body)
    launch.go()
    assert launch.memory["order"] == [(1, (1, 0, 0)), (2, (2, 0, 0)), (3, (3, 0, 0))]
    assert seen and all(state == (0, 0, 0) for state in seen)
    assert launch.turns is not None and launch.turns.started == 4
    assert not _program_threads()


def test_a_barrier_of_every_program_ends_for_all_of_them():
    def body(launch, pid):
        launch.memory["count"] += 1
        launch.wrote()
        while launch.poll("count") < launch.n:
            pass
        launch.memory["order"].append(pid)

    launch = _Launch(16, body)
    launch.go()
    assert sorted(launch.memory["order"]) == list(range(16))


def test_a_wait_nothing_can_end_raises_after_every_program_had_its_turns():
    def body(launch, pid):
        if pid == 0:
            while launch.poll("flag") == 0:
                pass

    launch = _Launch(3, body)
    with pytest.raises(ProgramsWaitOnEachOther, match=r"program \(0,\) waits on a flag or lock that no program"):
        launch.go()
    assert not _program_threads()


def test_an_error_in_a_later_program_is_the_launchs_and_waiting_programs_are_unwound():
    unwound = []

    def body(launch, pid):
        if pid == 2:
            raise ValueError("program 2 failed")
        try:
            while launch.poll("flag") == 0:
                pass
        except BaseException:
            unwound.append(pid)
            raise

    launch = _Launch(4, body)
    with pytest.raises(ValueError, match="program 2 failed"):
        launch.go()
    # program 0 (the loop's) got the error; program 1, waiting in its thread, was unwound; 3 never started
    assert unwound == [1, 0] or sorted(unwound) == [0, 1]
    assert not _program_threads()


def test_later_programs_follow_the_interpreters_loop_order():
    assert list(later_programs((0, 1, 1), (2, 2, 2))) == [(1, 0, 0), (1, 0, 1), (1, 1, 0), (1, 1, 1)]
    assert list(later_programs((1, 1, 1), (2, 2, 2))) == []


@pytest.mark.parametrize(
    "op, old, val, changes",
    [
        ("tl.atomic_add", [3], [0], False),
        ("tl.atomic_add", [3], [1], True),
        ("tl.atomic_xchg", [1], [1], False),
        ("tl.atomic_xchg", [0], [1], True),
        ("tl.atomic_max", [5], [4], False),
        ("tl.atomic_min", [5], [4], True),
        ("tl.atomic_and", [6], [7], False),
        ("tl.atomic_or", [6], [0], False),
    ],
)
def test_an_atomic_changes_memory_only_where_its_operation_does(op, old, val, changes):
    assert atomic_changes(op, np.array(old), np.array(val), None) is changes


def test_a_failed_cas_and_a_masked_lane_change_nothing():
    assert not atomic_changes("tl.atomic_cas", np.array([1]), np.array([1]), None, np.array([0]))
    assert atomic_changes("tl.atomic_cas", np.array([0]), np.array([1]), None, np.array([0]))
    assert not atomic_changes("tl.atomic_add", np.array([0, 0]), np.array([1, 1]), np.array([False, False]))


# -- whole runs -----------------------------------------------------------------------------------


def test_kernels_whose_programs_wait_on_each_other_give_a_gpus_results_and_no_finding():
    # the script asserts each result as a GPU gives it (a barrier, a reduction by program 0, an order)
    a = analyze(run(RunRequest(path=str(SEMANTICS / "programs_by_turns.py"), timeout_s=120)))
    assert a.result.status == "ok", a.result.error
    assert [L.kernel for L in a.result.launches] == ["grid_barrier", "first_program_reduces", "in_reverse_order"]
    assert all(L.complete for L in a.result.launches)
    assert not [f for f in a.findings if f.severity in ("error", "warning")], [f.message for f in a.findings]


@pytest.fixture(scope="module")
def turns_cases() -> Script:
    return Script("turns_cases.py")


def _races(s: Script, name: str):
    return [f for f in s.at(name, "race") if f.severity == "warning"]


@pytest.mark.parametrize("name", ["flag_ordered_load", "released_store", "locked_load", "locked_store"])
def test_data_handed_over_through_a_flag_or_a_lock_after_a_barrier_does_not_race(turns_cases, name):
    assert not _races(turns_cases, name), [f.message for f in turns_cases.at(name)]


def test_data_from_a_program_that_releases_no_flag_races(turns_cases):
    (load,) = _races(turns_cases, "unordered_load")
    assert f"the store at line {turns_cases.lines['unreleased_store']} in program (2,)" in load.message
    (store,) = _races(turns_cases, "unreleased_store")
    assert "program (0,)" in store.message


def test_a_relaxed_flag_orders_nothing(turns_cases):
    assert _races(turns_cases, "relaxed_load")
