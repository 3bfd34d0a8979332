"""Where the lines of the text a run saw are now, after the edits made since.

Computed from the two texts (a line diff), so it holds for incremental and full-text edits alike.
A line whose text is unchanged maps to its new number; a line that was edited in place (a block of
changed lines replaced by one of the same length) maps to the same offset in the new block but is
marked edited; lines of a block that changed length are not mapped at all.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..model.lines import split_lines

_MAX_DEPTH = 4  # recursion into the gaps between anchors: bounds the work at O(depth · n log n)


def _lis(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of pairs (sorted by their first item) increasing in the second: n log n."""
    from bisect import bisect_left

    tails: list[int] = []  # tails[k]: the smallest second item ending an increasing run of length k+1
    tail_at: list[int] = []
    prev = [-1] * len(pairs)
    for idx, (_, j) in enumerate(pairs):
        k = bisect_left(tails, j)
        if k == len(tails):
            tails.append(j)
            tail_at.append(idx)
        else:
            tails[k] = j
            tail_at[k] = idx
        prev[idx] = tail_at[k - 1] if k else -1
    out = []
    idx = tail_at[-1] if tail_at else -1
    while idx >= 0:
        out.append(pairs[idx])
        idx = prev[idx]
    return out[::-1]


def _opcodes(a: Sequence[str], b: Sequence[str]) -> list[tuple[str, int, int, int, int]]:
    """difflib-style opcodes from a patience diff: common ends first, then the lines that occur
    once on each side as anchors (their longest increasing run), recursing into the gaps. Each
    level is linear but for the n log n run; repeated lines (blank lines, `)`) cannot make it
    quadratic as difflib's matcher is on a file of 20k lines."""
    ops: list[tuple[str, int, int, int, int]] = []

    def block(i1: int, i2: int, j1: int, j2: int, depth: int) -> None:
        p = 0
        while i1 + p < i2 and j1 + p < j2 and a[i1 + p] == b[j1 + p]:
            p += 1
        if p:
            ops.append(("equal", i1, i1 + p, j1, j1 + p))
            i1, j1 = i1 + p, j1 + p
        q = 0
        while i1 < i2 - q and j1 < j2 - q and a[i2 - 1 - q] == b[j2 - 1 - q]:
            q += 1
        tail = ("equal", i2 - q, i2, j2 - q, j2) if q else None
        i2, j2 = i2 - q, j2 - q
        if i1 == i2 and j1 == j2:
            pass
        elif i1 == i2:
            ops.append(("insert", i1, i2, j1, j2))
        elif j1 == j2:
            ops.append(("delete", i1, i2, j1, j2))
        else:
            anchors = []
            if depth < _MAX_DEPTH:
                ca = Counter(a[i] for i in range(i1, i2))
                cb = Counter(b[j] for j in range(j1, j2))
                where_b = {b[j]: j for j in range(j1, j2) if cb[b[j]] == 1 and ca.get(b[j]) == 1}
                anchors = _lis([(i, where_b[a[i]]) for i in range(i1, i2) if a[i] in where_b])
            if not anchors:
                ops.append(("replace", i1, i2, j1, j2))
            else:
                pi, pj = i1, j1
                for ai, bj in anchors:
                    block(pi, ai, pj, bj, depth + 1)
                    ops.append(("equal", ai, ai + 1, bj, bj + 1))
                    pi, pj = ai + 1, bj + 1
                block(pi, i2, pj, j2, depth + 1)
        if tail:
            ops.append(tail)

    block(0, len(a), 0, len(b), 0)
    return ops


@dataclass
class LineMap:
    """0-based old line -> 0-based new line, for lines that still exist."""

    same: dict[int, int] = field(default_factory=dict)  # text unchanged
    edited: dict[int, int] = field(default_factory=dict)  # changed in place, same position in the block
    moved: bool = False  # some surviving line changed its number
    identity: bool = True  # the texts are equal

    def line(self, old: int, allow_edited: bool = True) -> int | None:
        """The new 0-based line of old 0-based line `old`, or None."""
        if self.identity:
            return old
        if old in self.same:
            return self.same[old]
        if allow_edited:
            return self.edited.get(old)
        return None

    @staticmethod
    def between(old_text: str, new_text: str) -> LineMap:
        if old_text == new_text:
            return LineMap()
        return LineMap.of_lines(split_lines(old_text), split_lines(new_text))

    @staticmethod
    def of_lines(a: Sequence[str], b: Sequence[str]) -> LineMap:
        m = LineMap(identity=False)
        for tag, i1, i2, j1, j2 in _opcodes(a, b):
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
