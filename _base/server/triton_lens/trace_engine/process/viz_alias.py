"""`import triton_viz` under a run when Triton-Viz itself is not installed: Triton Lens's Triton-Viz
API (triton_lens.viz) answers it, so a Triton-Viz notebook or script (GPU MODE's Triton-Puzzles)
runs unchanged. The finder is the last on sys.meta_path: an installed Triton-Viz is found first
and used as it is.

The API is named as a string and imported only when the script imports triton_viz: the trace
engine does not depend on the viewer's package otherwise, and a script that never imports
triton_viz pays nothing.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

ALIASES = {
    "triton_viz": "triton_lens.viz",
    # Triton-Viz 0.1 notebooks call `triton_viz.interpreter.record_builder.reset()`.
    "triton_viz.interpreter": "triton_lens.viz.legacy_interpreter",
    "triton_viz.clients": "triton_lens.viz.clients",
}


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)  # the module itself: one set of launches, one config

    def exec_module(self, module: ModuleType) -> None:
        pass  # already executed by its own import


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if name not in ALIASES:
            return None
        return importlib.util.spec_from_loader(name, _Alias(ALIASES[name]))


def install() -> None:
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())
