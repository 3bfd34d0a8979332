"""Access facts -> the markdown of a hover on a load/store."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..analysis.gpus import GPUS
from ..analysis.index_text import FULL, MOST, NONE, SOME
from ..analysis.performance import DotMetrics, LaunchMetrics, LineMetrics, explain_stride
from ..analysis.records import AccessRecord
from ..analysis.text import format_bytes, format_seconds

_VERB = {"load": "reads", "store": "writes", "atomic": "updates"}


def _tuple(v: Iterable[int]) -> str:
    v = tuple(int(x) for x in v)
    return "(" + ", ".join(str(x) for x in v) + ("," if len(v) == 1 else "") + ")"


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{100.0 * v:.1f}%"


def performance_lines(m: LineMetrics) -> list[str]:
    """The access's performance metrics, as hover bullets."""
    out = [
        f"- sector efficiency: **{_pct(m.sector_efficiency)}** ({format_bytes(m.requested)} requested in "
        f"{format_bytes(m.sectors * 32)} of 32-byte sectors, per execution"
        f"{'; executions sampled' if m.sampled else ''})"
    ]
    if m.sector_efficiency is not None and m.sector_efficiency < 0.25:
        out[-1] += f" — {explain_stride(m)}"
    if m.reuse is not None:
        out.append(
            f"- reuse: {m.reuse:.2f} lanes per unique element across programs"
            + (" (L2 absorbs the repeats)" if m.reuse > 1 else "")
        )
    return out


def roofline_markdown(L: LaunchMetrics) -> str:
    """The launch's intensity and roofline estimate on each GPU of the table, as a markdown table."""
    ai = f"{L.intensity:.2f} FLOP/B" if L.intensity is not None else "–"
    head = (
        f"launch {L.index} (`{L.kernel}`): {format_bytes(L.dram_bytes)} DRAM at least, "
        f"{L.flops:,} tl.dot FLOPs, arithmetic intensity {ai}"
    )
    rows = ["| GPU | roofline time | bound |", "|---|---:|---|"]
    for key, g in GPUS.items():
        r = L.roofline[key]
        rows.append(f"| {g.name} | ≥ {format_seconds(r.seconds)} | {r.bound} |")
    return head + "\n\n" + "\n".join(rows) + "\n\n(peak bandwidth and FLOP/s; launch overhead not included)"


def dot_markdown(d: DotMetrics, launches: list[LaunchMetrics]) -> str:
    out = [
        f"**tl.dot** {d.shape[0]}×{d.shape[2]} @ {d.shape[2]}×{d.shape[1]} ({d.a_dtype} × {d.b_dtype}, "
        f"{d.precision} tensor-core rate): {d.executions} executions, **{d.flops:,} FLOPs**"
    ]
    out += [roofline_markdown(L) for L in launches if L.index in d.launches]
    return "\n\n".join(out)


def access_markdown(r: AccessRecord) -> str:
    """The hover of one access that ran (its record has facts): totals, facts and performance, the record's."""
    s, f, perf = r.totals, r.facts, r.perf
    assert f is not None, "an access that never ran has no hover"
    t = f.tensor
    out = [f"**{s.op}** {_VERB.get(s.kind, s.kind)} `{s.arg}` in kernel `{f.kernel}`"]
    if t is not None:
        out.append(
            f"`{s.arg}`: **{t.dtype}**, shape `{_tuple(t.shape)}`, strides `{_tuple(t.strides)}`, "
            f"{t.numel} elements × {t.itemsize} B"
        )
    launches = f" over {s.launches} launches" if s.launches > 1 else ""
    loops = (
        f", {s.executions / s.programs:.1f} executions per program" if s.programs and s.executions > s.programs else ""
    )
    # unique: the union over the launches of the first one's shape (analysis/touched.py)
    of = f" of {r.unique_of}" if r.unique_of is not None else ""
    lines = [
        f"- touched, all programs{launches}: `{s.extent}` — {s.unique} unique element{'s' if s.unique != 1 else ''}{of}"
    ]
    if f.shapes_differ:
        lines[-1] += " (launches with another shape of this tensor are left out of the ranges, counted by their own)"
    for p in f.first_programs:
        extra = f", {p.executions} executions" if p.executions > 1 else ""
        oob = f", {p.oob} out of bounds" if p.oob else ""
        lines.append(
            f"- program `{p.label}`"
            + (f" (launch {p.launch})" if s.launches > 1 else "")
            + f": `{p.extent}` · {p.active}/{p.lanes} lanes active{oob}{extra}"
        )
    if s.programs > len(f.first_programs):
        lines.append(f"- … {s.programs - len(f.first_programs)} more programs")
    pct = f"{100.0 * s.active / s.lanes:.1f}%" if s.lanes else "–"
    lines.append(f"- mask: {s.active} of {s.lanes} lanes active ({pct}) in {s.programs} programs{loops}")
    if s.oob:
        ex = ", ".join(str(o) for o in f.oob_offsets)
        lines.append(
            f"- **out of bounds: {s.oob} active lanes** outside the tensor (element offsets {ex}"
            f"{'…' if s.oob > len(f.oob_offsets) else ''}); Triton Lens kept them off memory"
        )
    else:
        lines.append("- out of bounds: none")
    lines += sizes_checked_lines(f.sizes_checked, f.line, f.arg)
    lines.append(f"- bytes {'moved' if s.kind != 'atomic' else 'updated'}: {format_bytes(s.bytes)} ({s.bytes} B)")
    if perf is not None:
        lines += performance_lines(perf)
    out.append("\n".join(lines))
    if f.map_rows:
        legend = f"{FULL} all  {MOST} ≥ half  {SOME} some  {NONE} none touched — {f.map_note}"
        out.append("```text\n" + "\n".join(f.map_rows) + "\n```\n" + legend)
    return "\n\n".join(out)


# Why a proof stops where it does (size_probe.SizeCheck._symbolic's "limit").
_PROOF_LIMITS = {
    "int32": "the largest {size} an int32 argument holds",
    "memory": "the largest {size} whose tensors fit the {gpu}",
    "grid": "the largest {size} whose grid CUDA can launch",
    "stated": "the largest {size} the kernel's `# triton-lens: sizes` admits",
    "wrap": "from {size} = {inexact_from:,} an operation of its offset or mask overflows int32",
}


def proof_line(p: dict[str, Any], gpu: str) -> str:
    """The size check's proof for one access (z3: every program, every lane, every size in a range)."""
    size = p["size"]
    sizes = f"every {size} ≤ {p['upto']:,}" if p["from"] <= 1 else f"every {size} from {p['from']:,} to {p['upto']:,}"
    limit = _PROOF_LIMITS.get(p["limit"], "").format(size=size, gpu=gpu, inexact_from=p.get("inexact_from") or 0)
    return (
        f"- **in bounds for {sizes}**: z3 proves that no active lane leaves `{p['tensor']}` at any of these sizes, in "
        f"any program ({limit}; assuming {'; '.join(p['assuming'])})"
    )


def sizes_checked_lines(
    checked: list[dict[str, Any]], line: int | None = None, arg: str | None = None
) -> list[str]:  # the size check's JSON records
    """What the size check ran at where it found nothing at this access (docs/findings.md, "Beyond the
    script's sizes"): re-runs of some programs at other sizes, and where z3 proved it, every size in a
    range (the access at `line` through `arg`)."""
    out: list[str] = []
    proved: set[tuple[Any, ...]] = set()  # one line for launches proved over the same sizes
    for c in checked:
        for p in c.get("proved") or []:
            k = (p["size"], p["from"], p["upto"], p["limit"])
            if p["line"] == line and p["tensor"] == arg and k not in proved:
                proved.add(k)
                out.append(proof_line(p, c.get("gpu") or "the GPU"))
        runs = []
        if c.get("tail"):
            runs.append(f"`{c['tail']}` (the grid's corner programs)")
        if c.get("largest"):
            gpu = c.get("gpu") or "the GPU"
            if c.get("grid_limit"):
                # The GPU holds more, but CUDA cannot launch its grid there (size_model.GRID_LIMITS): no size.
                axis, most = c["grid_limit"]["axis"], c["grid_limit"]["most"]
                where = f"the largest size whose grid CUDA can launch, {most:,} programs on grid axis {axis} at most"
                runs.append(f"`{c['largest']}` (the last program, at {where}; {gpu} would hold more)")
            else:
                runs.append(
                    f"`{c['largest']}` (the last program, at the largest size that fits {gpu} with int32 sizes)"
                )
        if runs:
            stopped = "; the check stopped at its budget before the other sizes" if c.get("stopped") else ""
            text = f"- other sizes than `{c.get('script')}`: in bounds at {' and '.join(runs)}{stopped}"
            if text not in out:
                out.append(text)
    return out


def roofline_line(L: LaunchMetrics) -> str:
    """One line: the launch's estimate on the default GPU (the others: a tl.dot line's hover, the viewer)."""
    from ..analysis.gpus import DEFAULT_GPU

    r, g = L.roofline[DEFAULT_GPU], GPUS[DEFAULT_GPU]
    ai = f", arithmetic intensity {L.intensity:.2f} FLOP/B" if L.flops and L.intensity is not None else ""
    return (
        f"- launch roofline estimate: ≥ {format_seconds(r.seconds)} on {g.name}, **{r.bound}-bound** "
        f"({format_bytes(L.dram_bytes)} DRAM at least{ai}; other GPUs in the viewer's Performance panel)"
    )


def line_markdown(records: list[AccessRecord], launches: list[LaunchMetrics] | None = None) -> str:
    """The hover of the accesses of one call range; `launches`: LaunchMetrics of the run (a run of one
    launch gets its roofline line)."""
    text = "\n\n---\n\n".join(access_markdown(r) for r in records)
    if launches and len(launches) == 1:
        text += "\n" + roofline_line(launches[0])
    return text
