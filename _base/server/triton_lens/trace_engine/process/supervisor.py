"""The supervisor: the one process between the runner and the worker.

    python -I supervisor.py PYTHON WORKER_ARGS...    (run as a file, with the server's Python)

Why it exists: a script runs with the user's rights, and `os.kill(os.getppid(), 9)` or a child that
outlives it are ordinary accidents. With the supervisor in between, the worker's parent is this
process, not the language server; the runner starts it in its own session and process group, so
the terminal's Ctrl-C and a script's `os.killpg(0, ...)` stay inside. It is a child subreaper
(PR_SET_CHILD_SUBREAPER): every process the script starts, even one that calls setsid() or
double-forks, stays a descendant of this process, so the runner can count their memory and this
process can end all of them with the run.

It ends everything below it and exits when the worker exits (with the worker's exit status, or
by the worker's signal), on SIGTERM from the runner, and when the runner dies (PR_SET_PDEATHSIG).
SIGUSR1 (the runner asking for the script's stack) and SIGUSR2 (for the launch in flight, at the time
limit) are passed on to the worker.

Only the standard library: `-I` keeps the user's environment and the current directory out of
this process's imports.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


class _Stop(Exception):
    """SIGTERM: the runner (or its death) ends the run."""


def _prctl(option: int, value: int) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        rc: int = libc.prctl(option, value, 0, 0, 0)  # (ctypes' foreign functions are untyped)
        return rc == 0
    except (OSError, AttributeError):
        return False  # not Linux: the process group is all there is


def children(pid: int) -> list[int]:
    """Direct children of pid (Linux /proc; empty elsewhere)."""
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out.extend(int(c) for c in f.read().split())
        except FileNotFoundError:  # a kernel without CONFIG_PROC_CHILDREN (or the thread just ended)
            if not os.path.exists(f"/proc/{pid}/task/{tid}"):
                continue
            return _children_by_scan(pid)
        except (OSError, ValueError):
            pass
    return out


def _children_by_scan(pid: int) -> list[int]:
    """Direct children of pid from every process's parent pid: slower, works on any Linux."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as f:
                ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid:
            out.append(int(d))
    return out


def descendants(pid: int) -> list[int]:
    """Every process below pid, parents before their children."""
    out, todo, seen = [], [pid], {pid}
    while todo:
        for c in children(todo.pop()):
            if c not in seen:
                seen.add(c)
                out.append(c)
                todo.append(c)
    return out


def _reap() -> list[tuple[int, int]]:
    """Collect every child that has exited (orphans reparented here included)."""
    done: list[tuple[int, int]] = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return done
        if pid == 0:
            return done
        done.append((pid, status))


def end_all() -> None:
    """SIGKILL every descendant until none is left. Because this process is a subreaper, a child
    forked while we kill its parent is reparented here and found by the next pass."""
    me = os.getpid()
    for _ in range(1000):
        _reap()
        below = descendants(me)
        if not below:
            return
        for p in below:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def main(argv: list[str]) -> None:
    """The worker is a new program (exec): PYTHON WORKER_ARGS..."""

    def start_worker() -> None:
        try:
            os.execv(argv[0], argv)
        except OSError as e:
            os.write(2, f"triton-lens: cannot start {argv[0]}: {e.strerror}\n".encode())

    supervise(start_worker)


def supervise(start_worker: Callable[[], None]) -> None:
    """Be the supervisor of one run: fork the worker, which calls start_worker() (it must not return
    on success: exec, or the zygote's worker ending in os._exit), then pass signals on, wait for it,
    end everything below and exit as the worker did. Never returns."""
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    parent = os.getppid()

    def on_term(signum: int, frame: FrameType | None) -> None:
        raise _Stop()

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the runner's to handle
    if parent == 1:  # the runner (or the zygote) died before PDEATHSIG was set
        os._exit(1)
    me = os.getpid()
    worker = os.fork()
    if worker == 0:
        try:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # the supervisor gone: the worker goes too
            if os.getppid() != me:  # it went before the line above
                os._exit(1)
            start_worker()
        finally:
            os._exit(127)

    def pass_on(signum: int, frame: FrameType | None) -> None:
        # The stack dump (SIGUSR1) goes to the worker's own children first: a launch split over forked
        # children (trace_engine/recording/parallel.py) is in their kernel code, and the dump that comes first names the line.
        children = [p for p in descendants(worker) if p != worker] if signum == signal.SIGUSR1 else []
        for p in children:
            try:
                os.kill(p, signum)
            except OSError:
                pass
        if children:
            time.sleep(0.2)  # their dumps share the crash file: let them finish before the worker's
        try:
            os.kill(worker, signum)
        except OSError:
            pass

    signal.signal(signal.SIGUSR1, pass_on)
    signal.signal(signal.SIGUSR2, pass_on)
    status = None
    try:
        while status is None:
            try:
                pid, st = os.waitpid(-1, 0)
            except ChildProcessError:
                break
            if pid == worker:
                status = st
    except _Stop:
        status = None
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    end_all()
    if status is None:
        os._exit(1)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (ImportError, ValueError, OSError):
            pass
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)  # the runner reads the worker's signal as this process's
    os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)


if __name__ == "__main__":
    main(sys.argv[1:])
