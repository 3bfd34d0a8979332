"""Small wording helpers shared by the finding messages."""
from __future__ import annotations

EXAMPLES = 3  # examples (programs, elements, offsets) a message lists


def plural(n: int, word: str) -> str:
    """"1 lane", "3 lanes"."""
    return f"{n} {word}" + ("" if n == 1 else "s")
