"""Output that never blocks: `triton-lens view` writes its messages and the server's logs (werkzeug's
"code 400, message Bad request syntax", Flask's tracebacks) through these, so a stdout or stderr that
is a pipe nobody reads (a full pipe buffer) drops lines instead of stopping the process in a write,
where Ctrl-C could no longer end it (a request thread blocked in a log line holds the stream's lock;
the main thread's "viewer stopped" blocks behind it).
"""

from __future__ import annotations

import contextlib
import io
import os
import select
import sys
import threading
from collections.abc import Iterator
from typing import TextIO

_CHUNK = getattr(select, "PIPE_BUF", 512)  # a pipe that polls writable takes this much without blocking
_GRACE_MS = 50  # how long a write waits for room (a slow reader), unless the last one found none
# One lock for every writer: stdout and stderr may be the same pipe (2>&1), and poll-then-write only
# holds when nothing else in the process writes between the two.
_lock = threading.Lock()


class DroppingWriter(io.RawIOBase):
    """Writes to a file descriptor what it can take without blocking; the rest is dropped (counted
    in `dropped`). A regular file or a terminal takes everything, a pipe what fits in its buffer."""

    def __init__(self, fd: int):
        super().__init__()
        self._fd = fd
        self._poll = select.poll()
        self._poll.register(fd, select.POLLOUT)
        self._stalled = False
        self.dropped = 0

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        try:
            return os.isatty(self._fd)
        except OSError:
            return False

    def write(self, b) -> int:  # type: ignore[override]
        data = memoryview(b).cast("B")
        n = len(data)
        if not _lock.acquire(timeout=_GRACE_MS / 1000):  # another write waits for room: no queue behind it
            self.dropped += n
            return n
        try:
            pos = 0
            while pos < n and self._room():
                try:
                    pos += os.write(self._fd, data[pos : pos + _CHUNK])
                except OSError:  # EAGAIN, a closed reader (EPIPE), a closed descriptor
                    break
            self.dropped += n - pos
        finally:
            _lock.release()
        return n

    def _room(self) -> bool:
        try:
            ready = self._poll.poll(0 if self._stalled else _GRACE_MS)
        except OSError:
            ready = []
        ok = any(ev & select.POLLOUT and not ev & (select.POLLERR | select.POLLNVAL) for _, ev in ready)
        self._stalled = not ok
        return ok


def never_blocking(stream: TextIO) -> TextIO | None:
    """A text stream on `stream`'s file descriptor that drops what the descriptor cannot take now,
    or None when `stream` has no descriptor (pytest's capture, a StringIO) or cannot be polled."""
    try:
        fd = stream.fileno()
        raw = DroppingWriter(fd)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None
    return io.TextIOWrapper(  # type: ignore[type-var]
        raw,
        encoding=getattr(stream, "encoding", None) or "utf-8",
        errors=getattr(stream, "errors", None) or "backslashreplace",
        line_buffering=True,
        write_through=True,
    )


@contextlib.contextmanager
def never_blocking_stdio() -> Iterator[None]:
    """sys.stdout and sys.stderr never block while inside (see never_blocking); restored after."""
    saved = sys.stdout, sys.stderr
    swapped = []
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            continue
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
        wrapped = never_blocking(stream)
        if wrapped is not None:
            setattr(sys, name, wrapped)
            swapped.append(wrapped)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
        for w in swapped:
            with contextlib.suppress(OSError, ValueError):
                w.flush()


def say(text: str, stream: TextIO | None = None) -> None:
    """Print a line to `stream` (sys.stderr) without blocking on it (what does not fit is dropped)."""
    stream = sys.stderr if stream is None else stream
    if stream is None:
        return
    out = never_blocking(stream)
    try:
        if out is None:
            print(text, file=stream, flush=True)
        else:  # not through `stream`: a thread blocked in a write to it holds its lock
            out.write(text + "\n")
    except (OSError, ValueError):
        pass
