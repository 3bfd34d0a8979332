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


def test_stores_that_leave_the_same_final_values_are_no_race(s):
    # Every program stores 0, then 1, to out[0:16]: the element ends with some program's last store,
    # and every program's last store is 1.
    assert not _race(s, "temporary_store") and not _race(s, "same_final_store")
    assert not s.at("temporary_store")  # overwritten by its own program: nothing to say
    (info,) = s.at("same_final_store", "race")
    assert info.severity == "information" and "not a race" in info.message
    assert info.programs == 4 and info.elements == 16


def test_different_final_values_are_a_race_at_the_last_stores(s):
    (f,) = _race(s, "different_final_store")
    assert f.programs == 4 and f.elements == 16
    assert f"the store at line {s.lines['different_final_store']} in program" in f.message
    assert {r.line for r in f.related} == set()  # the other side is the same line in another program
    assert not s.at("temporary_store_2")  # always overwritten by its own program's last store


def test_a_read_of_an_element_other_programs_write_races_even_with_the_same_final_values(s):
    (load,) = _race(s, "read_between")
    assert load.programs == 4 and load.elements == 16
    for name in ("temporary_store_3", "same_final_store_3"):
        (f,) = _race(s, name)
        assert f.programs == 4 and f.elements == 16
        assert s.lines["read_between"] in {r.line for r in f.related}
