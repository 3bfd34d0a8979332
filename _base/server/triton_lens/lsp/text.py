"""Lines of a text as the editor counts them (the negotiated position encoding: UTF-16 by default),
trimmed line ranges, file URIs."""

from __future__ import annotations

import os
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pygls import uris

from ..model.lines import split_lines

# One client per server process: set from the initialize exchange ("utf-8", "utf-16" or "utf-32").
ENCODING = "utf-16"


def set_encoding(encoding: lsp.PositionEncodingKind | str | None) -> None:
    global ENCODING
    value = getattr(encoding, "value", encoding)
    ENCODING = value if value in ("utf-8", "utf-16", "utf-32") else "utf-16"


def _units(s: str) -> int:
    """Length of `s` in the editor's position units."""
    if s.isascii() or ENCODING == "utf-32":
        return len(s)
    if ENCODING == "utf-8":
        return len(s.encode("utf-8"))
    return len(s.encode("utf-16-le")) // 2


class Lines:
    def __init__(self, text_lines: list[str]):
        self.text_lines = text_lines

    @staticmethod
    def of(text_lines: list[str]) -> Lines:
        return Lines(text_lines)

    @staticmethod
    def from_text(text: str) -> Lines:
        return Lines(split_lines(text))  # "\r\n", "\n", "\r" only, as the editor counts lines

    def get(self, l0: int) -> str:
        return self.text_lines[l0] if 0 <= l0 < len(self.text_lines) else ""

    def utf16_col(self, l0: int, byte_col: int) -> int:
        """A Python column (UTF-8 bytes, as in code positions) in the editor's units."""
        line = self.get(l0)
        if line.isascii() or ENCODING == "utf-8":
            return max(byte_col, 0)
        return _units(line.encode("utf-8")[: max(byte_col, 0)].decode("utf-8", "ignore"))

    def length16(self, l0: int) -> int:
        """The line's length in the editor's units."""
        return _units(self.get(l0))

    def trimmed(self, l0: int) -> lsp.Range:
        """The line without its leading and trailing white space."""
        line = self.get(l0)
        start = _units(line[: len(line) - len(line.lstrip())])
        end = _units(line.rstrip())
        if end <= start:
            end = start + 1 if line else start
        return lsp.Range(lsp.Position(max(l0, 0), start), lsp.Position(max(l0, 0), end))


def uri_of(path: str) -> str:
    return uris.from_fs_path(os.path.abspath(path)) or f"file://{path}"


def path_of(uri: str) -> str | None:
    p = uris.to_fs_path(uri)
    if p is None and uri.startswith("file:"):
        p = unquote(urlparse(uri).path)
    return p
