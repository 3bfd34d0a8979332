"""Where the lines of the text a run saw are now, after the edits made since.

Computed from the two texts (a line diff), so it holds for incremental and full-text edits alike.
A line whose text is unchanged maps to its new number; a line that was edited in place (a block of
changed lines replaced by one of the same length) maps to the same offset in the new block but is
marked edited; lines of a block that changed length are not mapped at all.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field


@dataclass
class LineMap:
    """0-based old line -> 0-based new line, for lines that still exist."""

    same: dict[int, int] = field(default_factory=dict)  # text unchanged
    edited: dict[int, int] = field(default_factory=dict)  # changed in place, same position in the block
    moved: bool = False  # some surviving line changed its number
    identity: bool = True  # the texts are equal

    def line(self, old: int, allow_edited: bool = True):
        """The new 0-based line of old 0-based line `old`, or None."""
        if self.identity:
            return old
        if old in self.same:
            return self.same[old]
        if allow_edited:
            return self.edited.get(old)
        return None

    @staticmethod
    def between(old_text: str, new_text: str) -> "LineMap":
        if old_text == new_text:
            return LineMap()
        a = old_text.split("\n")
        b = new_text.split("\n")
        m = LineMap(identity=False)
        sm = difflib.SequenceMatcher(None, a, b, autojunk=False)
        for tag, i1, i2, j1, j2 in sm.get_opcodes():
            if tag == "equal":
                for k in range(i2 - i1):
                    m.same[i1 + k] = j1 + k
                    if i1 != j1:
                        m.moved = True
            elif tag == "replace":
                if i2 - i1 == j2 - j1:
                    for k in range(i2 - i1):
                        m.edited[i1 + k] = j1 + k
                        if i1 != j1:
                            m.moved = True
                else:
                    # A line split or joined: the block's first line is the edited one (typing Enter
                    # in the middle of a line), the rest no longer correspond.
                    m.edited[i1] = j1
                    if i1 != j1:
                        m.moved = True
            if tag in ("insert", "delete") or (tag == "replace" and i2 - i1 != j2 - j1):
                if i2 < len(a):  # lines after the block shift
                    m.moved = True
        return m
