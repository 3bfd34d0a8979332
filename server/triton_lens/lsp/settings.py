"""The server's settings: section "tritonLens" of `workspace/configuration`, also accepted in
initializationOptions (flat, or under "settings" / "tritonLens"), with sensible defaults."""
from __future__ import annotations

import os
import re
import shlex
import sys
from dataclasses import dataclass, field, replace
from typing import Any, Optional

SECTION = "tritonLens"


@dataclass(frozen=True)
class Settings:
    time_limit_s: float = 30.0
    memory_limit_mb: int = 8192
    python: str = sys.executable
    run_commands: dict = field(default_factory=dict)  # glob -> command line (str) or argv (list)
    inlay_hints: bool = True
    debounce_ms: int = 400

    def merged(self, raw: Any) -> "Settings":
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
        return out

    def command_for(self, path: str, roots: list[str]) -> Optional[list[str]]:
        """The run command the runCommands setting gives `path`: the first glob that matches it,
        relative to a workspace root or as an absolute path."""
        candidates = [path.replace(os.sep, "/")]
        for root in roots:
            try:
                rel = os.path.relpath(path, root)
            except ValueError:
                continue
            if not rel.startswith(".."):
                candidates.append(rel.replace(os.sep, "/"))
        for glob, command in self.run_commands.items():
            rx = glob_to_regex(glob)
            if any(rx.fullmatch(c) for c in candidates):
                return split_command(command)
        return None


def _as_dict(raw: Any) -> Optional[dict]:
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


def _number(v: Any) -> Optional[float]:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def split_command(command: Any) -> Optional[list[str]]:
    if isinstance(command, list):
        argv = [str(a) for a in command]
    elif isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError:
            argv = command.split()
    else:
        return None
    return argv or None


def _translate(glob: str) -> str:
    out = ""
    i = 0
    while i < len(glob):
        ch = glob[i]
        if ch == "*":
            if glob[i + 1:i + 2] == "*":
                if glob[i + 2:i + 3] == "/":
                    out += "(?:.*/)?"
                    i += 3
                else:
                    out += ".*"
                    i += 2
                continue
            out += "[^/]*"
        elif ch == "?":
            out += "[^/]"
        elif ch == "{" and glob.find("}", i) > 0:
            j = glob.find("}", i)
            out += "(?:" + "|".join(_translate(p) for p in glob[i + 1:j].split(",")) + ")"
            i = j
        else:
            out += re.escape(ch)
        i += 1
    return out


def glob_to_regex(glob: str) -> re.Pattern:
    """`**` any number of path parts, `*` and `?` within one part, `{a,b}` alternatives. A glob with
    no slash matches a file name in any folder (`*.py`), like VS Code's files.exclude."""
    out = _translate(glob)
    if "/" not in glob:
        out = "(?:.*/)?" + out
    return re.compile(out)


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
