"""The server's own copy of each open document, kept as VS Code keeps it: lines end at "\\r\\n",
"\\n" or "\\r" only (pygls' copy splits with str.splitlines, so a form feed or U+2028 makes it
apply incremental edits at the wrong place), positions in the negotiated encoding.
"""

from __future__ import annotations

from bisect import bisect_right

from lsprotocol import types as lsp

from ..model.lines import line_starts
from . import text as text_units


def _offset_in_line(line: str, units: int) -> int:
    """Index into `line` of the position `units` editor units from its start (clamped to the line)."""
    if units <= 0:
        return 0
    enc = text_units.ENCODING
    if line.isascii() or enc == "utf-32":
        return min(units, len(line))
    n = 0
    for i, ch in enumerate(line):
        n += len(ch.encode("utf-8")) if enc == "utf-8" else (2 if ord(ch) > 0xFFFF else 1)
        if n > units:
            return i
        if n == units:
            return i + 1
    return len(line)


class DocText:
    """Text plus the offsets of its line starts, updated by LSP content changes."""

    def __init__(self, text: str):
        self.text = text
        self._starts = line_starts(text)

    def offset(self, pos: lsp.Position) -> int:
        starts = self._starts
        if pos.line >= len(starts):
            return len(self.text)
        if pos.line < 0:
            return 0
        lo = starts[pos.line]
        hi = starts[pos.line + 1] if pos.line + 1 < len(starts) else len(self.text)
        line = self.text[lo:hi]
        body = line.rstrip("\r\n") if line.endswith(("\n", "\r")) else line
        return lo + _offset_in_line(body, pos.character)

    def apply(self, change: lsp.TextDocumentContentChangeEvent) -> None:
        rng = getattr(change, "range", None)
        if rng is None:  # a whole-text change
            self.text = change.text
        else:
            a, b = self.offset(rng.start), self.offset(rng.end)
            if b < a:
                a, b = b, a
            self.text = self.text[:a] + change.text + self.text[b:]
        self._starts = line_starts(self.text)

    def line_of(self, offset: int) -> int:
        return bisect_right(self._starts, offset) - 1
