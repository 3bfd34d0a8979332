"""The language server's view of the run plan (source/plan.py owns the rule): its Settings in, the
engine's plain mapping out."""

from __future__ import annotations

from ..source.plan import Plan as Plan
from ..source.plan import SyntaxProblem as SyntaxProblem
from ..source.plan import in_library as in_library
from ..source.plan import plan as _plan
from ..source.plan import workspace_root as workspace_root
from .settings import Settings


def plan(path: str, text: str, settings: Settings, roots: list[str]) -> Plan:
    return _plan(path, text, settings.run_commands, roots)
