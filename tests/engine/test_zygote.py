"""Workers forked from a zygote (trace_engine/process/zygote.py): a run's worker is a fork of a process that has
imported torch and triton, with the same containment and the same results as a cold worker, nothing of
one run left for the next, and nothing left behind when the runner goes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from markers import CORPUS

from triton_lens.analysis import analyze
from triton_lens.trace_engine.process import runner, zygote_client
from triton_lens.trace_engine.process.runner import RunRequest, run
from triton_lens.trace_engine.process.supervisor import descendants

pytestmark = pytest.mark.skipif(not zygote_client.supported(), reason="the zygote needs Linux")


def _parent(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        return int(f.read().rsplit(")", 1)[1].split()[1])


def _ready_zygote(req: RunRequest) -> zygote_client.Zygote:
    """Run once with keep_warm (which starts the zygote), then wait until it has imported."""
    run(req)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        zs = [z for z in zygote_client._zygotes.values() if z.is_ready()]
        if zs:
            return zs[0]
        time.sleep(0.1)
    raise AssertionError("no zygote became ready")


@pytest.fixture(autouse=True)
def _fresh_zygotes():
    runner.discard_spares()
    yield
    runner.discard_spares()


def _facts(r):
    a = analyze(r)
    return (
        r.status,
        [(s.line, s.arg, s.programs, s.lanes, s.active, s.unique, s.oob, s.bytes, s.extent) for s in a.accesses],
        sorted((f.kind, f.line, f.arg, f.lanes) for f in a.findings),
    )


def test_a_forked_run_is_the_cold_run_and_nothing_of_one_run_reaches_the_next(tmp_path):
    path = str(CORPUS / "vector_add_tail.py")
    cold = run(RunRequest(path=path))
    z = _ready_zygote(RunRequest(path=path, keep_warm=True))
    forked = run(RunRequest(path=path, keep_warm=True))
    # The worker is below a supervisor the zygote forked: zygote -> supervisor -> worker.
    assert forked.worker_pid != cold.worker_pid
    assert _facts(forked) == _facts(cold)
    # A script that changes the process (a module attribute, the environment, sys.path) leaves the zygote
    # as it was: each run forks from the state before any script ran.
    leak = tmp_path / "leak.py"
    leak.write_text(
        "import os, sys, json\n"
        "print('BEFORE', getattr(json, 'leaked', None), os.environ.get('LEAKED'), 'leaked-dir' in sys.path)\n"
        "json.leaked = 1; os.environ['LEAKED'] = '1'; sys.path.append('leaked-dir')\n"
    )
    for _ in range(2):
        r = run(RunRequest(path=str(leak), keep_warm=True))
        assert r.status == "no-launch", (r.status, r.error)
        assert "BEFORE None None False" in r.stdout
    assert z.is_ready() and z.proc.poll() is None


def test_the_worker_is_forked_below_its_own_supervisor(tmp_path):
    script = tmp_path / "tree.py"
    script.write_text("import os\nprint('TREE', os.getpid(), os.getppid(), os.getpgid(0), os.getsid(0))\n")
    z = _ready_zygote(RunRequest(path=str(script), keep_warm=True))
    r = run(RunRequest(path=str(script), keep_warm=True))
    pid, sup, pgid, sid = (int(x) for x in next(l for l in r.stdout.splitlines() if l.startswith("TREE")).split()[1:])
    assert pid == r.worker_pid
    # The supervisor leads the run's own session and group; the zygote is in neither.
    assert sid == pgid == sup and sup != z.proc.pid
    # The zygote started in a private directory of its own (nothing there is importable by others' doing).
    assert os.stat(z.home).st_mode & 0o777 == 0o700


def test_a_script_that_kills_its_run_kills_only_its_run(tmp_path):
    script = tmp_path / "killer.py"
    script.write_text("import os, signal\nos.killpg(0, signal.SIGKILL)\n")
    ok = tmp_path / "ok.py"
    ok.write_text("print('still here')\n")
    z = _ready_zygote(RunRequest(path=str(ok), keep_warm=True))
    r = run(RunRequest(path=str(script), keep_warm=True))
    assert r.status == "crashed" and "process group" in r.error.message, (r.status, r.error)
    assert z.is_ready() and z.proc.poll() is None  # the zygote is outside the run's group
    again = run(RunRequest(path=str(ok), keep_warm=True))
    assert again.status == "no-launch" and "still here" in again.stdout


def test_a_time_limit_ends_the_forked_run_and_everything_below_it(tmp_path):
    script = tmp_path / "spin.py"
    script.write_text(
        "import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\ntime.sleep(600)\n"
    )
    ok = tmp_path / "ok.py"
    ok.write_text("pass\n")
    z = _ready_zygote(RunRequest(path=str(ok), keep_warm=True))
    r = run(RunRequest(path=str(script), keep_warm=True, timeout_s=2.0))
    assert r.status == "timeout", (r.status, r.error)
    deadline = time.monotonic() + 10
    while _below_but_spares(z) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _below_but_spares(z)  # the run's supervisor, worker and the script's child are gone


def _below_but_spares(z) -> set[int]:
    """The processes below the zygote but the next run's supervisor and worker, forked ahead (spares.py)."""
    spare = {p for w in runner._spares.waiting() for p in [w.proc.pid, *descendants(w.proc.pid)]}
    return set(descendants(z.proc.pid)) - spare


def test_a_zygote_that_died_gives_way_to_a_cold_worker(tmp_path):
    path = str(CORPUS / "vector_add.py")
    z = _ready_zygote(RunRequest(path=path, keep_warm=True))
    os.kill(z.proc.pid, signal.SIGKILL)
    z.proc.wait()
    r = run(RunRequest(path=path, keep_warm=True))
    assert r.status == "ok", (r.status, r.error)
    assert _parent(os.getpid()) != 0 and r.worker_pid not in (0, z.proc.pid)


def test_a_runner_killed_outright_leaves_no_zygote_behind(tmp_path):
    pid_file = tmp_path / "pid"
    code = (
        "import os, sys, time\nfrom triton_lens.trace_engine.process import zygote_client\n"
        "z = zygote_client.Zygote(sys.executable, dict(os.environ, TRITON_INTERPRET='1'))\n"
        "deadline = time.monotonic() + 120\n"
        "while not z.is_ready() and time.monotonic() < deadline: time.sleep(0.1)\n"
        f"open({str(pid_file)!r}, 'w').write(str(z.proc.pid) if z.is_ready() else '')\nos._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=150)
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        raise AssertionError("the zygote outlived its runner")


def test_the_count_of_runs_by_key_stays_bounded_and_keeps_the_recent_keys():
    keys = [("test-key", i) for i in range(zygote_client.RUNS_SEEN_KEYS + 10)]
    try:
        for k in keys:
            assert zygote_client.note_run(k) == 1
        assert zygote_client.note_run(keys[-1]) == 2  # a recent key keeps its count
        assert zygote_client.note_run(keys[0]) == 1  # the oldest were forgotten
        assert len(zygote_client._runs_seen) <= zygote_client.RUNS_SEEN_KEYS
    finally:
        for k in keys:
            zygote_client._runs_seen.pop(k, None)


GRANDPARENT = (
    "import os\n"
    "with open(f'/proc/{os.getppid()}/stat') as f:\n"
    "    print('GRANDPARENT', int(f.read().rsplit(')', 1)[1].split()[1]))\n"
)


def _grandparent(r) -> int:
    return int(next(ln for ln in r.stdout.splitlines() if ln.startswith("GRANDPARENT")).split()[1])


def test_the_first_warm_run_waits_for_the_zygote_and_forks_from_it(tmp_path):
    # The language server's first run: the zygote it starts imports torch and triton; a cold worker
    # started beside it would import them again at the same time (bench/first_run.py).
    script = tmp_path / "first.py"
    script.write_text(GRANDPARENT)
    r = run(RunRequest(path=str(script), keep_warm=True))
    (z,) = zygote_client._zygotes.values()
    assert _grandparent(r) == z.proc.pid, (r.status, r.error)  # worker <- supervisor <- zygote


def test_without_the_wait_the_first_warm_run_is_cold(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "ZYGOTE_WAIT_S", 0.0)
    script = tmp_path / "first.py"
    script.write_text(GRANDPARENT)
    r = run(RunRequest(path=str(script), keep_warm=True))
    assert _grandparent(r) == os.getpid(), (r.status, r.error)  # worker <- supervisor <- this runner


def test_a_cancelled_wait_for_the_zygote_returns_at_once():
    import threading

    cancel = threading.Event()
    cancel.set()
    key = ("bench", (("K", "cancelled"),))
    env = dict(os.environ, TRITON_LENS_TEST_KEY="cancelled")
    t0 = time.monotonic()
    z = zygote_client.ready_zygote(key, sys.executable, env, start=True, wait_s=60.0, cancel=cancel)
    assert z is None and time.monotonic() - t0 < 5  # not the 60 s: the run goes on cold and sees its cancel


def test_the_zygote_grows_its_descriptor_table_before_forking(tmp_path):
    # Each run moves its stream to a high descriptor (stream.move_high). A worker has a second thread (its
    # parent watch), and growing a threaded process's table waits out an RCU grace period (8-22 ms a run).
    # The zygote grows it once, single-threaded, and keeps one close-on-exec descriptor up there so that a
    # fork copies the grown table.
    ok = tmp_path / "ok.py"
    ok.write_text("print('ok')\n")
    z = _ready_zygote(RunRequest(path=str(ok), keep_warm=True))
    with open(f"/proc/{z.proc.pid}/status") as f:
        status = dict(line.split(":", 1) for line in f if ":" in line)
    size = int(status["FDSize"])
    assert size >= 4064 or size >= _soft_nofile() - 32, size
    # ... and it is still one thread after its warm-up launch (a fork copies only the calling thread)
    assert int(status["Threads"]) == 1
    # What a script's own child process gets: none of the tool's descriptors (each is close-on-exec).
    child = tmp_path / "child.py"
    child.write_text(
        "import os, subprocess, sys\n"
        "out = subprocess.run([sys.executable, '-c', 'import os; print(sorted(int(x) for x in os.listdir(\"/proc/self/fd\")))'],"
        " capture_output=True, text=True).stdout\n"
        "print('FDS', out.strip())\n"
    )
    r = run(RunRequest(path=str(child), keep_warm=True))
    fds = eval(next(line for line in r.stdout.splitlines() if line.startswith("FDS")).split(" ", 1)[1])
    assert max(fds) < 64, fds  # stdin, stdout, stderr and the listing's own


def _soft_nofile() -> int:
    import resource

    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]
