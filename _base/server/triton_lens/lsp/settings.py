"""The server's settings: section "tritonLens" of `workspace/configuration`, also accepted in
initializationOptions (flat, or under "settings" / "tritonLens"), with sensible defaults."""

from __future__ import annotations

import math
import os
import sys
from dataclasses import dataclass, field, replace
from typing import Any

from ..source.plan import command_for, glob_to_regex, split_command  # noqa: F401  (re-exported)

SECTION = "tritonLens"


@dataclass(frozen=True)
class Settings:
    time_limit_s: float = 30.0
    memory_limit_mb: int = 8192
    python: str = sys.executable
    run_commands: dict[str, str | list[Any]] = field(default_factory=dict)  # glob -> command line (str) or argv (list)
    inlay_hints: bool = True
    debounce_ms: int = 100  # a next keystroke cancels a run at once: a short wait costs only CPU while typing
    device: str = "auto"  # "auto": CPU tensors stand in for CUDA ones without a GPU; "cpu": always
    stand_in_gpu: str = "H100"  # the GPU the stand-in reports (trace_engine/standin/gpu_profiles.py)
    workers: int = 0  # processes a launch's programs are split over; 0: the machine's cores (at most 16) less one
    progressive: bool = (
        True  # a long launch's sample first, shown as partial results (trace_engine/recording/progressive.py)
    )

    def merged(self, raw: Any) -> Settings:
        """These settings with the values present in `raw` (a dict of the "tritonLens" section) applied.
        Values of the wrong type are ignored, so a bad setting never stops the server."""
        d = _as_dict(raw)
        if not d:
            return self
        out = self
        t = _number(d.get("timeLimit"))
        if t is not None and t > 0:
            out = replace(out, time_limit_s=float(t))
        m = _number(d.get("memoryLimitMb"))
        if m is not None and m >= 0:
            out = replace(out, memory_limit_mb=int(m))
        py = d.get("python")
        if isinstance(py, str):
            out = replace(out, python=os.path.expanduser(py.strip()) if py.strip() else sys.executable)
        rc = _as_dict(d.get("runCommands"))
        if rc is not None and "runCommands" in d:
            out = replace(out, run_commands={str(k): v for k, v in rc.items() if isinstance(v, (str, list))})
        ih = d.get("inlayHints")
        if isinstance(ih, bool):
            out = replace(out, inlay_hints=ih)
        db = _number(d.get("debounceMs"))
        if db is not None and db >= 0:
            out = replace(out, debounce_ms=int(db))
        dev = d.get("device")
        if dev in ("auto", "cpu"):
            out = replace(out, device=dev)
        gpu = d.get("standInGpu")
        if isinstance(gpu, str) and gpu.strip():
            from ..trace_engine import profile

            try:
                out = replace(out, stand_in_gpu=profile(gpu).key)
            except ValueError:
                pass  # an unknown name keeps the one before
        pr = d.get("progressive")
        if isinstance(pr, bool):
            out = replace(out, progressive=pr)
        w = _number(d.get("workers"))
        if w is not None and w >= 0:
            out = replace(out, workers=int(w))
        return out

    def command_for(self, path: str, roots: list[str]) -> list[str] | None:
        """The run command the runCommands setting gives `path` (the rule lives in source/plan.py)."""
        return command_for(path, self.run_commands, roots)


def _as_dict(raw: Any) -> dict[str, Any] | None:
    """A JSON object of the client's (its values untyped JSON), or None."""
    if raw is None:
        return None
    if isinstance(raw, dict):
        return raw
    if hasattr(raw, "_asdict"):  # pygls hands untyped objects over as namedtuples
        return {k: _plain(v) for k, v in raw._asdict().items()}
    return None


def _plain(v: Any) -> Any:
    if hasattr(v, "_asdict"):
        return {k: _plain(x) for k, x in v._asdict().items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def _number(v: Any) -> float | None:
    """A finite number, or None: JSON's 1e400 reads as infinity, and neither it nor NaN is a limit
    (int() of either raises; NaN compares false to every bound)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, str):
        try:
            v = float(v)
        except ValueError:
            return None
    if isinstance(v, (int, float)) and math.isfinite(v):
        return v
    return None


def from_initialization_options(opts: Any) -> tuple[Settings, bool]:
    """(settings, trusted) from initializationOptions: {"trusted": bool, "settings": {...}} as the
    extension sends them, or the settings keys at the top level, or under "tritonLens".

    Trust fails closed: only `"trusted": true` lets the server run code; a client that leaves it
    out (or sends "yes", 1, null) gets an untrusted server."""
    d = _as_dict(opts) or {}
    trusted = d.get("trusted") is True
    s = Settings()
    s = s.merged(d)
    s = s.merged(_as_dict(d.get(SECTION)))
    s = s.merged(_as_dict(d.get("settings")))
    return s, trusted
