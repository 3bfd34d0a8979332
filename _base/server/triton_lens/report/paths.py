"""Paths as users and CI tools want them: relative to the current folder when inside it."""

from __future__ import annotations

import os


def rel(path: str) -> str:
    try:
        r = os.path.relpath(path)
        return r if not r.startswith("..") else path
    except ValueError:
        return path


def uri_rel(path: str) -> str:
    """A SARIF/GitHub file reference: forward slashes, relative to the current folder when inside it."""
    return rel(path).replace(os.sep, "/")
