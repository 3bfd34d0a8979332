"""The values of `tl.dot` tiles a launch keeps for the viewer (DotTrace.tile_*): A, B and the result C
of the executions of the launch's first programs, within TILE_VALUES_LIMIT values (and a run's
launches together within recorder.RUN_TILE_VALUES; a launch that times an autotune config keeps none).

Which programs: the first program whose tl.dot this process runs keeps its tiles (up to the limit);
once another program runs a dot, the limit is divided by what the first one kept, and programs
[0, that many) keep theirs. A one-process run so keeps programs 0, 1, ... (the page's default is
program 0); a child of a split launch (parallel.py) keeps only the programs of that range it runs,
so the children together keep about what one process would. Kept are 2-D dots with floating-point
operands (an fp8 tile is held as its bits; a batched dot's tiles are not kept).
"""

from __future__ import annotations

import numpy as np

from ...model import TILE_VALUES_LIMIT


def tile_values(data: np.ndarray, dtype: str) -> np.ndarray:
    """An operand's values: the interpreter holds bfloat16 as its uint16 bits (semantics.py), whose
    values are those bits in the upper half of a float32."""
    if dtype == "bf16" and data.dtype == np.uint16:
        return (data.astype(np.uint32) << 16).view(np.float32)
    return data


class TileKeeper:
    def __init__(self, limit: int = TILE_VALUES_LIMIT):
        self.limit = limit
        self.first: int | None = None  # the first program whose tl.dot this process ran
        self.below: int | None = None  # programs [0, below) keep values, once a second program ran a dot
        self.rows: list[int] = []
        self.chunks: list[np.ndarray] = []
        self.size = 0  # values kept

    def offer(self, row: int, program: int, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> None:
        """Execution `row` of `program` computed c = acc + a @ b: keep the three tiles when it may."""
        if a.ndim != 2 or b.ndim != 2 or c.ndim != 2 or not all(x.dtype.kind == "f" for x in (a, b, c)):
            return
        if self.first is None:
            self.first = program
        elif self.below is None and program != self.first:
            self.below = max(1, self.limit // max(1, self.size))
            if self.first >= self.below:  # the first program is not among the ones kept
                self.clear()
        if self.below is not None and program >= self.below:
            return
        n = a.size + b.size + c.size
        if self.size + n > self.limit:
            return
        self.rows.append(row)
        self.chunks.append(np.concatenate([x.astype(np.float32, copy=False).ravel() for x in (a, b, c)]))
        self.size += n

    def clear(self) -> None:
        """Keep nothing of this launch (a launch made only to time an autotune config)."""
        self.rows, self.chunks, self.size = [], [], 0

    def extend(self, rows: np.ndarray, start: np.ndarray, data: np.ndarray) -> None:
        """Add tiles another process kept (a split launch's child), rows already the launch's. Copied: data is
        a view of the buffer the frame was read into, which holds the chunk's stored bytes too."""
        st = start.tolist()
        for j, r in enumerate(rows.tolist()):
            self.rows.append(int(r))
            self.chunks.append(data[st[j] : st[j + 1]].copy())
            self.size += st[j + 1] - st[j]

    def arrays(self, row0: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(tile_row, tile_start, tile_data) of the rows >= row0, numbered from row0."""
        keep = [j for j, r in enumerate(self.rows) if r >= row0]
        rows = np.asarray([self.rows[j] - row0 for j in keep], dtype=np.int32)
        sizes = np.asarray([self.chunks[j].size for j in keep], dtype=np.int64)
        start = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
        data = np.concatenate([self.chunks[j] for j in keep]) if keep else np.empty(0, dtype=np.float32)
        return rows, start, data.astype(np.float32, copy=False)
