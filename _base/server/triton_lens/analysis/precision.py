"""Where a kernel's numbers are not IEEE float32's: tl.dot of float32 tiles runs in TF32 on an NVIDIA
GPU (input_precision "tf32", Triton's default), and so does the run (semantics.py, tf32.py). The
recorder measured, per call, how far the TF32 product is from the IEEE float32 one; this says so at the
tl.dot, with the fix, for the author whose check against torch's float32 matmul fails by that much.
Pure functions over the recorded arrays."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..model import Finding, LaunchTrace
from .text import plural


def tf32_findings(launches: list[LaunchTrace]) -> list[Finding]:
    """One information finding per tl.dot whose float32 operands run in TF32 (on the GPU and here)."""
    by_site: dict[tuple[str, int, int], dict[str, Any]] = {}
    for L in launches:
        d = L.dots
        if not len(d) or d.tf32_dev.size != len(d):
            continue
        for i, s in enumerate(d.sites):
            if not s.runs_in_tf32:
                continue
            rows = np.flatnonzero(d.site == i)
            if not rows.size:
                continue
            g = by_site.setdefault((s.file, s.line, s.col), {"site": s, "calls": 0, "dev": 0.0, "mag": 0.0, "per": 0})
            g["calls"] += int(rows.size)
            g["dev"] = max(g["dev"], float(d.tf32_dev[rows].max()))
            g["mag"] = max(g["mag"], float(d.magnitude[rows].max()))
            programs = np.unique(d.program[rows]).size
            g["per"] = max(g["per"], -(-int(rows.size) // max(1, int(programs))))
    out = []
    for g in by_site.values():
        s = g["site"]
        notes = [f"{g['dev'] / g['mag']:.1e} of the largest |product|, {g['mag']:.3g}"] if g["mag"] > 0 else []
        if g["per"] > 1:
            notes.append(f"{plural(g['per'], 'call')} per program")
        rel = f" ({'; '.join(notes)})" if notes else ""
        out.append(
            Finding.at(
                s,
                kind="tf32",
                severity="information",
                message=(
                    "this tl.dot of float32 tiles runs in TF32, as compiled for an NVIDIA GPU (Triton's "
                    'default input_precision="tf32" keeps 10 of 23 mantissa bits), and so do this run\'s '
                    f"values: its products differ from IEEE float32 ones by up to {g['dev']:.2g} in a call"
                    f"{rel}, so a check against torch's float32 matmul needs that tolerance. Pass "
                    'input_precision="ieee" (or set TRITON_F32_DEFAULT=ieee) for IEEE products, or "tf32x3" '
                    "for nearly IEEE at about 3x the cost"
                ),
            )
        )
    return out
