"""Progressive results: a launch's sample of programs, run first in a forked child, for a partial snapshot.

The worker runs every launch as it always does, in the interpreter's order (so the complete result is
the one a run without this gives, by construction). Beside it, for a launch that will take a while, a
forked child runs only a sample of its programs (the ones that decide most findings: the first and the
last along each grid axis, the corners, and programs spread evenly in between) and sends what it
recorded up to the parent, which hands it on (`Recorder.on_partial`) while its own loop goes on:

- The parent times its first programs (`PROBE_SECONDS`, as the parallel split does); a launch of fewer
  than `MIN_PROGRAMS` programs, or whose estimated time is under `MIN_SECONDS`, gets no sample.
- Otherwise it forks at the next program boundary. The fork has the launch's memory as it is then (the
  previous launches complete, this launch's first programs done): its sample programs run on a private
  copy of it, in a schedule a GPU may also choose (these programs first). Their rows are exact: real
  lanes of real programs. The child's own loop visits the sample programs (set_grid_idx remapped); it
  never returns to the script, never prints (its stdout and stderr are /dev/null: the parent prints
  every program's output) and never touches the parent's memory.
- The child writes one `partial` frame (stream.py) into an unlinked temporary file the two share, says so
  with one byte on a pipe and exits (a pipe that ends empty: it sends nothing). The parent's own loop
  looks at the pipe at each program boundary, and at its loads and stores every POLL_SECONDS (a program
  of a matmul takes 20-30 ms: waiting for its end was half of that, on average, added to the first
  hints; and a forked copy of the worker takes 5-10 ms to exit, so the byte, not the exit, says the
  frame is there), and then calls `on_partial(trace, done, total)` from its main thread (between two
  frames, as every frame is written). (A relay thread was tried: the interpreter's main thread holds the
  GIL so much that the thread read the frame seconds late, often after the launch.) At the launch's end
  the parent takes a partial that is ready, ends the child if it still runs and reaps it, so a partial
  always comes before its launch, or not at all (a sample slower than the launch, or one that raised).
"""

from __future__ import annotations

import gc
import math
import os
import posix
import signal
import sys
import tempfile
import time
from typing import TYPE_CHECKING, BinaryIO

from . import stream

if TYPE_CHECKING:  # (recorder.py imports this module)
    from .recorder import Recorder, _Launch

# A launch of fewer programs than this gets no sample (it is quick enough to wait for).
MIN_PROGRAMS = 64
# Nor one the probe estimates under this many seconds in all.
MIN_SECONDS = 0.5
# The parent runs programs itself for at least this long before it estimates the launch's time.
PROBE_SECONDS = 0.01
# The sample: this fraction of the programs, at least SAMPLE_MIN and at most SAMPLE_MAX (plus the corners).
SAMPLE_FRACTION = 0.02
SAMPLE_MIN = 16
SAMPLE_MAX = 48
# How often the parent, inside a program, looks whether the sample child has exited (a waitpid).
POLL_SECONDS = 0.002
# ... and at most this many seconds of the launch's programs (as the probe times them), and at most this share
# of them: the sample runs beside the launch (on a 2-core machine, on the core the launch leaves), and its
# result is worth having only well before the launch's (bench/lsp_latency.py: first / complete <= 0.2).
SAMPLE_SECONDS = 0.6
SAMPLE_SHARE = 0.05


def _env_number(name: str, default: float) -> float:
    try:
        return float(os.environ[name])
    except (KeyError, ValueError):
        return default


def sample_size(n: int, per_program: float, fraction: float, lo: int, hi: int, seconds: float) -> int:
    """How many programs the evenly spread part of a launch's sample has: `fraction` of them, at least
    `lo` and at most `hi`, and never more than SAMPLE_SHARE of the launch or `seconds` of work (the
    partial result must come long before the complete one); at least 2 (the first and the last)."""
    want = max(lo, min(hi, math.ceil(n * fraction)))
    cap = int(n * SAMPLE_SHARE)
    if per_program > 0:
        cap = min(cap, int(seconds / per_program))
    return max(2, min(want, cap, n))


def sample_positions(grid: tuple[int, int, int], want: int) -> list[int]:
    """The sample's programs as positions in the interpreter's loop order (x outermost, z innermost),
    sorted: every corner of the grid (first and last along each axis), the first and last program along
    each axis with the others in their middle, and `want` programs spread evenly over the loop (the
    first and the last among them)."""
    gx, gy, gz = (max(1, int(g)) for g in grid)
    n = gx * gy * gz
    want = min(n, want)
    chosen: set[int] = set()

    def pos(x: int, y: int, z: int) -> int:
        return (x * gy + y) * gz + z

    for x in {0, gx - 1}:
        for y in {0, gy - 1}:
            for z in {0, gz - 1}:
                chosen.add(pos(x, y, z))
    mx, my, mz = gx // 2, gy // 2, gz // 2
    for x in {0, gx - 1}:
        chosen.add(pos(x, my, mz))
    for y in {0, gy - 1}:
        chosen.add(pos(mx, y, mz))
    for z in {0, gz - 1}:
        chosen.add(pos(mx, my, z))
    if want > 1:
        for k in range(want):
            chosen.add(round(k * (n - 1) / (want - 1)))
    return sorted(p for p in chosen if 0 <= p < n)


def _coords(p: int, grid: tuple[int, int, int]) -> tuple[int, int, int]:
    _, gy, gz = grid
    return p // (gy * gz), (p // gz) % gy, p % gz


WAIT, OFF, FORKED, CHILD = "wait", "off", "forked", "child"


class Sampler:
    """One launch's sample, driven by the recorder's per-program hook (`before_program`)."""

    def __init__(self, rec: Recorder, launch: _Launch, grid: tuple[int, int, int]):
        self.rec, self.L, self.grid = rec, launch, grid
        self.n = grid[0] * grid[1] * grid[2]
        self.i = 0  # loop positions reached (in the parent; in the child, positions of its own loop)
        self.t0 = 0.0
        self.phase = WAIT
        self.pid = 0
        self.file: BinaryIO | None = None  # the unlinked file the child's frame is written into
        self.ready = -1  # the pipe's end the child writes one byte to once its frame is in the file
        self.sent = -1  # (parent) the other end, read without blocking
        self.rest: list[int] = []  # (child) the sample programs still to run, in order
        self.start = 0  # (child) the loop position at which it took over
        self.polled = 0.0  # (parent) when it last looked for the child's exit

    # -- both -------------------------------------------------------------------------------------
    def before_program(self, x: int, y: int, z: int) -> tuple[int, int, int] | None:
        done = self.i
        self.i = done + 1
        if self.phase is CHILD:
            j = done - self.start
            if j >= len(self.rest):
                self.child_send()  # does not return
            return _coords(self.rest[j], self.grid)
        if self.phase is FORKED:
            self._take_if_done()
            return None
        if self.phase is not WAIT:
            return None
        now = time.perf_counter()
        if done == 0:
            self.t0 = now
            return None
        elapsed = now - self.t0
        if elapsed < self.rec.partial_probe_seconds:
            return None
        if elapsed / done * self.n < self.rec.partial_min_seconds:
            self.phase = OFF
            return None
        return self._fork(done)

    # -- parent -----------------------------------------------------------------------------------
    def _fork(self, done: int) -> tuple[int, int, int] | None:
        rec = self.rec
        per = (time.perf_counter() - self.t0) / done
        want = sample_size(
            self.n, per, rec.sample_fraction, int(rec.sample_min), int(rec.sample_max), rec.sample_seconds
        )
        rest = [p for p in sample_positions(self.grid, want) if p >= done]
        if not rest:
            self.phase = OFF
            return None
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - the script's own streams
            pass
        gc.freeze()  # the child's collections then leave the inherited heap's pages alone
        try:
            self.file = tempfile.TemporaryFile(prefix="triton-lens-partial-")  # (unlinked at once)
            self.sent, self.ready = os.pipe()  # (close-on-exec: no process the script starts has them)
            os.set_blocking(self.sent, False)
            pid = os.fork()
        except OSError:  # out of processes, memory or disk: no partial, the launch goes on
            gc.unfreeze()
            self._close_file()
            self.phase = OFF
            return None
        if pid == 0:
            return self._become_child(done, rest)
        gc.unfreeze()
        os.close(self.ready)  # (the child's alone: its exit ends the pipe)
        self.ready = -1
        self.pid, self.phase = pid, FORKED
        return None

    def poll(self) -> None:
        """(parent, at a load or store) `_take_if_done`, at most every POLL_SECONDS."""
        now = time.perf_counter()
        if now - self.polled >= POLL_SECONDS:
            self.polled = now
            self._take_if_done()

    def _take_if_done(self) -> None:
        """(parent) When the child has written its frame, or ended without one: the frame handed to on_partial."""
        try:
            said = os.read(self.sent, 1)
        except BlockingIOError:
            return  # still running
        except OSError:
            said = b""
        self.phase = OFF
        try:
            if said == b"1" and self.rec.on_partial is not None:
                assert self.file is not None  # (made before the fork)
                self.file.seek(0)
                frame = stream.read_frame(self.file)
                if frame is not None and frame[0] == "partial":
                    _, meta, arrays = frame
                    trace = stream.launch_from_frame(meta, arrays)
                    self.rec.on_partial(trace, int(meta["programs_done"]), int(meta["programs_total"]))
        except Exception:  # noqa: BLE001 - a partial is a nicety; the launch itself follows
            pass
        finally:
            self._close_file()

    def _close_file(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None
        for fd in (self.sent, self.ready):
            if fd >= 0:
                os.close(fd)
        self.sent = self.ready = -1

    def end(self) -> None:
        """At the parent's launch end, before the launch is sent: a partial that is ready handed on, the
        child ended and reaped (it exits as soon as it has sent: by now, as a rule, it has)."""
        if self.phase is FORKED:
            self._take_if_done()
        if self.phase is FORKED:
            self.phase = OFF
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
            self._close_file()
        if self.pid:
            try:
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
            self.pid = 0

    # -- child ------------------------------------------------------------------------------------
    def _become_child(self, done: int, rest: list[int]) -> tuple[int, int, int]:
        try:  # Linux: ends with the worker
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except Exception:  # noqa: BLE001
            pass
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
        except ValueError:  # not the main thread
            pass
        os.close(self.sent)
        self.sent = -1
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)  # the parent prints every program's output, this one's too
        os.dup2(null, 2)
        os.close(null)
        self.phase, self.start, self.rest, self.i = CHILD, done, rest, done + 1
        self.rec.begin_sample_child()
        return _coords(rest[0], self.grid)

    def child_send(self) -> None:
        """Send the sample's trace to the parent and exit (never returns)."""
        try:
            L = self.L
            trace = L.finish(False, 0)  # no values: a snapshot's hints and findings need none
            meta, arrays = stream.launch_to_frame(trace)
            meta["programs_done"] = self.start + len(self.rest)
            meta["programs_total"] = self.n
            assert self.file is not None  # (made before the fork)
            stream.write_frame(self.file, "partial", meta, arrays)  # (flushed: the parent reads it once told)
            self.file.close()
            os.write(self.ready, b"1")
        finally:
            posix._exit(0)

    def child_failed(self) -> None:
        """A sample program raised (or the loop ended some other way): nothing to send."""
        posix._exit(0)


def options(
    min_programs: float | None = None,
    min_seconds: float | None = None,
    probe_seconds: float | None = None,
) -> dict[str, float]:
    """The thresholds, the environment able to lower them (the tests and the coverage benchmark sample
    even the corpus's small launches)."""

    def pick(v: float | None, env: str, default: float) -> float:
        return float(v) if v is not None else _env_number(env, default)

    return {
        "partial_min_programs": pick(min_programs, "TRITON_LENS_PARTIAL_MIN_PROGRAMS", MIN_PROGRAMS),
        "partial_min_seconds": pick(min_seconds, "TRITON_LENS_PARTIAL_MIN_SECONDS", MIN_SECONDS),
        "partial_probe_seconds": pick(probe_seconds, "TRITON_LENS_PARTIAL_PROBE_SECONDS", PROBE_SECONDS),
        "sample_fraction": _env_number("TRITON_LENS_SAMPLE_FRACTION", SAMPLE_FRACTION),
        "sample_min": _env_number("TRITON_LENS_SAMPLE_MIN", SAMPLE_MIN),
        "sample_max": _env_number("TRITON_LENS_SAMPLE_MAX", SAMPLE_MAX),
        "sample_seconds": _env_number("TRITON_LENS_SAMPLE_SECONDS", SAMPLE_SECONDS),
    }
