"""The runner's side of the zygote (zygote.py): start one, ask it for a run's worker, learn how it ended.

A zygote is kept per interpreter and environment, as a worker would be started with them. It is
started in the background (a run never waits for its imports): while it imports, runs start cold
workers as before; once it has said "ready", a run's worker is a fork of it. Anything wrong with it
(it died, it does not answer) drops it, and the run starts a cold worker: the zygote only saves time.

Only on Linux (descriptor passing, PR_SET_PDEATHSIG, /proc); elsewhere every run starts cold.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from typing import IO

# (interpreter, environment): one zygote each
ZygoteKey = tuple[str, tuple[tuple[str, str], ...]]

FORK_REPLY_S = 10.0  # a ready zygote answers a fork in milliseconds; past this it is dropped


class ZygoteGone(Exception):
    """The zygote cannot fork (it exited, or stopped answering): start a cold worker instead."""


class Zygote:
    def __init__(self, exe: str, env: dict[str, str]):
        self.home = tempfile.mkdtemp(prefix="triton-lens-zygote-")  # 0700: nothing importable from it
        self.sock, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen(
                [exe, "-m", "triton_lens.trace_engine.process.zygote", str(child.fileno())],
                pass_fds=(child.fileno(),),
                env=env,
                cwd=self.home,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            self.sock.close()
            shutil.rmtree(self.home, ignore_errors=True)
            raise
        finally:
            child.close()
        self.ready = False
        self.dead = False
        self._exits: dict[int, int] = {}  # supervisor pid -> wait status
        self._forked: deque[int] = deque()
        self._read_lock = threading.Lock()
        self._fork_lock = threading.Lock()

    # ---- the socket ---------------------------------------------------------------------------------
    def _pump(self, timeout: float) -> None:
        """Read what the zygote has said, waiting up to timeout for the first message."""
        if self.dead:
            return
        with self._read_lock:
            wait = timeout
            while not self.dead:
                try:
                    readable, _, _ = select.select([self.sock], [], [], wait)
                except (OSError, ValueError):
                    self.dead = True
                    return
                if not readable:
                    return
                try:
                    data = self.sock.recv(4096)
                except OSError:
                    data = b""
                if not data:
                    self.dead = True
                    return
                msg = json.loads(data)
                if "ready" in msg:
                    self.ready = True
                elif "forked" in msg:
                    self._forked.append(int(msg["forked"]))
                elif "exited" in msg:
                    self._exits[int(msg["exited"])] = int(msg["status"])
                wait = 0.0

    def wait_ready(self, timeout: float, cancel: threading.Event | None = None) -> bool:
        """Wait up to timeout for the zygote's imports to finish (False: it died, or the wait ran out, or
        `cancel` was set)."""
        deadline = time.monotonic() + timeout
        while not self.is_ready():
            left = deadline - time.monotonic()
            if self.dead or left <= 0 or (cancel is not None and cancel.is_set()):
                return False
            self._pump(min(0.05, left))
        return True

    def is_ready(self) -> bool:
        self._pump(0.0)
        if self.dead or self.proc.poll() is not None:
            self.dead = True
        return self.ready and not self.dead

    def fork(self, fds: list[int]) -> int:
        """A new run's supervisor, forked with the worker's five descriptors; its pid. ZygoteGone."""
        with self._fork_lock:
            try:
                socket.send_fds(self.sock, [json.dumps({"run": 1}).encode()], fds)
            except OSError as e:
                self.dead = True
                raise ZygoteGone(str(e)) from e
            deadline = time.monotonic() + FORK_REPLY_S
            while not self._forked:
                if self.dead or time.monotonic() > deadline:
                    self.dead = True
                    raise ZygoteGone("the zygote did not fork")
                self._pump(0.05)
            return self._forked.popleft()

    def exit_status(self, pid: int, timeout: float | None) -> int | None:
        """The wait status of a supervisor it forked, once it has exited (None until then, or after timeout)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while pid not in self._exits:
            if self.dead:
                return self._lost(pid, deadline)
            left = 0.05 if deadline is None else min(0.05, deadline - time.monotonic())
            if left <= 0:
                self._pump(0.0)
                break
            self._pump(left)
        return self._exits.pop(pid, None) if pid in self._exits else None

    def _lost(self, pid: int, deadline: float | None) -> int | None:
        """The zygote died before it reported pid's end: its PR_SET_PDEATHSIG ends the run; wait for that."""
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return signal.SIGTERM  # a wait status: ended by SIGTERM
            except PermissionError:
                pass
            if deadline is not None and time.monotonic() > deadline:
                return None
            time.sleep(0.05)

    def close(self) -> None:
        self.dead = True
        try:
            self.sock.close()  # the zygote exits when it reads the end
        except OSError:
            pass
        try:
            self.proc.wait(timeout=2.0)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self.proc.wait()
        shutil.rmtree(self.home, ignore_errors=True)


class ForkedProcess:
    """What the runner uses of subprocess.Popen, for a run's supervisor forked by a zygote (the
    zygote's child, not the runner's: its exit status comes from the zygote)."""

    def __init__(self, zygote: Zygote, pid: int, stdin: IO[bytes], stdout: IO[bytes], stderr: IO[bytes]):
        self._zygote = zygote
        self.pid = pid
        self.stdin: IO[bytes] | None = stdin
        self.stdout: IO[bytes] | None = stdout
        self.stderr: IO[bytes] | None = stderr
        self.returncode: int | None = None

    def _update(self, timeout: float | None) -> int | None:
        if self.returncode is None:
            status = self._zygote.exit_status(self.pid, timeout)
            if status is not None:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def poll(self) -> int | None:
        return self._update(0.0)

    def wait(self, timeout: float | None = None) -> int:
        rc = self._update(timeout)
        if rc is None:
            raise subprocess.TimeoutExpired(["triton-lens worker"], timeout or 0.0)
        return rc

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass


# ---- one zygote per interpreter and environment ----------------------------------------------------
MAX_ZYGOTES = 2  # each holds torch and triton in memory (a few hundred MB, shared with its runs)
_zygotes: dict[ZygoteKey, Zygote] = {}
_runs_seen: dict[ZygoteKey, int] = {}
RUNS_SEEN_KEYS = 64  # keys (interpreter, environment) counted at most: a server's runs of many venvs stay bounded
_lock = threading.Lock()


def supported() -> bool:
    return sys.platform.startswith("linux") and hasattr(socket, "send_fds")


def ready_zygote(
    key: ZygoteKey,
    exe: str,
    env: dict[str, str],
    start: bool,
    wait_s: float = 0.0,
    cancel: threading.Event | None = None,
) -> Zygote | None:
    """The ready zygote for key, or None; with start, one is started (in the background) if there is none.
    wait_s > 0: a zygote still importing is waited for that long (a run then forks from it)."""
    if not supported():
        return None
    with _lock:
        z = _zygotes.get(key)
        if z is not None and not z.is_ready() and z.dead:
            _zygotes.pop(key)
            z.close()
            z = None
        if z is None and start:
            try:
                z = Zygote(exe, env)
            except OSError:
                return None
            _zygotes[key] = z
            while len(_zygotes) > MAX_ZYGOTES:
                oldest = next(iter(_zygotes))
                _zygotes.pop(oldest).close()
            if wait_s <= 0:
                return None
    if z is not None and wait_s > 0 and not z.is_ready():
        z.wait_ready(wait_s, cancel)  # outside the lock: other keys' runs go on meanwhile
    return z if z is not None and z.is_ready() else None


def note_run(key: ZygoteKey) -> int:
    """How many runs with this key this process has started, this one included."""
    with _lock:
        n = _runs_seen.pop(key, 0) + 1
        _runs_seen[key] = n  # the most recent key last: the oldest go first past RUNS_SEEN_KEYS
        while len(_runs_seen) > RUNS_SEEN_KEYS:
            del _runs_seen[next(iter(_runs_seen))]
        return n


def drop(key: ZygoteKey, z: Zygote) -> None:
    with _lock:
        if _zygotes.get(key) is z:
            _zygotes.pop(key)
    z.close()


def close_all() -> None:
    with _lock:
        zs = list(_zygotes.values())
        _zygotes.clear()
    for z in zs:
        z.close()


def zygote_pids() -> list[int]:
    """The pids of the zygotes this process holds (tests: what a killed runner leaves behind)."""
    with _lock:
        return [z.proc.pid for z in _zygotes.values()]
