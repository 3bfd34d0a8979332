"""Races that respect synchronisation: locks (with their sem/scope), atomics, identical stores."""

from __future__ import annotations

import re

import pytest
from findings_script import Script

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module")
def s() -> Script:
    return Script("sync_cases.py")


def _race(s: Script, name: str):
    return [f for f in s.at(name, "race") if f.severity == "warning"]


def test_plain_load_against_another_programs_atomic_is_a_race_on_both_sides(s):
    (load,) = _race(s, "plain_load")
    (atomic,) = _race(s, "atomic_add")
    assert load.programs == 1 and atomic.programs == 3
    # Both sides named, with line and program.
    assert f"the load at line {s.lines['plain_load']} in program (0,)" in load.message
    assert re.search(rf"the atomic at line {s.lines['atomic_add']} in program \([123],\)", load.message)
    assert s.lines["atomic_add"] in {r.line for r in load.related}


def test_atomics_against_atomics_are_no_race(s):
    assert not s.at("atomic_only_a", "race") and not s.at("atomic_only_b", "race")


@pytest.mark.parametrize("name", ["store_released_load", "store_released_store", "xchg_lock_load", "inside_store"])
def test_accesses_under_the_same_lock_do_not_race_with_each_other(s, name):
    if name == "inside_store":  # ordered against the other programs' locked loads and stores...
        (f,) = _race(s, name)
        # ...but not against the store after the release, which is the only other side named.
        assert f"line {s.lines['outside_store']}" in f.message
        assert {r.line for r in f.related} == {s.lines["outside_store"]}
    else:
        assert not _race(s, name), [f.message for f in s.at(name)]


@pytest.mark.parametrize("name", ["relaxed_load", "cta_load", "two_locks_load", "outside_store"])
def test_locks_that_order_nothing_leave_the_race(s, name):
    # relaxed: no acquire/release; scope="cta": orders one block's threads only; different
    # lock elements; an access after the release.
    (f,) = _race(s, name)
    assert f.programs == 4


def test_identical_values_are_information_different_values_a_race(s):
    (same,) = s.at("same_values", "race")
    assert same.severity == "information" and "same values" in same.message and "not a race" in same.message
    assert same.programs == 3 and same.elements == 16
    (diff,) = _race(s, "different_values")
    assert diff.programs == 3 and diff.elements == 16
