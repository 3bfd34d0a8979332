"""Where `check` writes. `--show-output`: the scripts' own stdout and stderr, live; with several files
running at once each line is prefixed with its file, and only whole lines are written, so they never
interleave mid-line. `-o FILE`: the report, which replaces FILE only once it is complete."""

from __future__ import annotations

import os
import stat
import threading
from typing import TextIO

from ..report.paths import rel


class LiveOutput:
    def __init__(self, out: TextIO, prefix: bool):
        self.out, self.prefix = out, prefix
        self.partial: dict[tuple[str, str], str] = {}
        self.lock = threading.Lock()

    def __call__(self, target, stream: str, chunk: bytes) -> None:
        text = chunk.decode("utf-8", "replace")
        with self.lock:
            if not self.prefix:
                self.out.write(text)
                self.out.flush()
                return
            key = (target.path, stream)
            lines = (self.partial.pop(key, "") + text).split("\n")
            self.partial[key] = lines.pop()
            for line in lines:
                self.out.write(f"[{rel(target.path)}] {line}\n")
            self.out.flush()

    def flush(self) -> None:
        with self.lock:
            for (path, _), rest in self.partial.items():
                if rest:
                    self.out.write(f"[{rel(path)}] {rest}\n")
            self.partial.clear()
            self.out.flush()


def same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


class ReportFile:
    """`-o FILE`: the report goes to a temporary file in FILE's folder, renamed over FILE by `commit()`
    (os.replace: a reader sees the old report or the new one, never part of one). Until then FILE is
    untouched, so a run that fails, or is interrupted, leaves it as it was. A FILE that is a symbolic
    link is replaced where it points. A FILE that is not a regular file (/dev/stdout, a FIFO) is
    written directly: it cannot be replaced."""

    def __init__(self, path: str):
        self.path = os.path.realpath(path)
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            st = None
        self.tmp: str | None = None
        if st is not None and not stat.S_ISREG(st.st_mode):
            self.file: TextIO = open(self.path, "w", encoding="utf-8")
            return
        folder, name = os.path.split(self.path)
        # A regular file keeps its permissions; a new one gets the umask's, as open(path, "w") would.
        mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666
        for n in range(100):
            tmp = os.path.join(folder, f".{name}.{os.getpid()}.{n}.tmp")
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
            except FileExistsError:
                continue
            break
        else:
            raise FileExistsError(f"cannot create a temporary file next to {self.path}")
        if st is not None:
            os.fchmod(fd, mode)  # exactly the old file's mode, whatever the umask
        self.tmp = tmp
        self.file = os.fdopen(fd, "w", encoding="utf-8")

    def commit(self) -> None:
        self.file.close()
        if self.tmp is not None:
            os.replace(self.tmp, self.path)
            self.tmp = None

    def discard(self) -> None:
        """Close without replacing FILE (after commit: nothing to do)."""
        try:
            self.file.close()
        except OSError:
            pass
        if self.tmp is not None:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass
            self.tmp = None
