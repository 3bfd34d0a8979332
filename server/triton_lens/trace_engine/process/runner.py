"""The runner: runs a script in a worker process with a time and a memory limit, and collects the
launches it streams. Whatever the script does (raises, hangs, exits, segfaults, eats memory),
every launch that finished before is kept and the failure becomes part of the result.
"""

from __future__ import annotations

import atexit
import bisect
import errno
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, TypedDict, cast

from ...model import CRASHED, ERROR, EXCEPTION, NO_LAUNCH, OK, TIMEOUT, CudaStandIn, LaunchTrace, RunResult, ScriptError
from ...model.remedies import MEMORY_LIMIT, PYTHON, TIME_LIMIT
from ...source.kernels import find_kernels
from ..recording import stream
from . import process_tree, spares, zygote_client
from .process_tree import descendants, footprint_bytes, resolve_workers

if TYPE_CHECKING:
    import numpy as np

    from ..recording.size_cache import SizeCache

_PACKAGE_PARENT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
_OUTPUT_TAIL = 64 * 1024
STARTUP_ALLOWANCE_S = 120.0  # importing torch and triton, before the time limit starts
ASK_ANSWER_S = 1.0  # at a limit, at most this long for the worker's first answer (worker._TimeLimitAsks)
FLUSH_GRACE_S = 2.0  # at the time limit, at most this long for the launch in flight (it usually takes ms)


@dataclass
class RunRequest:
    path: str
    source: str | None = None  # the unsaved buffer of `path`, run instead of the file on disk
    command: list[str] | None = None  # e.g. ["pytest", "tests/test_add.py", "-k", "small"]; None: path as __main__
    cwd: str | None = None
    python: str = sys.executable
    timeout_s: float = 60.0
    memory_mb: int = 8192
    env: dict[str, str] | None = None
    argv: list[str] = field(default_factory=list)
    value_limit: int = 1 << 20
    # Processes a launch's programs are split over (recording/parallel.py); 1: the interpreter's own loop;
    # 0 or less: the machine's default (process_tree.default_workers), resolved here for every front end.
    workers: int = 1
    # After each launch, check its kernel at the other sizes it admits (trace_engine/recording/size_probe.py).
    size_check: bool = True
    # Record each config an autotuner tries, for its findings (False: only the config kept; the benchmark's baseline).
    autotune_trials: bool = True
    # Keep a worker started ahead of time for the next run with the same interpreter and
    # environment (the language server reruns a file on every edit; a fresh worker spends about a
    # second importing torch and triton).
    keep_warm: bool = False
    # "auto": CPU tensors stand in for CUDA ones when the machine has no usable CUDA device;
    # "cpu": always (trace_engine/standin/cuda_standin.py). `gpu` names the GPU the stand-in reports (gpu_profiles.py).
    device: str = "auto"
    gpu: str = "H100"
    # Progressive results (progressive.py): a long launch's sample of programs runs first in a fork and
    # `run(on_partial=...)` gets a snapshot from it before the launch completes. The complete result is
    # the same either way.
    progressive: bool = False
    # The size check's results across runs (size_cache.SizeCache; the language server keeps one): a launch
    # whose kernel, arguments, grid and relations are unchanged is answered from it instead of re-checked.
    size_cache: SizeCache | None = None


@dataclass
class Progress:
    kernel: str
    launch: int
    programs_done: int
    programs_total: int
    seconds: float


@dataclass
class Partial:
    """A snapshot of a run in progress: the launches complete so far and the sample of the one running
    (`result.launches[-1]`, complete=False: the exact executions of `programs_done` of its programs)."""

    result: RunResult
    kernel: str
    launch: int  # the launch's index
    programs_done: int
    programs_total: int
    seconds: float  # since the run began


class _RunStateBase(TypedDict):
    error: dict[str, Any] | None  # the worker's error frame (JSON)
    done: bool  # its done frame came
    in_launch: dict[str, Any] | None  # the launch in flight: kernel, launch, done, total (RunResult.in_launch)


class _RunState(_RunStateBase, total=False):
    """What the stream's reader thread tells the watcher and the outcome."""

    partial: bool  # a launch cut short at a limit was sent
    script_t0: float  # when the worker said hello: the script's time starts
    size_cache: tuple[SizeCache, str]  # the caller's size-check cache and this run's scope (its file)


class _Tail:
    """Keeps the last bytes of a stream (the user's prints) without holding all of them."""

    def __init__(self, pipe: IO[bytes] | None, on_chunk: Callable[[bytes], None] | None = None):
        self.data = bytearray()
        self.on_chunk = on_chunk  # sees every chunk as it arrives (`triton-lens check --show-output`)
        self.thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self.thread.start()

    def _read(self, pipe: IO[bytes]) -> None:
        # Popen's pipes and a forked worker's (zygote_client.ForkedProcess) are buffered readers; IO[bytes]
        # does not declare read1.
        buffered = cast(io.BufferedIOBase, pipe)
        for chunk in iter(lambda: buffered.read1(8192), b""):
            if self.on_chunk is not None:
                self.on_chunk(chunk)
            self.data += chunk
            if len(self.data) > 2 * _OUTPUT_TAIL:
                del self.data[:-_OUTPUT_TAIL]

    def text(self) -> str:
        self.thread.join(timeout=1.0)
        return bytes(self.data[-_OUTPUT_TAIL:]).decode("utf-8", "replace")


def _signal_name(code: int) -> str:
    try:
        return signal.Signals(code).name
    except ValueError:
        return f"signal {code}"


_FAULT_LINE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


def _innermost_line(dump: str, target: str) -> tuple[str | None, int | None]:
    """From a faulthandler dump (most recent call first): the first frame in the target file."""
    frames = [(m["file"], int(m["line"])) for m in _FAULT_LINE.finditer(dump)]
    for f, n in frames:
        if os.path.abspath(f) == target:
            return f, n
    return None, None


_SUPERVISOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "supervisor.py")


class _Worker:
    """A started worker: it has imported torch and triton and waits for its job on stdin.

    It runs below a supervisor (see supervisor.py) in its own session, so the script cannot signal
    the runner, and every process it starts stays below the supervisor, counted and ended with the
    run. It starts in a fresh 0700 directory with a safe sys.path: nothing in the directory it was
    started from (or a world-writable /tmp) is importable while it imports json, torch and triton.
    """

    def __init__(self, python: str, env: dict[str, str]):
        exe = _absolute_exe(python)
        self.home: str | None = tempfile.mkdtemp(prefix="triton-lens-worker-")  # 0700
        self.zygote: zygote_client.Zygote | None = None  # (a cold worker's: none)
        env = _safe_env(env)
        r, w = stream.frame_pipe()  # the worker's frames
        # The runner's asks at a limit, answered by a thread of the worker (worker._TimeLimitAsks).
        self.limits, limits_child = socket.socketpair()
        lw = limits_child.fileno()
        try:
            self.proc: subprocess.Popen[bytes] | zygote_client.ForkedProcess = subprocess.Popen(
                [
                    sys.executable,
                    "-I",
                    _SUPERVISOR,
                    exe,
                    "-m",
                    "triton_lens.trace_engine.process.worker",
                    str(w),
                    str(lw),
                ],
                pass_fds=(w, lw),
                env=env,
                cwd=self.home,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError:
            os.close(r)
            self.limits.close()
            os.rmdir(self.home)
            raise
        finally:
            os.close(w)
            limits_child.close()
        self.read_fd = r
        self.python = python

    @classmethod
    def forked(cls, zygote: zygote_client.Zygote, python: str) -> _Worker:
        """A worker forked by the zygote (zygote.py): the same pipes and limits socket as a cold one's.
        ZygoteGone: start a cold one."""
        self = cls.__new__(cls)
        self.home = None  # the zygote's directory is its own
        self.python = python
        self.zygote = zygote
        ours: list[int] = []
        theirs: list[int] = []
        try:
            r, w = os.pipe()  # stdin: the worker reads, we write the job
            theirs.append(r)
            ours.append(w)
            for _ in range(2):  # stdout, stderr: the worker writes, we read
                r, w = os.pipe()
                ours.append(r)
                theirs.append(w)
            self.read_fd, frames = stream.frame_pipe()
            self.limits, limits_child = socket.socketpair()
            theirs += [frames, limits_child.detach()]
            pid = zygote.fork(theirs)
        except BaseException:
            for fd in ours + theirs + [getattr(self, "read_fd", -1)]:
                try:
                    os.close(fd)
                except OSError:
                    pass
            if hasattr(self, "limits"):
                self.limits.close()
            raise
        for fd in theirs:
            os.close(fd)
        stdin, stdout, stderr = (os.fdopen(fd, mode) for fd, mode in zip(ours, ("wb", "rb", "rb")))
        self.proc = zygote_client.ForkedProcess(zygote, pid, stdin, stdout, stderr)
        return self

    def alive(self) -> bool:
        return self.proc.poll() is None

    def footprint_bytes(self) -> int:
        """The memory of the worker and every process the script started, as the limit counts it
        (process_tree.footprint_bytes: a forked child's pages shared with the worker count once)."""
        return footprint_bytes(self.proc.pid)

    def end(self, grace_s: float = 3.0) -> None:
        """End the worker and all its descendants: the supervisor does it on SIGTERM; SIGKILL to the
        group and to each descendant if it does not manage in time."""
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(timeout=grace_s)
            except (OSError, subprocess.TimeoutExpired):
                pass
        if self.proc.poll() is None:
            for p in descendants(self.proc.pid):
                try:
                    os.kill(p, signal.SIGKILL)
                except OSError:
                    pass
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
        self.proc.wait()

    def discard(self) -> None:
        self.end()
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if f is not None:
                    f.close()
            except OSError:
                pass
        try:
            os.close(self.read_fd)
        except OSError:
            pass
        self.limits.close()
        self.remove_home()

    def remove_home(self) -> None:
        if self.home is not None:
            shutil.rmtree(self.home, ignore_errors=True)


def _absolute_exe(python: str) -> str:
    exe = shutil.which(python)
    if exe is None:  # the supervisor would only find out after it forked
        raise FileNotFoundError(errno.ENOENT, "no such file or executable", python)
    # Absolute: the worker starts in its own directory, where `.venv/bin/python` names nothing (exit 127,
    # "the script exited with status 127"). Not resolved further: a venv's python is its symlink's path.
    return os.path.abspath(exe)


def _safe_env(env: dict[str, str]) -> dict[str, str]:
    env = dict(env)
    if not env.get("PYTHONSAFEPATH"):
        env["PYTHONSAFEPATH"] = "1"  # Python >= 3.11: -m puts no directory first on sys.path
        env["TRITON_LENS_SAFEPATH_ADDED"] = "1"  # the worker removes it before the script runs
    return env


# How long a run that keeps workers warm (the language server) waits for its zygote's imports rather than
# starting a cold worker beside it: both import torch and triton, and on a machine of few cores the two
# imports at once take longer than the zygote's alone plus a fork (bench/first_run.py). 0: never wait.
ZYGOTE_WAIT_S = 30.0  # a zygote slower than this (a machine far too loaded) gives way to a cold worker


def _take_worker(python: str, env: dict[str, str], keep_warm: bool, cancel: threading.Event | None = None) -> _Worker:
    """A worker forked from the zygote of this interpreter and environment when it is ready, else a cold
    one. The zygote starts in the background at the first run that keeps workers warm (the language
    server), which waits for it (ZYGOTE_WAIT_S), and at the second run of the same key otherwise (one
    `check` of one file pays nothing for it)."""
    key = (python, tuple(sorted(env.items())))
    start = zygote_client.note_run(key) > 1 or keep_warm
    zygote = None
    if start:
        try:
            zygote = zygote_client.ready_zygote(
                key,
                _absolute_exe(python),
                _safe_env(env),
                start=True,
                wait_s=ZYGOTE_WAIT_S if keep_warm else 0.0,
                cancel=cancel,
            )
        except OSError:
            zygote = None
    if zygote is not None:
        spare = _spares.take(zygote)
        if spare is not None:
            return spare
        try:
            return _Worker.forked(zygote, python)
        except zygote_client.ZygoteGone:
            zygote_client.drop(key, zygote)
    return _Worker(python, env)


# The next run's worker of each zygote, forked when a run ends (spares.py).
_spares: spares.Spares[_Worker] = spares.Spares()


def _fork_next(worker: _Worker) -> None:
    """After a run whose worker the zygote forked: the next run's, forked now, off that run's way."""
    zygote = worker.zygote
    if zygote is None:
        return

    def fork() -> _Worker:
        spare = _Worker.forked(zygote, worker.python)
        try:
            assert spare.proc.stdin is not None
            spare.proc.stdin.write(spares.REHEARSE.encode())  # (the warm-up again while it waits)
            spare.proc.stdin.flush()
        except OSError:
            spare.discard()
            raise
        return spare

    _spares.refill(zygote, fork)


def discard_spares() -> None:
    """End the zygotes kept for later runs and the workers forked ahead from them (the language server
    calls this at shutdown; also at exit)."""
    _spares.discard_all()
    zygote_client.close_all()


atexit.register(discard_spares)


def _decode_source(raw: bytes) -> tuple[str, tuple[int, str] | None]:
    """The text of a script as Python reads it (a coding cookie or BOM, else UTF-8), or
    ("", (line, message)) for bytes it cannot decode."""
    import io
    import tokenize

    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
    except SyntaxError as e:  # an unknown encoding in the cookie, or a BOM contradicting it
        return "", (
            getattr(e, "lineno", None) or 1,
            f"Python cannot read this file: {e.msg}. Fix the coding "
            "comment (# -*- coding: latin-1 -*-) or save the file as UTF-8.",
        )
    try:
        return raw.decode(encoding if encoding != "utf-8-sig" else "utf-8-sig"), None
    except (UnicodeDecodeError, LookupError) as e:
        start = getattr(e, "start", 0)
        line = raw[:start].count(b"\n") + 1
        byte = raw[start : start + 1].hex() if start < len(raw) else "?"
        return "", (
            line,
            f"the file is not valid {encoding}: byte 0x{byte} on line {line} cannot be decoded, so "
            "Python cannot run it. Save the file as UTF-8, or declare its encoding with a coding comment "
            "on line 1 or 2 (# -*- coding: latin-1 -*-).",
        )


def _ask_worker(worker: _Worker, ask: bytes, state: _RunState) -> bool:
    """A limit's ask (b"T": the time limit, b"M": the memory limit) to the worker's own thread
    (worker._TimeLimitAsks). True: the worker did it without signals, because the script replaced the
    SIGUSR1/SIGUSR2 handlers (the stack is in the crash file, and the launch in flight sent if there
    was one); False: use the signals (the handlers are the tool's, or no answer came)."""
    sock = worker.limits
    try:
        sock.settimeout(ASK_ANSWER_S)
        sock.sendall(ask)
        if sock.recv(1) != b"F":
            return False
        sock.settimeout(FLUSH_GRACE_S + ASK_ANSWER_S)
        done = sock.recv(1)
    except OSError:  # no answer in time (the worker busy in C, or gone): the signals
        return False
    if done == b"P":  # the launch in flight is being sent: wait for its frame
        grace = time.perf_counter() + FLUSH_GRACE_S
        while not state.get("partial") and time.perf_counter() < grace and worker.proc.poll() is None:
            time.sleep(0.02)
    return done in (b"P", b"D")


def _ask_for_launch_in_flight(proc: subprocess.Popen[bytes] | zygote_client.ForkedProcess, state: _RunState) -> None:
    """At the time limit: ask the worker for the launch in flight (the programs that finished, marked
    partial) and give it a moment to send it."""
    try:
        os.kill(proc.pid, signal.SIGUSR2)  # the supervisor passes it on to the worker
    except OSError:
        return
    grace = time.perf_counter() + FLUSH_GRACE_S
    while not state.get("partial") and time.perf_counter() < grace and proc.poll() is None:
        time.sleep(0.02)


def _ask_for_stack(
    proc: subprocess.Popen[bytes] | zygote_client.ForkedProcess, crash_file: str, wait_s: float = 3.0
) -> None:
    """Ask faulthandler for the script's stack (it says where the script was) and wait until the
    dump is written: its size stops changing, the worker exits, or wait_s passes."""
    try:
        os.kill(proc.pid, signal.SIGUSR1)  # the supervisor passes it on to the worker
    except OSError:
        return
    end = time.monotonic() + wait_s
    size, stable = -1, 0
    while time.monotonic() < end and proc.poll() is None:
        try:
            now = os.path.getsize(crash_file)
        except OSError:
            now = 0
        stable = stable + 1 if now == size and now > 0 else 0
        if stable >= 3:
            return
        size = now
        time.sleep(0.02)


def run(
    req: RunRequest,
    cancel: threading.Event | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    on_launch: Callable[[LaunchTrace], None] | None = None,
    on_output: Callable[[str, bytes], None] | None = None,
    on_partial: Callable[[Partial], None] | None = None,
) -> RunResult:
    """Run `req`. `on_output("stdout" | "stderr", chunk)` sees the script's own output live; its
    last 64 KB are kept in the result either way. `on_partial` (with `req.progressive`) gets each
    snapshot a launch's sample gives, on the stream's reader thread, before that launch completes."""
    target = os.path.abspath(req.path)
    result = RunResult(file=target, status=OK)
    source = req.source
    if source is None:
        source, error = _read_script(target)
        if error is not None:
            return _failed(result, error)
    nul = _nul_byte(source, target)
    if nul is not None:  # Python refuses the whole file, at no line: say which
        return _failed(result, nul)
    result.kernels = find_kernels(source, target)

    cwd = req.cwd or os.path.dirname(target)
    if not os.path.isdir(cwd):  # a folder deleted or renamed under an open editor: not the Python install's fault
        return _failed(result, _missing_folder(cwd))
    tmp = tempfile.mkdtemp(prefix="triton-lens-")
    crash_file = os.path.join(tmp, "crash.txt")
    try:
        worker = _start_job(req, _worker_env(req), _job(req, target, cwd, crash_file), cancel)
    except OSError as e:
        os.rmdir(tmp)
        return _failed(result, _cannot_start(req.python, e))
    proc = worker.proc
    t0 = time.perf_counter()
    out_tail = _Tail(proc.stdout, None if on_output is None else lambda c: on_output("stdout", c))
    err_tail = _Tail(proc.stderr, None if on_output is None else lambda c: on_output("stderr", c))

    state: _RunState = {"error": None, "done": False, "in_launch": None}
    if req.size_cache is not None:
        state["size_cache"] = (req.size_cache, target)
    reader = threading.Thread(
        target=_read_stream,
        args=(worker.read_fd, result, state, t0, on_launch, on_progress, on_partial),
        daemon=True,
    )
    reader.start()
    try:
        stopped = _watch(worker, req, state, cancel, crash_file, t0)
    finally:  # stopped, finished, or the runner itself interrupted (Ctrl-C): nothing stays behind
        worker.end()
        worker.limits.close()
        worker.remove_home()
    _fork_next(worker)
    reader.join(timeout=5.0)
    result.stdout, result.stderr = out_tail.text(), err_tail.text()
    note = _take_stream_note(tmp)
    killed = _take_kill_note(tmp)
    dump = _take_crash_dump(tmp, crash_file)

    result.seconds = time.perf_counter() - t0
    error = _outcome(result, req, target, stopped, state, proc.returncode, dump, note, killed)
    if error is not None:
        _failed(result, error)
    if result.status == OK and not result.launches:
        result.status = NO_LAUNCH
    return result


def _failed(result: RunResult, error: ScriptError) -> RunResult:
    result.status = error.kind
    result.error = error
    return result


# ---- before the run: the script, the job, the worker's environment ---------------------------------
def _read_script(target: str) -> tuple[str, ScriptError | None]:
    """The text of the script on disk, or ("", why it cannot be read)."""
    try:
        with open(target, "rb") as f:
            raw = f.read()
    except OSError as e:
        return "", ScriptError(ERROR, type(e).__name__, f"cannot read {target}: {e.strerror}")
    source, problem = _decode_source(raw)
    if problem is not None:
        return "", ScriptError(ERROR, "EncodingError", problem[1], target, problem[0])
    return source, None


def _nul_byte(source: str, target: str) -> ScriptError | None:
    """Python does not run a file with a NUL byte ("source code string cannot contain null bytes",
    no line): the error at the first one's line, as the editor counts lines."""
    at = source.find("\x00")
    if at < 0:
        return None
    from ...model.lines import line_starts

    starts = line_starts(source)
    line = bisect.bisect_right(starts, at)
    return ScriptError(
        EXCEPTION,
        "SyntaxError",
        f"line {line} has a NUL byte (\\x00) at column {at - starts[line - 1] + 1}, and Python runs no file "
        "that holds one: delete it (it often comes with pasted or binary text)",
        target,
        line,
    )


def _missing_folder(cwd: str) -> ScriptError:
    return ScriptError(
        ERROR,
        "FileNotFoundError",
        f"the folder to run in, {cwd}, does not exist (moved or deleted?): save the "
        "file somewhere that exists, or fix the run's working directory",
    )


def _job(req: RunRequest, target: str, cwd: str, crash_file: str) -> dict[str, Any]:
    """What the worker reads from its stdin (worker.py), as JSON."""
    return {
        "path": target,
        "source": req.source,
        "command": req.command,
        "argv": req.argv,
        "cwd": cwd,
        "crash_file": crash_file,
        "flush_grace_s": FLUSH_GRACE_S,  # how long the worker's own ask waits for the launch in flight
        # where the worker leaves an error it could not send: the script closed its stream
        "stream_note": os.path.join(os.path.dirname(crash_file), "stream-lost.json"),
        # where it notes the script's own os.kill/os.killpg of the run (worker._note_kills_of_the_run)
        "kill_note": os.path.join(os.path.dirname(crash_file), "killed.json"),
        "value_limit": req.value_limit,
        "device": req.device,
        "gpu": req.gpu,
        "workers": resolve_workers(req.workers),
        "size_check": req.size_check,
        "autotune_trials": req.autotune_trials,
        "progressive": req.progressive,
        # the size check's entries of earlier runs of this file (size_cache.py); None: no cache
        "size_cache": req.size_cache.for_job(target) if req.size_cache is not None and req.size_check else None,
    }


def _worker_env(req: RunRequest) -> dict[str, str]:
    env = dict(os.environ if req.env is None else req.env)
    env["TRITON_INTERPRET"] = "1"
    env["TRITON_LENS_WORKER"] = "1"  # the script's own triton_lens.launch() must not serve a viewer
    # The worker needs this package; the user's script must not see the libraries bundled for the
    # language server (the extension names them in TRITON_LENS_BUNDLED_LIBS): its own come first.
    bundled = env.pop("TRITON_LENS_BUNDLED_LIBS", None)
    inherited = [
        p
        for p in env.get("PYTHONPATH", "").split(os.pathsep)
        if p and (bundled is None or os.path.abspath(p) != os.path.abspath(bundled))
    ]
    env["PYTHONPATH"] = os.pathsep.join([_PACKAGE_PARENT] + inherited)
    env.setdefault("PYTHONUNBUFFERED", "1")
    for name, value in process_tree.FORK_FRIENDLY_ENV.items():
        env.setdefault(name, value)
    return env


def _start_job(
    req: RunRequest, env: dict[str, str], job: dict[str, Any], cancel: threading.Event | None = None
) -> _Worker:
    """A worker (a warm one when there is one) with the job written to it. OSError: it cannot start."""
    worker = _take_worker(req.python, env, req.keep_warm, cancel)
    assert worker.proc.stdin is not None
    worker.proc.stdin.write((json.dumps(job) + "\n").encode())
    worker.proc.stdin.close()
    return worker


def _cannot_start(python: str, e: OSError) -> ScriptError:
    return ScriptError(
        ERROR,
        type(e).__name__,
        f"cannot start the Python interpreter {python!r}: {e.strerror}.",
        remedy=PYTHON,
    )


# ---- during the run: the worker's stream, the limits -------------------------------------------
def _read_stream(
    fd: int,
    result: RunResult,
    state: _RunState,
    t0: float,
    on_launch: Callable[[LaunchTrace], None] | None,
    on_progress: Callable[[Progress], None] | None,
    on_partial: Callable[[Partial], None] | None = None,
) -> None:
    """The reader thread: the worker's frames (stream.py) into the result and the shared state."""
    with os.fdopen(fd, "rb") as inp:
        while True:
            frame = stream.read_frame(inp)
            if frame is None:
                return
            kind, meta, arrays = frame
            if kind == "launch":
                trace = stream.launch_from_frame(meta, arrays)
                if trace.autotune is not None and trace.autotune.get("trial"):
                    result.autotune_trials.append(trace)  # an autotune config tried: for its findings
                    continue
                result.launches.append(trace)
                if trace.complete:
                    state["in_launch"] = None
                else:  # the launch in flight at the time limit, cut short: it is still the one in flight
                    state["partial"] = True
                    il = state["in_launch"]
                    if il is None or il["launch"] != trace.index:
                        done = len(set(trace.ex_program.tolist()))  # the programs that finished
                        il = {"kernel": trace.kernel, "launch": trace.index, "done": done, "total": trace.n_programs}
                        state["in_launch"] = il
                if on_launch is not None:
                    on_launch(trace)
            elif kind == "partial":  # a launch's sample, before the launch (progressive.py)
                if on_partial is not None and not any(t.index == meta["index"] for t in result.launches):
                    _hand_partial(on_partial, result, meta, arrays, t0)
            elif kind == "sizes":  # the size check of a launch sent before (trace_engine/recording/size_probe.py)
                for t in result.launches:
                    if t.index == meta["launch"]:
                        t.size_findings = list(meta["findings"])
                        t.size_checked = list(meta.get("checked", []))
                _keep_size_entry(state, meta.get("cache"))
            elif kind == "progress":
                state["in_launch"] = {
                    "kernel": meta["kernel"],
                    "launch": meta["launch"],
                    "done": meta["done"],
                    "total": meta["total"],
                }
                if on_progress is not None:
                    on_progress(
                        Progress(meta["kernel"], meta["launch"], meta["done"], meta["total"], time.perf_counter() - t0)
                    )
            elif kind == "hello":
                state["script_t0"] = time.perf_counter()
                result.triton_version = meta["triton_version"]
                result.worker_pid = meta["pid"]
            elif kind == "error":
                state["error"] = meta
            elif kind == "standin":
                result.cuda_standin = CudaStandIn.from_json(meta)
            elif kind == "memory":  # the run's torch.empty buffers that launches took (host_writes.py)
                result.scratch_buffers = list(meta["scratch"])
            elif kind == "done":
                state["done"] = True
                result.late_imports = list(meta.get("late_imports") or [])


def _keep_size_entry(state: _RunState, entry: dict[str, Any] | None) -> None:
    """A launch's size-check result the worker computed (kept for the next run of the document), or the
    key it answered from the entries it was sent (size_cache.py)."""
    if not entry or "size_cache" not in state:
        return
    cache, scope = state["size_cache"]
    if entry.get("hit"):
        cache.hit(scope, entry["key"])
    elif "value" in entry:
        cache.put(scope, entry["key"], entry["value"])


def _hand_partial(
    on_partial: Callable[[Partial], None],
    result: RunResult,
    meta: dict[str, Any],
    arrays: dict[str, np.ndarray],
    t0: float,
) -> None:
    import dataclasses

    trace = stream.launch_from_frame(meta, arrays)
    snapshot = dataclasses.replace(
        result, launches=list(result.launches) + [trace], autotune_trials=list(result.autotune_trials)
    )
    on_partial(
        Partial(
            snapshot,
            trace.kernel,
            trace.index,
            int(meta["programs_done"]),
            int(meta["programs_total"]),
            time.perf_counter() - t0,
        )
    )


def _watch(
    worker: _Worker, req: RunRequest, state: _RunState, cancel: threading.Event | None, crash_file: str, t0: float
) -> str | None:
    """Wait for the worker to exit, or stop it: "cancelled", TIMEOUT or "memory" (None: it exited).

    The time limit is the script's: its clock starts when the worker has imported torch and triton and
    starts the script (its "hello"), so a loaded machine's slow start-up is not counted against it.
    A worker that never gets that far is stopped after the limit plus a bounded start-up allowance."""
    proc = worker.proc
    startup_deadline = t0 + req.timeout_s + STARTUP_ALLOWANCE_S
    limit_bytes = req.memory_mb * 1024 * 1024 if req.memory_mb > 0 else 0
    stopped = None
    while True:
        try:
            proc.wait(timeout=0.05)
            return None
        except subprocess.TimeoutExpired:
            pass
        if cancel is not None and cancel.is_set():
            stopped = "cancelled"
        elif time.perf_counter() > (
            startup_deadline if "script_t0" not in state else state["script_t0"] + req.timeout_s
        ):
            stopped = TIMEOUT
        elif limit_bytes and worker.footprint_bytes() > limit_bytes:
            stopped = "memory"
        if stopped in (TIMEOUT, "memory") and not _ask_worker(worker, b"T" if stopped == TIMEOUT else b"M", state):
            if stopped == TIMEOUT:
                _ask_for_launch_in_flight(proc, state)
            _ask_for_stack(proc, crash_file)
        if stopped:
            return stopped


def _take_note(path: str, key: str) -> dict[str, Any] | None:
    """A JSON note the worker left in the run's folder (a dict whose `key` is a string), removed once read."""
    try:
        with open(path, encoding="utf-8") as f:
            note = json.load(f)
    except (OSError, ValueError):
        return None
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    return note if isinstance(note, dict) and isinstance(note.get(key), str) else None


def _take_stream_note(tmp: str) -> dict[str, Any] | None:
    """The error the worker left because it could not send it (worker._report_lost_stream), if any."""
    return _take_note(os.path.join(tmp, "stream-lost.json"), "message")


def _take_kill_note(tmp: str) -> dict[str, Any] | None:
    """The script's own kill of the run, if it made one (worker._note_kills_of_the_run)."""
    return _take_note(os.path.join(tmp, "killed.json"), "signal")


def _take_crash_dump(tmp: str, crash_file: str) -> str:
    """The faulthandler dump the worker left (empty if none); the run's temporary folder removed."""
    try:
        with open(crash_file, encoding="utf-8", errors="replace") as f:
            dump = f.read()
    except OSError:
        dump = ""
    try:
        os.unlink(crash_file)
    except OSError:
        pass
    shutil.rmtree(tmp, ignore_errors=True)  # with what the run kept there (pytest's cache)
    return dump


# ---- after the run: what went wrong, if anything -----------------------------------------------
def _outcome(
    result: RunResult,
    req: RunRequest,
    target: str,
    stopped: str | None,
    state: _RunState,
    rc: int | None,
    dump: str,
    note: dict[str, Any] | None = None,
    killed: dict[str, Any] | None = None,
) -> ScriptError | None:
    """The run's error: why it was stopped, what the script raised, or how the worker ended early."""
    if stopped == "cancelled":
        return ScriptError(ERROR, "Cancelled", "the run was cancelled")
    if stopped == TIMEOUT:
        return _timeout_error(result, req, target, state, dump)
    if stopped == "memory":
        file, line = _innermost_line(dump, target)
        return ScriptError(
            CRASHED,
            "MemoryLimit",
            f"the script used more than the memory limit of {req.memory_mb} MB and was stopped",
            file,
            line,
            dump[-8000:],
            remedy=MEMORY_LIMIT,
        )
    if note is not None:  # the script closed the stream: what it did after is unknown to the runner
        line = note.get("line")
        return ScriptError(
            ERROR,
            "StreamClosed",
            note["message"],
            target if isinstance(line, int) else None,
            line if isinstance(line, int) else None,
        )
    if killed is not None and (rc != 0 or not state["done"]):
        # Before "done" or after it (its last statement): the run did not end as the script ended.
        return _killed_error(result, target, killed)
    if state["error"] is not None:
        e = state["error"]
        return ScriptError(
            EXCEPTION,
            e["type"],
            e["message"],
            e["file"],
            e["line"],
            e["traceback"],
            col=e.get("col"),
            end_line=e.get("end_line"),
            end_col=e.get("end_col"),
            would_not_compile=bool(e.get("would_not_compile")),
        )
    if not state["done"]:
        return _early_end_error(result, req, target, rc, dump)
    return None


def _killed_error(result: RunResult, target: str, killed: dict[str, Any]) -> ScriptError:
    """The script's own os.kill/os.killpg ended the run: say so, at its line (not the memory limit)."""
    line = killed.get("line") if isinstance(killed.get("line"), int) else None
    whom = {
        "supervisor": "Triton Lens's supervisor (its parent process), and itself with it,",
        "group": "its whole process group, itself included,",
    }.get(str(killed.get("whom")), "itself")
    at = f" at line {line}" if line is not None else ""
    return ScriptError(
        CRASHED,
        str(killed["signal"]),
        f"the script killed {whom} with {killed['signal']}{at}: nothing after that ran or was recorded. "
        "To stop early, raise an exception or call sys.exit(); to end processes the script started, "
        "signal them by their own pid",
        target if line is not None else None,
        line,
        result.stderr[-8000:],
    )


def _timeout_error(result: RunResult, req: RunRequest, target: str, state: _RunState, dump: str) -> ScriptError:
    """Stopped at the time limit: where the script was, and which launch it was inside (kept in
    `result.in_launch`)."""
    file, line = _innermost_line(dump, target)
    inside = ""
    if state["in_launch"] is not None:
        il = result.in_launch = state["in_launch"]
        inside = f" inside launch {il['launch'] + 1} of {il['kernel']} ({il['done']} of {il['total']} programs done)"
    return ScriptError(
        TIMEOUT,
        "Timeout",
        f"the script was still running{inside} after the time limit of {req.timeout_s:g} s and was stopped",
        file,
        line,
        dump[-8000:],
        remedy=TIME_LIMIT,
    )


def _early_end_error(result: RunResult, req: RunRequest, target: str, rc: int | None, dump: str) -> ScriptError:
    """The worker ended before the script finished: a signal, a worker that could not start (a
    missing module), or an exit status (os._exit, a fatal error)."""
    file, line = _innermost_line(dump, target)
    if rc is not None and rc < 0:
        name = _signal_name(-rc)
        hint = " (the memory limit, or the system, stopped it)" if name == "SIGKILL" else ""
        msg = f"the script crashed with {name}{hint}"
        if "ModuleNotFoundError" in result.stderr or "No module named" in result.stderr:
            msg += ": " + result.stderr.strip().splitlines()[-1]
        return ScriptError(CRASHED, name, msg, file, line, dump[-8000:] or result.stderr[-8000:])
    err_lines = result.stderr.strip().splitlines()
    if (
        rc
        and err_lines
        and ("No module named" in err_lines[-1] or "Error" in err_lines[-1])
        and "triton_lens" in result.stderr
        and not result.launches
        and file is None
    ):
        return ScriptError(
            ERROR,
            "WorkerError",
            f"Triton Lens could not start {req.python}: {err_lines[-1]}. Install "
            f"what is missing (`{req.python} -m pip install triton torch numpy`), or use another Python.",
            traceback=result.stderr[-8000:],
            remedy=PYTHON,
        )
    return ScriptError(
        CRASHED,
        "exit",
        f"the script exited with status {rc} before it finished (os._exit or a fatal error)",
        file,
        line,
        result.stderr[-8000:],
    )
