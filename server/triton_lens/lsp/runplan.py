"""The language server's view of the run plan (source/plan.py owns the rule): its Settings in, the
engine's plain mapping out."""

from __future__ import annotations

from ..source.plan import Plan, SyntaxProblem, in_library, workspace_root  # noqa: F401
from ..source.plan import plan as _plan
from .settings import Settings


def plan(path: str, text: str, settings: Settings, roots: list[str]) -> Plan:
    return _plan(path, text, settings.run_commands, roots)
