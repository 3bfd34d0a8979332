"""Lines as VS Code and the Python compiler count them: a line ends at "\\r\\n", "\\n" or a lone
"\\r", and at nothing else. (`str.splitlines` also breaks at form feeds, "\\x0b", "\\x1c"-"\\x1e",
"\\x85", U+2028 and U+2029: one of those above a kernel would move every result by a line.)
"""

from __future__ import annotations

import re

_EOL = re.compile(r"\r\n|\n|\r")


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """The lines of text; like `str.split("\\n")` (a final empty line when text ends with a break)."""
    if keepends:
        out, start = [], 0
        for m in _EOL.finditer(text):
            out.append(text[start : m.end()])
            start = m.end()
        if start < len(text):
            out.append(text[start:])
        return out
    return _EOL.split(text)


def line_starts(text: str) -> list[int]:
    """Offset of the first character of each line (line 0 first)."""
    return [0] + [m.end() for m in _EOL.finditer(text)]
