"""The next run's worker, forked ahead (trace_engine/process/spares.py): its invariants on stand-ins, then a
real zygote's runs taking their spare."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from markers import CORPUS
from test_stream_frames import _capacity, _system_most
from test_zygote import _facts, _ready_zygote

from triton_lens.trace_engine.process import runner, spares, zygote_client
from triton_lens.trace_engine.process.runner import RunRequest, run


class _Zygote:
    def __init__(self) -> None:
        self.dead = False


class _Worker:
    def __init__(self) -> None:
        self.up = True
        self.discarded = 0

    def alive(self) -> bool:
        return self.up

    def discard(self) -> None:
        self.discarded += 1
        self.up = False


def _settle(s: spares.Spares, z: _Zygote) -> None:
    """Wait for the background fork's thread to file its spare (or drop it)."""
    deadline = time.monotonic() + 10
    while z in s._forking and time.monotonic() < deadline:
        time.sleep(0.005)


def test_a_spare_is_forked_once_and_taken_once():
    s: spares.Spares[_Worker] = spares.Spares()
    z = _Zygote()
    assert s.take(z) is None  # nothing forked yet: the run forks its own
    forks: list[_Worker] = []

    def fork() -> _Worker:
        forks.append(_Worker())
        return forks[-1]

    s.refill(z, fork)
    _settle(s, z)
    s.refill(z, fork)  # one is waiting: no second
    _settle(s, z)
    assert len(forks) == 1 and s.waiting() == forks
    assert s.take(z) is forks[0] and s.take(z) is None
    assert forks[0].discarded == 0


def test_a_dead_spare_or_a_dead_zygotes_spare_is_discarded_not_taken():
    s: spares.Spares[_Worker] = spares.Spares()
    z, other = _Zygote(), _Zygote()
    s.refill(z, _Worker)
    _settle(s, z)
    (w,) = s.waiting()
    w.up = False  # it died while it waited (killed, out of memory)
    assert s.take(z) is None and w.discarded == 1
    s.refill(z, _Worker)
    s.refill(other, _Worker)
    _settle(s, z)
    _settle(s, other)
    z.dead = True
    assert s.take(other) is not None  # (a take also drops what dead zygotes left)
    assert s.waiting() == [] and s.take(z) is None
    s.refill(z, _Worker)  # a dead zygote forks nothing
    assert s.waiting() == [] and z not in s._forking


def test_discard_all_ends_the_spares_and_a_fork_in_flight_ends_its_own():
    s: spares.Spares[_Worker] = spares.Spares()
    z, slow = _Zygote(), _Zygote()
    s.refill(z, _Worker)
    _settle(s, z)
    (w,) = s.waiting()
    go = threading.Event()
    late = _Worker()

    def slow_fork() -> _Worker:
        go.wait(10)
        return late

    s.refill(slow, slow_fork)
    s.discard_all()
    assert w.discarded == 1 and s.waiting() == []
    go.set()
    _settle(s, slow)
    assert late.discarded == 1 and s.waiting() == []  # forked before the discard: not kept


def test_a_fork_that_fails_leaves_no_spare_and_the_next_refill_tries_again():
    s: spares.Spares[_Worker] = spares.Spares()
    z = _Zygote()

    def gone() -> _Worker:
        raise zygote_client.ZygoteGone("the zygote did not fork")

    s.refill(z, gone)
    _settle(s, z)
    assert s.waiting() == []
    s.refill(z, _Worker)
    _settle(s, z)
    assert len(s.waiting()) == 1


# ---- a real zygote ------------------------------------------------------------------------------------
# (the zygote, and so a spare, exists on Linux only: elsewhere every run starts a cold worker)
on_linux = pytest.mark.skipif(not zygote_client.supported(), reason="the zygote needs Linux")
# One environment for every run here: a zygote serves runs of one interpreter and environment, and pytest's
# PYTEST_CURRENT_TEST differs between the fixture's setup and the test (each would get a zygote of its own).
ENV = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}


@pytest.fixture
def ready(tmp_path):
    """A ready zygote, a script that prints 'ran', and the spare the zygote's first run left waiting."""
    runner.discard_spares()
    script = tmp_path / "ok.py"
    script.write_text("print('ran')\n")
    z = _ready_zygote(RunRequest(path=str(script), keep_warm=True, env=ENV))
    yield z, script, _spare_after_run()
    runner.discard_spares()


def _spare_after_run() -> runner._Worker:
    deadline = time.monotonic() + 30
    while not runner._spares.waiting() and time.monotonic() < deadline:
        time.sleep(0.01)
    (w,) = runner._spares.waiting()
    return w


@on_linux
@pytest.mark.engine
def test_each_run_takes_the_worker_forked_ahead_and_leaves_the_next(ready, tmp_path):
    z, _, spare = ready
    script = tmp_path / "parent.py"
    script.write_text("import os\nprint('SUPERVISOR', os.getppid())\n")
    for _ in range(2):
        r = run(RunRequest(path=str(script), keep_warm=True, env=ENV))
        assert r.status == "no-launch", r.error
        # The run's worker is the spare's: below the supervisor the zygote forked before the run began.
        assert f"SUPERVISOR {spare.proc.pid}" in r.stdout
        assert spare not in runner._spares.waiting()
        spare = _spare_after_run()
    assert spare.alive() and spare.zygote is z
    # The spare made the warm-up launch while it waited, and a run from it is the run a cold worker gives.
    path = str(CORPUS / "vector_add_tail.py")
    warm = run(RunRequest(path=path, keep_warm=True, env=ENV))
    cold = run(RunRequest(path=path, env=dict(ENV, TRITON_LENS_TEST_KEY=str(time.time()))))  # (a new key)
    assert warm.late_imports == [] and warm.worker_pid != cold.worker_pid
    assert _facts(warm) == _facts(cold) and warm.stdout == cold.stdout


@on_linux
@pytest.mark.engine
def test_a_spare_that_died_while_it_waited_gives_way_to_a_fork(ready):
    _, script, spare = ready
    os.kill(spare.proc.pid, signal.SIGKILL)  # its supervisor; its worker follows (PR_SET_PDEATHSIG)
    deadline = time.monotonic() + 10
    while spare.alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    r = run(RunRequest(path=str(script), keep_warm=True, env=ENV))
    assert r.status == "no-launch" and "ran" in r.stdout, (r.status, r.error)


@on_linux
@pytest.mark.engine
def test_discard_spares_ends_the_waiting_worker(ready):
    _, _, spare = ready
    runner.discard_spares()
    assert not spare.alive() and runner._spares.waiting() == []
    with pytest.raises(ProcessLookupError):
        os.kill(spare.proc.pid, 0)


@on_linux
@pytest.mark.engine
def test_a_workers_frames_come_through_a_pipe_of_a_mib_cold_or_forked(ready):
    # A launch's frame is tens of MB at real sizes, written before the script goes on (stream.frame_pipe).
    _, _, spare = ready
    assert spare.zygote is not None and _capacity(spare.read_fd) == _system_most()
    cold = runner._Worker(sys.executable, ENV)
    try:
        assert cold.zygote is None and _capacity(cold.read_fd) == _system_most()
    finally:
        cold.discard()


def _huge_kb(pid: int) -> int:
    with open(f"/proc/{pid}/smaps_rollup") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("AnonHugePages:"))


def _worker_below(supervisor: int) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # (the supervisor forks it after the runner counts the spare in)
        with open(f"/proc/{supervisor}/task/{supervisor}/children") as f:
            pids = f.read().split()
        if pids:
            (pid,) = pids
            return int(pid)
        time.sleep(0.01)
    raise AssertionError("the spare's supervisor forked no worker")


@on_linux
@pytest.mark.engine
@pytest.mark.parametrize("huge", ["1", "0"])
def test_a_waiting_spare_puts_its_heap_on_huge_pages_until_its_job_comes(tmp_path, huge):
    # TRITON_LENS_HUGE_HEAP=1: as on 4 cores or more (process_tree.collapse_heap); 0: never, the baseline.
    env = dict(ENV, TRITON_LENS_HUGE_HEAP=huge)
    runner.discard_spares()
    try:
        script = tmp_path / "parent.py"
        script.write_text("import os\nprint('SUPERVISOR', os.getppid())\n")
        _ready_zygote(RunRequest(path=str(script), keep_warm=True, env=env))
        spare = _spare_after_run()
        pid = _worker_below(spare.proc.pid)
        deadline = time.monotonic() + 30
        while huge == "1" and _huge_kb(pid) < 64 * 1024 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        # torch's and triton's heap and the warm-up's: 64 MB and more of it on huge pages, where without
        # it only what torch put there itself (tensors of 2 MB and more: none in the warm-up)
        assert (_huge_kb(pid) >= 64 * 1024) == (huge == "1"), _huge_kb(pid)
        r = run(RunRequest(path=str(script), keep_warm=True, env=env))
        assert r.status == "no-launch", r.error
        assert f"SUPERVISOR {spare.proc.pid}" in r.stdout  # the run was the spare's
    finally:
        runner.discard_spares()


@pytest.mark.parametrize(
    "sent, first, rest",
    [
        (spares.REHEARSE + '{"path": "a.py"}\n', spares.REHEARSE, '{"path": "a.py"}\n'),  # a spare's job after
        ('{"path": "a-longer-name.py"}\n', '{"path": "a-longer-name.py"}\n', ""),  # a job alone, longer
        ('{"p": 1}\n', '{"p": 1}\n', ""),  # shorter than the rehearsal's line
        ("", "", ""),  # the runner closed it: a discarded spare
    ],
)
def test_the_first_line_reads_no_byte_of_what_follows(sent, first, rest):
    code = (
        "import sys, json; from triton_lens.trace_engine.process import worker, spares\n"
        "line = worker._first_line(spares.REHEARSE)\n"
        "print(json.dumps([line, sys.stdin.read()]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], input=sent.encode(), capture_output=True, check=True)
    assert json.loads(out.stdout) == [first, rest]
