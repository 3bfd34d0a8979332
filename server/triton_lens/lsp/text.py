"""Lines of a text as the editor counts them: UTF-16 columns, trimmed line ranges, file URIs."""
from __future__ import annotations

import os
from typing import Optional
from urllib.parse import unquote, urlparse

from lsprotocol import types as lsp
from pygls import uris


class Lines:
    def __init__(self, text_lines: list[str]):
        self.text_lines = text_lines

    @staticmethod
    def of(text_lines: list[str]) -> "Lines":
        return Lines(text_lines)

    @staticmethod
    def from_text(text: str) -> "Lines":
        return Lines(text.split("\n"))

    def get(self, l0: int) -> str:
        return self.text_lines[l0].rstrip("\r") if 0 <= l0 < len(self.text_lines) else ""

    def utf16_col(self, l0: int, byte_col: int) -> int:
        """A Python (UTF-8 byte) column as the editor's UTF-16 column."""
        line = self.get(l0)
        if line.isascii():
            return max(byte_col, 0)
        prefix = line.encode("utf-8")[:max(byte_col, 0)].decode("utf-8", "ignore")
        return len(prefix.encode("utf-16-le")) // 2

    def length16(self, l0: int) -> int:
        line = self.get(l0)
        return len(line) if line.isascii() else len(line.encode("utf-16-le")) // 2

    def trimmed(self, l0: int) -> lsp.Range:
        """The line without its leading and trailing white space."""
        line = self.get(l0)
        start = len(line) - len(line.lstrip())
        end = len(line.rstrip())
        if not line.isascii():
            start = len(line[:start].encode("utf-16-le")) // 2
            end = len(line[:end].encode("utf-16-le")) // 2
        if end <= start:
            end = start + 1 if line else start
        return lsp.Range(lsp.Position(max(l0, 0), start), lsp.Position(max(l0, 0), end))


def uri_of(path: str) -> str:
    return uris.from_fs_path(os.path.abspath(path)) or f"file://{path}"


def path_of(uri: str) -> Optional[str]:
    p = uris.to_fs_path(uri)
    if p is None and uri.startswith("file:"):
        p = unquote(urlparse(uri).path)
    return p
