"""The worker: a child process that runs the user's script under the interpreter and streams each
finished launch to the runner. It runs user code: the runner watches its memory and time and
kills it past either limit.

    python -m triton_lens.trace_engine.process.worker FD     (then the job as one JSON line on stdin)
"""

from __future__ import annotations

import builtins
import contextlib
import faulthandler
import json
import os
import select
import signal
import sys
import threading
import time
import traceback
import types
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, cast

if TYPE_CHECKING:  # (types only: the worker imports what its run needs, when it needs it)
    from collections.abc import Callable, Mapping, Sequence
    from importlib.machinery import ModuleSpec

    from _pytest.assertion.rewrite import AssertionRewritingHook

    from ...model import LaunchTrace
    from ..recording.stream import Sink

# The job (runner._job) is JSON: its values are read and checked where they are used.
Job = dict[str, Any]

_REAL_EXIT = os._exit  # the script's os._exit is wrapped (see _stack_on_os_exit); the worker's own is not


class _BufferLoader:
    """Serves the unsaved editor buffer for one path, to imports and to linecache/inspect."""

    def __init__(self, path: str, source: str):
        import importlib.machinery
        import linecache

        self.path = os.path.abspath(path)
        self.source = source
        from ...model.lines import split_lines

        # mtime None: linecache.checkcache leaves the entry alone; inspect.getsource reads it.
        # Split as the compiler does (str.splitlines would break at a form feed and shift lines).
        linecache.cache[self.path] = (len(source), None, split_lines(source, keepends=True), self.path)
        outer = self

        class Loader(importlib.machinery.SourceFileLoader):
            def get_data(self, p: str) -> bytes:
                if os.path.abspath(p) == outer.path:
                    return outer.source.encode()
                return super().get_data(p)

            def path_stats(self, p: str) -> Mapping[str, Any]:
                st = cast(dict[str, Any], super().path_stats(p))  # (CPython's is a dict)
                st["size"] = len(outer.source.encode())
                return st

        class Finder:
            @staticmethod
            def find_spec(
                name: str, path: Sequence[str] | None = None, target: types.ModuleType | None = None
            ) -> ModuleSpec | None:
                spec = importlib.machinery.PathFinder.find_spec(name, path, target)
                if spec is not None and spec.origin and os.path.abspath(spec.origin) == outer.path:
                    spec.loader = Loader(spec.name, spec.origin)
                    spec.cached = None  # never reuse bytecode compiled from the file on disk
                return spec

        sys.meta_path.insert(0, Finder)
        sys.dont_write_bytecode = True

    def serve_to_pytest(self) -> None:
        """pytest puts its assertion-rewriting hook first on sys.meta_path once it starts, so a test
        file (or conftest.py) would be read from disk and the buffer never run. Its hook compiles
        our path from the buffer instead, with the asserts rewritten as pytest rewrites them, and
        never from the bytecode it cached for the file on disk."""
        import ast

        try:
            from _pytest.assertion import rewrite
        except ImportError:  # a pytest without the hook: the Finder above serves the buffer
            return
        original = rewrite.AssertionRewritingHook.exec_module
        outer = self

        def exec_module(hook: AssertionRewritingHook, module: types.ModuleType) -> None:
            spec = module.__spec__
            if spec is None or not spec.origin or os.path.abspath(spec.origin) != outer.path:
                return original(hook, module)
            from pathlib import Path

            hook._rewritten_names[module.__name__] = Path(spec.origin)
            data = outer.source.encode()
            tree = ast.parse(data, filename=spec.origin)
            rewrite.rewrite_asserts(tree, data, spec.origin, hook.config)
            exec(compile(tree, spec.origin, "exec", dont_inherit=True), module.__dict__)

        # Patched on pytest's class for this process (the hook is made by pytest.main). mypy compares a
        # plain function with the bound method's type and sees `self` twice: assignment too.
        rewrite.AssertionRewritingHook.exec_module = exec_module  # type: ignore[method-assign,assignment]


def _run_target(job: Job, buffer: _BufferLoader | None = None) -> None:
    import runpy

    path = os.path.abspath(job["path"])
    command = job.get("command")
    if not command:
        sys.argv = [path] + list(job.get("argv") or [])
        sys.path.insert(0, os.path.dirname(path))
        source = job.get("source")
        if source is None:  # the bytes, as `python FILE` reads them: a coding cookie is honoured
            with open(path, "rb") as f:
                source = f.read()
        # dont_inherit: none of this module's __future__ flags (annotations) for the script.
        code = compile(source, path, "exec", dont_inherit=True)
        # A fresh __main__ (this worker may itself be running as __main__ under -m).
        main = types.ModuleType("__main__")
        main.__file__ = path
        main.__dict__["__builtins__"] = builtins
        sys.modules["__main__"] = main
        exec(code, main.__dict__)
        return
    argv = list(command)
    exe = os.path.basename(argv[0])
    if exe.startswith("python"):
        argv = argv[1:]
    if not argv:
        raise SystemExit("triton-lens: the run command names no script")
    if argv[0] in ("pytest", "py.test") or argv[:2] == ["-m", "pytest"]:
        import pytest

        args = argv[2:] if argv[0] == "-m" else argv[1:]
        sys.argv = ["pytest"] + args
        sys.path.insert(0, os.getcwd())
        if buffer is not None:
            buffer.serve_to_pytest()
        # pytest's cache (.pytest_cache: --lf, --ff, --sw) goes to the run's private folder, removed
        # after it: a run the user did not ask for writes nothing into their tree, and their own
        # --lf keeps their last failures. Their cache options still parse (the plugin stays on).
        if "no:cacheprovider" not in args:
            args = ["-o", "cache_dir=" + os.path.join(os.path.dirname(job["crash_file"]), "pytest-cache")] + args
        exit_code = int(pytest.main(args))
        if exit_code not in (0, 5):
            raise SystemExit(exit_code)
        return
    if argv[0] == "-m":
        sys.argv = argv[1:]
        sys.path.insert(0, os.getcwd())
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        return
    script = os.path.abspath(argv[0])
    sys.argv = [script] + argv[1:]
    sys.path.insert(0, os.path.dirname(script))
    runpy.run_path(script, run_name="__main__")


def _error_meta(e: BaseException, target: str) -> dict[str, Any]:
    """Type, message and the line in the analysed file where it was raised (innermost frame)."""
    chain, seen = [], set()
    cur: BaseException | None = e
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        chain.append(cur)
        cur = cur.__cause__ or cur.__context__
    root = chain[-1]
    for exc in chain:
        if getattr(exc, "triton_lens_would_not_compile", False):  # semantics.WouldNotCompile
            return _compile_error_meta(exc, e)
    language = _raised_by_language(root, target)
    if language is not None:
        return language | {"traceback": "".join(traceback.format_exception(e))[-8000:]}
    file = line = None
    for exc in reversed(chain):  # the deepest cause first: a kernel's own error inside InterpreterError
        for fs in reversed(traceback.extract_tb(exc.__traceback__)):
            if os.path.abspath(fs.filename) == target:
                file, line = fs.filename, fs.lineno
                break
        if line is not None:
            break
    if line is None:
        for exc in reversed(chain):
            for fs in reversed(traceback.extract_tb(exc.__traceback__)):
                if "triton" not in fs.filename and not fs.filename.startswith("<"):
                    file, line = fs.filename, fs.lineno
                    break
            if line is not None:
                break
    if line is None and isinstance(e, SyntaxError) and e.filename and os.path.abspath(e.filename) == target:
        file, line = e.filename, e.lineno  # compile() failed: no frame of the file, the error has the line
    shown = root if type(e).__name__ == "InterpreterError" else e
    msg = str(shown)
    if isinstance(shown, SystemExit):
        msg = f"the script called sys.exit({shown.code!r})"
    return {
        "kind": "exception",
        "type": type(shown).__name__,
        "message": msg,
        "file": file,
        "line": line,
        "traceback": "".join(traceback.format_exception(e))[-8000:],
    }


def _raised_by_language(root: BaseException, target: str) -> dict[str, Any] | None:
    """An exception raised in triton.language's own code (its semantic checks: a non-power-of-2
    tl.arange, a type the operation refuses) called from a kernel's line: the compiler raises it while
    it compiles the kernel (a CompilationError at that expression), so the kernel would not compile.
    Where it is: the innermost kernel frame's current expression (Python 3.11+ instruction positions;
    the interpreter compiled the kernel's dedented body, so columns move by its `def` line's indent)."""
    import linecache

    tb = root.__traceback__
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    if not frames:
        return None
    parts = os.path.normpath(frames[-1].tb_frame.f_code.co_filename).split(os.sep)
    if "triton" not in parts or "language" not in parts:  # raised elsewhere: the interpreter, numpy, ...
        return None
    for i in range(len(frames) - 1, -1, -1):
        tb = frames[i]
        code = tb.tb_frame.f_code
        if code.co_filename.startswith("<") or os.sep + "triton" + os.sep in code.co_filename:
            continue
        if os.sep + "triton_lens" + os.sep in code.co_filename:
            return None  # the tool's own code (libdevice, ...): reported as it is
        # a kernel's frame runs inside the interpreter's launch; host code calling tl.* fails on a GPU too
        outer = [f.tb_frame.f_code.co_filename for f in frames[:i]]
        if not any(f.endswith(os.path.join("runtime", "interpreter.py")) for f in outer):
            return None
        positions = getattr(code, "co_positions", None)
        line, end_line, col, end_col = tb.tb_lineno, tb.tb_lineno, -1, -1
        if positions is not None:
            pos = list(positions())[tb.tb_lasti // 2] if tb.tb_lasti >= 0 else None
            if pos is not None and pos[0] is not None:
                line, end_line = pos[0], pos[1] or pos[0]
                def_line = linecache.getline(code.co_filename, code.co_firstlineno)
                indent = len(def_line) - len(def_line.lstrip())
                col = pos[2] + indent if pos[2] is not None else -1
                end_col = pos[3] + indent if pos[3] is not None else -1
        return {
            "kind": "exception",
            "type": "CompilationError",
            "message": (
                f"this would not compile: triton's compiler raises CompilationError here "
                f"({type(root).__name__}: {root}), and the interpreter stopped at the same check"
            ),
            "file": code.co_filename,
            "line": line,
            "col": col,
            "end_line": end_line,
            "end_col": end_col,
            "would_not_compile": True,
        }
    return None


def _compile_error_meta(exc: Any, e: BaseException) -> dict[str, Any]:
    """An error the compiler raises at a kernel's expression: reported there, as the compiler's, with its
    columns (not the interpreter's traceback at the launch)."""
    return {
        "kind": "exception",
        "type": "CompilationError",
        "message": str(exc),
        "file": exc.file,
        "line": exc.line,
        "col": exc.col,
        "end_line": exc.end_line,
        "end_col": exc.end_col,
        "would_not_compile": True,
        "traceback": "".join(traceback.format_exception(e))[-8000:],
    }


def _seed_random_generators(seed: int) -> None:
    """The same file gives the same run: Python's, numpy's and torch's generators start from one seed, so
    inputs drawn without a seed (torch.randn in a test script) do not change the findings, values and
    histograms from one edit to the next. A script that seeds them itself overrides this."""
    import random

    random.seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:
        pass
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)


def _stack_on_os_exit(crash: TextIO) -> None:
    """os._exit ends the process with no exception to report: leave the stack where it was called
    in the crash file first, so the runner can say which line exited."""
    real = os._exit

    def _exit(status: int) -> NoReturn:
        try:
            faulthandler.dump_traceback(file=crash, all_threads=False)
            crash.flush()
        except Exception:  # noqa: BLE001 - exiting is what matters
            pass
        real(status)

    os._exit = _exit


def _note_kills_of_the_run(job: Job, target: str) -> None:
    """os.kill / os.killpg aimed at the run itself (the supervisor, the worker's process group, the
    worker) with a signal that ends it: leave the line and the call in a note first, so the runner
    blames the script's own call, not the memory limit or the system. (A kill from a subprocess of
    the script, or through ctypes, is still only a signal to the runner.)"""
    path = job.get("kill_note")
    if not path:
        return
    deadly = {signal.SIGKILL, signal.SIGTERM}
    me, supervisor, group = os.getpid(), os.getppid(), os.getpgid(0)

    def note(whom: str, sig: int) -> None:
        if sig not in deadly:
            return
        try:
            with open(path, "w", encoding="utf-8") as f:
                json.dump({"whom": whom, "signal": signal.Signals(sig).name, "line": _script_line(target)}, f)
        except (OSError, ValueError):
            pass

    real_kill, real_killpg = os.kill, os.killpg

    def kill(pid: int, sig: int, /) -> None:
        if pid == supervisor:
            note("supervisor", sig)
        elif pid in (0, -group):
            note("group", sig)
        elif pid == me:
            note("worker", sig)
        return real_kill(pid, sig)

    def killpg(pgid: int, sig: int, /) -> None:
        if pgid in (0, group):
            note("group", sig)
        return real_killpg(pgid, sig)

    for fake, real in ((kill, real_kill), (killpg, real_killpg)):
        fake.__name__, fake.__qualname__, fake.__doc__ = real.__name__, real.__qualname__, real.__doc__
    os.kill, os.killpg = kill, killpg


def _exit_with_parent() -> None:
    """A worker whose runner died (a language server killed outright) ends too."""
    import threading
    import time

    parent = os.getppid()

    def watch() -> None:
        while True:
            time.sleep(1.0)
            if os.getppid() != parent:
                _REAL_EXIT(1)

    threading.Thread(target=watch, daemon=True).start()


def _script_line(target: str) -> int | None:
    """The line of the target file that is running now (its innermost frame on this thread's stack)."""
    f: types.FrameType | None = sys._getframe(1)
    while f is not None:
        if os.path.abspath(f.f_code.co_filename) == target:
            return f.f_lineno
        f = f.f_back
    return None


_DESCRIPTOR_CALL = {"on": False}  # inside os.close / os.closerange / os.dup2, called by the script


def _check_after_descriptor_calls(sink: Sink) -> None:
    """os.close, os.closerange and os.dup2 check the stream after the call, so a script that closes
    it is told the line that did. (Other ways, ctypes or a C extension, are found at the next frame.)"""
    for name in ("close", "closerange", "dup2"):
        real = getattr(os, name)

        def call(*args: Any, _real: Callable[..., Any] = real, **kwargs: Any) -> Any:
            try:
                return _real(*args, **kwargs)
            finally:
                _DESCRIPTOR_CALL["on"] = True
                try:
                    sink.intact()
                finally:
                    _DESCRIPTOR_CALL["on"] = False

        call.__name__, call.__qualname__, call.__doc__ = real.__name__, real.__qualname__, real.__doc__
        setattr(os, name, call)


def _report_lost_stream(job: Job, target: str) -> Callable[[int], None]:
    """What the worker does when the script closed (or replaced) its stream: it can no longer send
    anything, so it leaves the error in a file the runner reads after the run (job["stream_note"])."""

    def lost(fd: int) -> None:
        line = _script_line(target)
        exact = _DESCRIPTOR_CALL["on"]
        where = "" if line is None else f" at line {line}" if exact else f" before line {line}"
        message = (
            f"the script closed Triton Lens's stream (its file descriptor {fd}){where}, so nothing after "
            "that was recorded: later launches are missing and no frame was written to whatever the "
            f"script opened under that number. Close only descriptors the script opened itself "
            f"(os.closerange(3, {fd}) leaves Triton Lens's alone)"
        )
        path = job.get("stream_note")
        if not path:
            return
        try:
            with open(path, "w", encoding="utf-8") as f:
                json.dump({"message": message, "file": target if line is not None else None, "line": line}, f)
        except OSError:
            pass

    return lost


class _TimeLimitAsks:
    """The runner's asks at a limit without the script's signal dispositions (issue 19).

    The runner asks for the launch in flight (SIGUSR2: the recorder's flush) and for the script's stack
    (SIGUSR1: faulthandler's dump), through the supervisor. A script may replace those handlers or
    ignore the signals, and a handler of its own must not run because the tool asked. So before it
    signals, the runner writes its ask on a socket this thread reads (a thread blocked in recv holds
    no GIL and costs the script nothing), and the thread answers:

    - b"S": both handlers are still the tool's; the runner signals as it always did (faulthandler's
      dump comes from a C signal handler, even while the main thread holds the GIL in a long C call,
      and it reaches the forked children of a launch split over processes);
    - b"F" then b"P" or b"D": the script replaced (or ignored) one of them; the runner sends no signal,
      and this thread does the work itself: it asks the recorder for the launch in flight (a flag the
      main thread reads at its next access), waits for it a moment, and writes the main thread's stack
      to the crash file, as faulthandler would, from sys._current_frames(); then b"P" (the launch in
      flight is being sent: the runner waits for its frame) or b"D" (nothing more comes).

    No answer (the thread cannot get the GIL, or the socket is gone) leaves the runner to the signals.
    Asks: b"T" (the time limit: launch in flight and stack) and b"M" (the memory limit: stack only)."""

    def __init__(self, fd: int, crash: TextIO, flush_grace_s: float) -> None:
        import socket

        self.sock = socket.socket(fileno=fd)
        self.crash = crash
        self.grace = flush_grace_s
        self.main = threading.main_thread().ident
        self.rec: Any = None
        self.on_usr2: Any = None  # the tool's SIGUSR2 handler once a recorder runs
        self.usr1 = signal.getsignal(signal.SIGUSR1)  # what Python's table says once faulthandler has it
        threading.Thread(target=self._serve, name="triton-lens-limits", daemon=True).start()

    def ours(self) -> bool:
        return signal.getsignal(signal.SIGUSR1) == self.usr1 and (
            self.on_usr2 is None or signal.getsignal(signal.SIGUSR2) is self.on_usr2
        )

    def _serve(self) -> None:
        try:
            while True:
                ask = self.sock.recv(1)
                if not ask:
                    return
                if self.ours():
                    # The script may have set SIG_DFL itself, which the table cannot tell from ours.
                    faulthandler.register(signal.SIGUSR1, file=self.crash, all_threads=False, chain=False)
                    self.sock.sendall(b"S")
                    continue
                self.sock.sendall(b"F")
                flushed = ask == b"T" and self._flush()
                self._dump_main()
                self.sock.sendall(b"P" if flushed else b"D")
        except OSError:
            return

    def _flush(self) -> bool:
        """Ask for the launch in flight; True once the main thread has taken the ask (it is sending the
        launch: the runner waits for its frame), False if there is none or it did not within the grace."""
        rec = self.rec
        if rec is None:
            return False
        rec.request_flush()
        if not getattr(rec, "_flush", False):
            return False  # no launch running
        end = time.monotonic() + self.grace
        while getattr(rec, "_flush", False) and time.monotonic() < end:
            time.sleep(0.02)
        return not getattr(rec, "_flush", False)

    def _dump_main(self) -> None:
        frame = sys._current_frames().get(self.main)  # type: ignore[arg-type]
        lines = ["Thread (main, at the runner's limit; most recent call first):"]
        while frame is not None:
            lines.append(f'  File "{frame.f_code.co_filename}", line {frame.f_lineno} in {frame.f_code.co_name}')
            frame = frame.f_back
        try:
            self.crash.write("\n".join(lines) + "\n")
            self.crash.flush()
        except (OSError, ValueError):
            pass


def main(argv: list[str]) -> int:
    """Import the heavy modules first, then wait for the job on stdin."""
    fd = int(argv[0])
    limits_fd = int(argv[1]) if len(argv) > 1 else None  # the runner's asks at a limit (_TimeLimitAsks)
    spawn_dir = prepare()
    from ..recording import stream

    stream.grow_descriptor_table()  # before the parent watch's thread
    _exit_with_parent()
    return serve(fd, limits_fd, spawn_dir)


def prepare() -> str:
    """What every run needs before its job: the heavy imports (most of a run's start), the interpreter
    enabled. Starts no thread, so that the zygote (zygote.py) can fork workers from this state.
    Returns the directory the process started in (left off sys.path before the script runs)."""
    # SIGUSR2 asks for the launch in flight at the time limit; until a recorder runs there is none, and
    # the default action (ending the process) would lose the stack dump that follows.
    signal.signal(signal.SIGUSR2, lambda *_: None)
    # The runner started us with PYTHONSAFEPATH (nothing of the start directory importable); the
    # script and the processes it starts get the environment the user has.
    if os.environ.pop("TRITON_LENS_SAFEPATH_ADDED", None):
        os.environ.pop("PYTHONSAFEPATH", None)
    # Pythons before 3.11 ignore PYTHONSAFEPATH and put the start directory first: it is a fresh
    # 0700 directory of the runner's, empty, and leaves sys.path before the script starts.
    spawn_dir = os.getcwd()
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        import torch  # noqa: F401  (kernel scripts import it; loading it is most of a run's start)
    except ImportError:
        pass
    import triton  # noqa: F401  (imported with TRITON_INTERPRET=1 already set)

    from ..interpreter import compat
    from ..recording import stream  # noqa: F401  (imported before the fork)
    from ..recording.host_writes import HostWrites  # noqa: F401  (torch's dispatch modes import sympy: 0.2 s a run)
    from ..recording.recorder import Recorder  # noqa: F401
    from ..standin import cuda_standin  # noqa: F401
    from . import viz_alias  # noqa: F401

    compat.enable_interpreter()
    return spawn_dir


def import_what_runs_import() -> None:
    """The zygote's, after prepare(): the modules a run would otherwise import after the fork, imported once
    before it. Each import there is paid by every run (an edit's first hints wait for it), and where no
    bytecode is written (PYTHONDONTWRITEBYTECODE, a read-only install) every run compiles them from source:
    0.1-0.3 s for the size check's on a 2-core machine. (A cold worker imports them as its run needs them:
    one run, one cost either way.) A run reports what it still imported late (`late_imports` in its done
    frame; tests/engine/test_worker_imports.py keeps it empty for typical runs)."""
    import numpy.ma  # noqa: F401  (np.unique imports it at its first call)
    import numpy.random  # noqa: F401  (each run seeds it)

    from ...model import lines  # noqa: F401  (an unsaved buffer's lines)
    from ..recording import parallel, progressive  # noqa: F401  (a split launch; a long launch's sample)
    from ..standin import cuda_reentry, cuda_tensors, nvidia_smi  # noqa: F401  (a CUDA script on the CPU)
    from . import spares  # noqa: F401  (serve's, before its job)

    _first_launch()


def _first_launch() -> None:
    """One recorded launch of a small kernel, its size check included, and the hooks removed after it as after
    any run: it imports what the hooks' install, a first launch and the size check import, which differs by
    release (3.9's argument specialization imports gluon, about 50 modules; 3.2's dot precisions its NVIDIA
    compiler; z3 where the size check's proofs are on). Nothing of it stays but the imports and triton's
    cache of this kernel: the recorder's call paths, learnt from a kernel in this package, are dropped."""
    try:
        import torch
        import triton
        import triton.language as tl

        from ..recording.recorder import Recorder, forget_call_paths

        @triton.jit  # type: ignore[untyped-decorator]
        def first_launch(x_ptr, n, BLOCK: tl.constexpr):  # type: ignore[no-untyped-def]
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

        x = torch.zeros(20)
        try:
            with Recorder(size_check_gpu="H100"):
                first_launch[(2,)](x, 20, BLOCK=16)
        finally:
            forget_call_paths()  # (this kernel is the package's code: no user frame of a run's)
    except Exception:  # noqa: BLE001 - no torch, or a release this launch does not suit: runs import them
        pass


# The packages whose modules a run should find imported already (the others are the script's own business).
_OURS = ("triton_lens", "triton", "numpy", "z3")


def _late_imports(before: set[str]) -> list[str]:
    return sorted(m for m in set(sys.modules) - before if m.split(".", 1)[0] in _OURS)


def _first_line(rehearse: str) -> str:
    """stdin's first line, reading no byte of a rehearsal's job ahead into sys.stdin's buffer (so that a
    select on descriptor 0 says when the job has come)."""
    head = b""
    want = rehearse.encode()
    while len(head) < len(want) and not head.endswith(b"\n"):
        b = os.read(0, len(want) - len(head))
        if not b:
            break
        head += b
    if head == want or not head or head.endswith(b"\n"):
        return head.decode()
    return (head + sys.stdin.buffer.readline()).decode()


def serve(fd: int, limits_fd: int | None, spawn_dir: str) -> int:
    """Read the job on stdin and run it, streaming frames to fd (after prepare())."""
    from ..interpreter import compat
    from ..recording import stream
    from ..recording.recorder import Recorder
    from ..standin import cuda_standin
    from . import process_tree, spares, viz_alias

    line = _first_line(spares.REHEARSE)
    if line == spares.REHEARSE:  # forked ahead of its run (spares.py): the warm-up again while it waits
        _first_launch()
        # and its heap onto huge pages, for a split's faster forks (process_tree.collapse_heap: the zygote's
        # heap, which this worker has written to since, and its own), up to the moment its job comes
        process_tree.collapse_heap(where_splits_fork_3=True, stop=lambda: bool(select.select([0], [], [], 0)[0]))
        line = sys.stdin.readline()
    if not line:
        return 0  # the runner discarded this spare worker
    imported = set(sys.modules)
    job = json.loads(line)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # the script reads an empty stdin, as under the runner's DEVNULL
    os.close(devnull)
    sys.path[:] = [p for p in sys.path if p not in ("", spawn_dir)]

    # The tool's descriptors at high numbers, the stream checked before each frame (stream.Sink): a
    # script that closes descriptors it did not open and opens a file gets a low number, not ours.
    target = os.path.abspath(job["path"])
    out = stream.Sink(stream.move_high(fd), on_lost=_report_lost_stream(job, target))
    _check_after_descriptor_calls(out)
    crash = os.fdopen(stream.move_high(os.open(job["crash_file"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)), "w")
    faulthandler.enable(file=crash, all_threads=False)
    faulthandler.register(signal.SIGUSR1, file=crash, all_threads=False, chain=False)
    asks = None
    if limits_fd is not None:
        asks = _TimeLimitAsks(stream.move_high(limits_fd), crash, float(job.get("flush_grace_s", 2.0)))
    if job.get("cwd"):
        os.chdir(job["cwd"])

    _stack_on_os_exit(crash)
    _note_kills_of_the_run(job, target)
    # No __pycache__ in the user's tree (a run in the editor happens on every edit; git, too, writes
    # nothing into a work tree unasked). Only this process: the script's own subprocesses are its own.
    sys.dont_write_bytecode = True
    buffer = _BufferLoader(target, job["source"]) if job.get("source") is not None else None
    viz_alias.install()  # `import triton_viz` without Triton-Viz installed: Triton Lens's API

    out.write_frame("hello", {"triton_version": compat.TRITON_VERSION, "pid": os.getpid()})

    def on_launch(trace: LaunchTrace) -> None:
        meta, arrays = stream.launch_to_frame(trace)
        out.write_frame("launch", meta, arrays)

    def on_sizes(trace: LaunchTrace) -> None:
        meta = {"launch": trace.index, "findings": trace.size_findings, "checked": trace.size_checked}
        if recorder.size_cache_entry is not None:  # for the runner's cache across runs (size_cache.py)
            meta["cache"] = recorder.size_cache_entry
        out.write_frame("sizes", meta)

    def on_partial(
        trace: LaunchTrace, done: int, total: int
    ) -> None:  # a launch's sample, taken by the main thread (progressive.py)
        meta, arrays = stream.launch_to_frame(trace)
        out.write_frame("partial", dict(meta, programs_done=done, programs_total=total), arrays)

    def on_progress(kernel: str, launch: int, done: int, total: int) -> None:
        out.write_frame("progress", {"kernel": kernel, "launch": launch, "done": done, "total": total})

    # CPU tensors for CUDA ones when there is no GPU (or the user asks): see cuda_standin.py.
    reason = cuda_standin.wanted(job.get("device", "auto"))
    standin = cuda_standin.CudaStandIn(reason, job.get("gpu")) if reason else None

    status = 0
    from ..recording.host_writes import HostWrites

    memory = HostWrites.start()  # which elements of torch.empty memory the script has written
    workers = int(job.get("workers") or 1)
    recorder_options: dict[str, Any] = {
        "on_launch": on_launch,
        "on_trial": on_launch,  # the same frame; the runner files it by its `autotune` mark
        "record_trials": bool(job.get("autotune_trials", True)),
        "on_progress": on_progress,
        "value_limit": int(job.get("value_limit", 1 << 20)),
        "memory": memory,
        "on_sizes": on_sizes,
        "size_check_gpu": (job.get("gpu") or "H100") if job.get("size_check", True) else None,
        "size_cache": job.get("size_cache"),
        # progressive results (progressive.py): a long launch's sample first, as a `partial` frame
        "on_partial": on_partial if job.get("progressive") else None,
    }
    if workers > 1:  # a launch's programs split over forked children (trace_engine/recording/parallel.py)
        from ..recording.parallel import ParallelRecorder

        recorder: Recorder = ParallelRecorder(workers=workers, **recorder_options)
    else:
        recorder = Recorder(**recorder_options)
    with recorder as rec, standin or contextlib.nullcontext():
        # The runner's last word before it stops the worker at the time limit: send the launch in flight.
        def on_usr2(*_: object) -> None:
            rec.request_flush()

        signal.signal(signal.SIGUSR2, on_usr2)
        if asks is not None:
            asks.rec, asks.on_usr2 = rec, on_usr2
        _seed_random_generators(int(job.get("seed", 0)))
        try:
            _run_target(job, buffer)
        except SystemExit as e:
            if e.code not in (None, 0):
                out.write_frame("error", _error_meta(e, target))
                status = 1
        except BaseException as e:  # the user's own exception: report it, keep what ran before
            meta = _error_meta(e, target)
            out.write_frame("error", standin.explain(meta) if standin else meta)
            status = 1
    report = standin.report() if standin is not None else None
    if report is not None:
        out.write_frame("standin", report)
    if memory is not None:
        memory.stop()
        # which launches shared a torch.empty buffer, and whether the host read what none of them wrote
        out.write_frame("memory", {"scratch": memory.scratch_report()})
    sys.stdout.flush()
    sys.stderr.flush()
    out.write_frame("done", {"status": status, "late_imports": _late_imports(imported)})
    out.close()
    return 0


if __name__ == "__main__":
    _REAL_EXIT(main(sys.argv[1:]))
