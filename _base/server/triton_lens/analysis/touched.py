"""The elements one source access touched, over all its launches: the one owner of an access's extent.

The CLI table, the inlay hint, the hover and the viewer all show "which elements of the tensor did this
line reach" (`x_ptr[0:256]`) and how many distinct ones (`unique`). Both come from here, under one rule:
the union over the launches whose tensor has the first launch's shape (launches of another shape are
counted in `unique` by their own union, since their indices mean other elements).

Pure: numpy over the recorded arrays (analysis.groups), nothing here knows a front end.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model import TensorInfo
from .groups import Group
from .index_text import MASK_LIMIT, format_mask, format_ranges, text_map, text_map_mask


@dataclass
class Touched:
    """The union of the in-bounds elements an access touched, in the first launch's tensor shape."""

    tensor: TensorInfo  # as the first launch that ran the access saw it
    mask: np.ndarray | None  # bool over the tensor (row-major); None above MASK_LIMIT elements
    indices: np.ndarray | None  # sorted distinct flat indices, when mask is None
    launches: int  # launches folded into the union (those whose tensor had the first one's shape)
    shapes_differ: bool  # some launch saw a tensor of another shape
    unique: int  # distinct elements: the union's, plus each other shape's own union

    def extent(self, name: str) -> str:
        if self.mask is not None:
            return format_mask(name, self.tensor.shape, self.mask)
        return format_ranges(name, self.tensor.shape, self.indices if self.indices is not None else np.empty(0))

    def text_map(self) -> tuple[list[str], str]:
        if self.mask is not None:
            return text_map_mask(self.tensor.shape, self.mask)
        return text_map(self.tensor.shape, self.indices if self.indices is not None else np.empty(0, np.int64))


def touched(g: Group) -> Touched | None:
    """None when the access has no tensor argument (a pointer the recorder could not attribute) or
    never ran."""
    ran = [p for p in g.parts if p.rows.size]
    if not ran:
        return None
    first = ran[0]
    arg = first.launch.sites[first.sites[0]].arg
    if arg < 0:
        return None
    tensor = first.launch.tensors[arg]
    shape = tuple(tensor.shape)
    # Per shape: a bool mask over the tensor (cheap for merged runs), or sorted indices for huge tensors.
    masks: dict[tuple[int, ...], np.ndarray] = {}
    index_parts: dict[tuple[int, ...], list[np.ndarray]] = {}
    launches = 0
    for part in ran:
        L, rows = part.launch, part.rows
        a = L.sites[part.sites[0]].arg
        if a < 0:
            continue
        t = L.tensors[a]
        s = tuple(t.shape)
        launches += s == shape
        if t.numel <= MASK_LIMIT:
            cover = L.touched.cover(rows, t.numel)
            if s in masks:
                masks[s] |= cover
            else:
                masks[s] = cover
        else:
            u = L.touched.union(rows)
            index_parts.setdefault(s, []).append(u[(u >= 0) & (u < t.numel)])
    unique = sum(int(np.count_nonzero(m)) for m in masks.values())
    indices = {s: np.unique(np.concatenate(p)) for s, p in index_parts.items()}
    unique += sum(int(u.size) for u in indices.values())
    return Touched(
        tensor=tensor,
        mask=masks.get(shape),
        indices=indices.get(shape),
        launches=launches,
        shapes_differ=len(masks) + len(indices) > 1,
        unique=unique,
    )
