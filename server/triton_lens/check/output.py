"""`--show-output`: the scripts' own stdout and stderr, live. With several files running at once each
line is prefixed with its file, and only whole lines are written, so they never interleave mid-line."""

from __future__ import annotations

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
