"""What a careless script does stays inside its run: nothing planted next to the worker is imported,
the script cannot signal the process that runs it, the processes it starts end with the run (even
those in their own session) and count toward the memory limit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time

import pytest

from triton_lens.trace_engine.process.runner import RunRequest, run

KERNEL = """import os, subprocess, sys, time
import torch
import triton
import triton.language as tl


@triton.jit
def inc_kernel(x_ptr, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(x_ptr + o, tl.load(x_ptr + o, mask=o < n) + 1, mask=o < n)


x = torch.zeros(100)
inc_kernel[(1,)](x, 100, B=128)
"""


def _script(tmp_path, tail: str, name: str = "k.py"):
    p = tmp_path / name
    p.write_text(KERNEL + textwrap.dedent(tail))
    return p


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def test_nothing_in_the_temp_directory_is_imported_while_the_worker_starts(tmp_path, monkeypatch):
    shared_tmp = tmp_path / "tmp"
    shared_tmp.mkdir()
    canary = tmp_path / "planted-code-ran"
    for mod in ("json", "typing", "numpy"):  # what the worker imports before any script runs
        (shared_tmp / f"{mod}.py").write_text(f"open({str(canary)!r}, 'a').write('{mod}')\n")
    monkeypatch.setattr(tempfile, "tempdir", str(shared_tmp))
    script = _script(
        tmp_path,
        """
        print("PATH0", sys.path[0])
        print("SAFEPATH", os.environ.get("PYTHONSAFEPATH"))
    """,
    )
    r = run(RunRequest(path=str(script)))
    assert not canary.exists(), canary.read_text()
    assert r.status == "ok", r.error
    # The script sees what `python k.py` gives it: its own folder first, no PYTHONSAFEPATH of ours.
    assert f"PATH0 {tmp_path}" in r.stdout and "SAFEPATH None" in r.stdout


def test_the_workers_start_directory_is_private(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    script = _script(tmp_path, "")
    seen = {}
    real = subprocess.Popen

    def spy(args, *a, **kw):
        if "triton_lens.trace_engine.process.worker" in args:
            seen["cwd"] = kw.get("cwd")
            seen["mode"] = os.stat(kw["cwd"]).st_mode & 0o777
        return real(args, *a, **kw)

    monkeypatch.setattr(subprocess, "Popen", spy)
    # A cold worker (a forked one starts in its zygote's directory: test_zygote.py checks that one).
    from triton_lens.trace_engine.process import zygote_client

    monkeypatch.setattr(zygote_client, "supported", lambda: False)
    r = run(RunRequest(path=str(script)))
    assert r.status == "ok", r.error
    assert seen["mode"] == 0o700 and seen["cwd"] != str(tmp_path)
    assert not os.path.exists(seen["cwd"])  # removed with the run


@pytest.mark.parametrize("how", ["os.kill(os.getppid(), signal.SIGKILL)", "os.killpg(os.getpgid(0), signal.SIGKILL)"])
def test_a_script_cannot_kill_triton_lens_check(tmp_path, how):
    script = _script(
        tmp_path,
        f"""
        import signal
        {how}
        time.sleep(5)
    """,
    )
    p = subprocess.run(
        [sys.executable, "-m", "triton_lens", "check", str(script), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode in (1, 2), (p.returncode, p.stderr)
    out = json.loads(p.stdout)
    assert out["status"] == "crashed" and len(out["launches"]) == 1
    assert any(f["kind"] == "crashed" and "SIGKILL" in f["message"] for f in out["findings"]), out["findings"]


# A child that double-forks into its own session (a daemon), writes its pid and sleeps.
DAEMON = """
pidfile = sys.argv[1] + ".pid"
code = (
    "import os, sys, time\\n"
    "if os.fork(): os._exit(0)\\n"
    "os.setsid()\\n"
    "open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid()))\\n"
    "os.rename(sys.argv[1] + '.tmp', sys.argv[1])\\n"
    "time.sleep(120)\\n")
subprocess.Popen([sys.executable, "-c", code, pidfile], start_new_session=True).wait()
while not os.path.exists(pidfile):
    time.sleep(0.01)
how = sys.argv[2]
if how == "raise":
    raise ValueError("after starting a daemon")
if how in ("hang", "cancel"):  # "cancel": still running when the run is cancelled (not racing its own end)
    while True:
        time.sleep(0.1)
"""


@pytest.mark.parametrize("how", ["return", "raise", "hang", "cancel"])
def test_processes_the_script_started_end_with_the_run(tmp_path, how):
    script = _script(tmp_path, DAEMON)
    marker = tmp_path / "daemon"
    cancel = threading.Event()
    if how == "cancel":

        def cancel_when_started():
            deadline = time.monotonic() + 60
            while not (tmp_path / "daemon.pid").exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            cancel.set()

        threading.Thread(target=cancel_when_started, daemon=True).start()
    r = run(
        RunRequest(path=str(script), argv=[str(marker), how], timeout_s=15.0 if how == "hang" else 60.0), cancel=cancel
    )
    pid = int((tmp_path / "daemon.pid").read_text())
    try:
        assert not _alive(pid), f"the daemon {pid} outlived the run ({r.status})"
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)
    expected = {"return": "ok", "raise": "exception", "hang": "timeout", "cancel": "error"}[how]
    assert r.status == expected, r.error


def test_the_memory_limit_counts_the_scripts_children(tmp_path):
    script = _script(
        tmp_path,
        """
        child = "import time\\nb = b'x' * (1500 << 20)\\ntime.sleep(8)\\n"
        subprocess.run([sys.executable, "-c", child])
    """,
    )
    r = run(RunRequest(path=str(script), memory_mb=1200))
    assert r.status == "crashed" and r.error.type == "MemoryLimit", (r.status, r.error)
    assert len(r.launches) == 1


def test_descendants_are_found_without_the_children_file_too(monkeypatch):
    """Kernels built without CONFIG_PROC_CHILDREN have no /proc/PID/task/TID/children: the memory
    limit and the clean-up must still see every process."""
    import builtins

    from triton_lens.trace_engine.process import supervisor

    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import subprocess, sys, time\n"
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])\n"
            "time.sleep(30)\n",
        ]
    )
    try:
        deadline = time.monotonic() + 30
        while len(supervisor.descendants(os.getpid())) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        with_file = sorted(supervisor.descendants(os.getpid()))
        real_open = builtins.open

        def no_children_file(path, *a, **kw):
            if str(path).endswith("/children"):
                raise FileNotFoundError(path)
            return real_open(path, *a, **kw)

        monkeypatch.setattr(builtins, "open", no_children_file)
        assert sorted(supervisor.descendants(os.getpid())) == with_file and len(with_file) >= 2
    finally:
        for p in supervisor.descendants(child.pid):
            os.kill(p, signal.SIGKILL)
        child.kill()
        child.wait()


def test_forked_children_count_only_their_own_pages(tmp_path):
    """A child forked by the script shares the worker's pages until it writes them: the limit counts
    the worker's resident memory once, and each child by the pages it has of its own. Here the worker
    holds a 300 MB array and has five children that touch almost nothing: the sum of the six
    resident sizes is far above 1500 MB, the real footprint (the worker's torch, triton and the
    array, about 700 MB) far below."""
    script = _script(
        tmp_path,
        """
        import numpy as np
        big = np.ones(300 << 20, dtype=np.uint8)  # filled: 300 MB resident
        kids = []
        for _ in range(5):
            pid = os.fork()
            if pid == 0:
                time.sleep(2)
                os._exit(0)
            kids.append(pid)
        for pid in kids:
            os.waitpid(pid, 0)
        print(int(big.sum()))
    """,
    )
    r = run(RunRequest(path=str(script), memory_mb=1500))
    assert r.status == "ok", (r.status, r.error)
    assert str(300 << 20) in r.stdout


# The script closes descriptors it did not open (as a daemon does), then opens 200 files of its own
# (they get the lowest free numbers, where the tool's stream used to be), launches and writes them.
CLOSES_DESCRIPTORS = """
    import resource
    out = sys.argv[1]
    os.closerange(3, {upto})
    files = [open(os.path.join(out, f"out{{i}}.txt"), "w") for i in range(200)]
    inc_kernel[(1,)](x, 100, B=128)
    for i, f in enumerate(files):
        f.write(f"file {{i}}\\n")
        f.close()
"""


def _own_files_intact(out) -> None:
    for i in range(200):
        assert (out / f"out{i}.txt").read_bytes() == f"file {i}\n".encode(), i


def test_a_script_closing_low_descriptors_leaves_the_stream_alone(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    script = _script(tmp_path, CLOSES_DESCRIPTORS.format(upto=512))
    r = run(RunRequest(path=str(script), argv=[str(out)]))
    _own_files_intact(out)
    assert r.status == "ok", r.error
    assert len(r.launches) == 2  # the launch after the closerange is recorded too


def test_a_script_closing_the_stream_gets_an_error_and_its_files_stay_its_own(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    script = _script(tmp_path, CLOSES_DESCRIPTORS.format(upto="resource.getrlimit(resource.RLIMIT_NOFILE)[0]"))
    r = run(RunRequest(path=str(script), argv=[str(out)]))
    _own_files_intact(out)  # no frame of the tool in any of them
    line = script.read_text().splitlines().index("os.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])") + 1
    assert (r.status, r.error.type, r.error.line) == ("error", "StreamClosed", line), r.error
    assert "closed Triton Lens's stream (its file descriptor" in r.error.message
    assert len(r.launches) == 1  # the launch before it is kept
