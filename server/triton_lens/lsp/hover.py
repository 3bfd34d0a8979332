"""Access facts -> the markdown of a hover on a load/store."""
from __future__ import annotations

from ..analysis.hover import FULL, MOST, NONE, SOME, AccessFacts
from ..model import AccessStats
from ..analysis.stats import format_bytes

_VERB = {"load": "reads", "store": "writes", "atomic": "updates"}


def _tuple(v) -> str:
    v = tuple(int(x) for x in v)
    return "(" + ", ".join(str(x) for x in v) + ("," if len(v) == 1 else "") + ")"


def access_markdown(s: AccessStats, f: AccessFacts) -> str:
    t = f.tensor
    out = [f"**{s.op}** {_VERB.get(s.kind, s.kind)} `{s.arg}` in kernel `{f.kernel}`"]
    if t is not None:
        out.append(f"`{s.arg}`: **{t.dtype}**, shape `{_tuple(t.shape)}`, strides `{_tuple(t.strides)}`, "
                   f"{t.numel} elements × {t.itemsize} B")
    launches = f" over {s.launches} launches" if s.launches > 1 else ""
    loops = (f", {s.executions / s.programs:.1f} executions per program" if s.programs and s.executions > s.programs
             else "")
    of = (f" of {t.numel}" if t is not None and s.launches == 1 else
          ", counted per launch and summed" if s.launches > 1 else "")
    lines = [f"- touched, all programs{launches}: `{f.extent or s.extent}` — {s.unique} unique element"
             f"{'s' if s.unique != 1 else ''}{of}"]
    if f.shapes_differ:
        lines[-1] += " (launches with another shape of this tensor are left out of the ranges)"
    for p in f.first_programs:
        extra = f", {p.executions} executions" if p.executions > 1 else ""
        oob = f", {p.oob} out of bounds" if p.oob else ""
        lines.append(f"- program `{p.label}`" + (f" (launch {p.launch})" if s.launches > 1 else "")
                     + f": `{p.extent}` · {p.active}/{p.lanes} lanes active{oob}{extra}")
    if s.programs > len(f.first_programs):
        lines.append(f"- … {s.programs - len(f.first_programs)} more programs")
    pct = f"{100.0 * s.active / s.lanes:.1f}%" if s.lanes else "–"
    lines.append(f"- mask: {s.active} of {s.lanes} lanes active ({pct}) in {s.programs} programs{loops}")
    if s.oob:
        ex = ", ".join(str(o) for o in f.oob_offsets)
        lines.append(f"- **out of bounds: {s.oob} active lanes** outside the tensor (element offsets {ex}"
                     f"{'…' if s.oob > len(f.oob_offsets) else ''}); Triton Lens kept them off memory")
    else:
        lines.append("- out of bounds: none")
    lines.append(f"- bytes {'moved' if s.kind != 'atomic' else 'updated'}: {format_bytes(s.bytes)} ({s.bytes} B)")
    out.append("\n".join(lines))
    if f.map_rows:
        legend = f"{FULL} all  {MOST} ≥ half  {SOME} some  {NONE} none touched — {f.map_note}"
        out.append("```text\n" + "\n".join(f.map_rows) + "\n```\n" + legend)
    return "\n\n".join(out)


def line_markdown(items: list[tuple[AccessStats, AccessFacts]]) -> str:
    return "\n\n---\n\n".join(access_markdown(s, f) for s, f in items)
