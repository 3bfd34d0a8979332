"""Per-line access stats -> the text of an inlay hint at the end of the line, and its tooltip."""

from __future__ import annotations

from ..analysis.hover import AccessFacts
from ..analysis.text import format_bytes
from ..model import AccessStats


def _pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:.1f}%" if b else "–"


def access_label(s: AccessStats, fact: AccessFacts | None) -> str:
    """`x_ptr[0:1000] · 8 prog · 1000/1024 active · 3.9 KB`, then `×2 launches` and loop iterations.
    Out-of-bounds lanes come first: VS Code cuts hints at 43 characters by default."""
    extent = s.extent or s.arg
    parts = [extent, f"{s.programs} prog", f"{s.active}/{s.lanes} active", format_bytes(s.bytes)]
    if s.kind == "atomic":
        parts[0] = f"atomic {parts[0]}"
    if s.programs and s.executions > s.programs:
        per = s.executions / s.programs
        parts.append(f"×{per:.0f} iter" if per == int(per) else f"×{per:.1f} iter")
    if s.launches > 1:
        parts.append(f"×{s.launches} launches")
    if s.oob:
        parts.insert(0, f"{s.oob} OOB")
    return " · ".join(parts)


def access_tooltip(s: AccessStats, fact: AccessFacts | None) -> str:
    """Markdown: the full numbers behind the label."""
    t = fact.tensor if fact is not None else None
    head = f"**{s.op}** of `{s.arg}`"
    if t is not None:
        head += f" — {t.dtype}, shape {tuple(t.shape)}"
    rows = [
        ("launches", f"{s.launches}"),
        ("programs", f"{s.programs}"),
        ("executions", f"{s.executions}" + (f" ({s.executions / s.programs:.1f} per program)" if s.programs else "")),
        ("lanes", f"{s.lanes}"),
        ("active (mask true)", f"{s.active} ({_pct(s.active, s.lanes)})"),
        (
            "unique elements",
            f"{s.unique}"
            + (
                f" of {t.numel}"
                if t is not None and s.launches == 1
                else " (per launch, summed)"
                if s.launches > 1
                else ""
            ),
        ),
        ("out of bounds lanes", f"{s.oob}"),
        ("bytes", f"{s.bytes} ({format_bytes(s.bytes)})"),
    ]
    if fact is not None and fact.extent:
        rows.insert(0, ("elements", f"`{fact.extent}`"))
    table = "| | |\n|---|---|\n" + "\n".join(f"| {k} | {v} |" for k, v in rows)
    return f"{head}\n\n{table}"


def line_hint(stats: list[AccessStats], facts: dict) -> tuple[str, str]:
    """The label and markdown tooltip of one line's hint (several accesses joined)."""
    labels, tips = [], []
    for s in stats:
        fact = facts.get((s.file, s.line, s.arg, s.kind))
        labels.append(access_label(s, fact))
        tips.append(access_tooltip(s, fact))
    return "  │  ".join(labels), "\n\n---\n\n".join(tips)
