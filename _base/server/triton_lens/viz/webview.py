"""Where the access-map page (extension/webview) is: the same files the VS Code view loads."""

from __future__ import annotations

import os
from pathlib import Path

_HERE = Path(__file__).resolve().parent


def candidates() -> list[Path]:
    out = []
    env = os.environ.get("TRITON_LENS_WEBVIEW")
    if env:
        out.append(Path(env))
    out.append(_HERE.parent / "_webview")  # an installed package (the wheel copies the folder here)
    out.append(_HERE.parents[2] / "extension" / "webview")  # a checkout: server/triton_lens/viz -> repo
    return out


def find_webview() -> Path | None:
    for p in candidates():
        if (p / "index.html").is_file():
            return p
    return None


def require_webview() -> Path:
    p = find_webview()
    if p is None:
        raise FileNotFoundError(
            "the viewer page (extension/webview/index.html) was not found; looked in "
            + ", ".join(str(c) for c in candidates())
            + ". Set TRITON_LENS_WEBVIEW to the folder that holds it."
        )
    return p
