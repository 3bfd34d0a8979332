"""Per-line access stats -> the text of an inlay hint at the end of the line, and its tooltip."""

from __future__ import annotations

from ..analysis.records import AccessRecord
from ..analysis.text import format_bytes
from ..model import AccessStats


def _pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:.1f}%" if b else "–"


# VS Code's default `editor.inlayHints.maximumLength`: it cuts one line's hints, all of them together, at this
# many characters (UTF-16 units; every character we write is one). A label longer than this loses its end.
MAX_HINT = 43
SEP = " · "  # between the parts of one access
JOIN = " │ "  # between the accesses of one line
_MIN_HEAD = 8  # the fewest characters an access's head is shortened to before the line says "+N more"


def _pct_floor(a: int, b: int) -> str:
    """97% for 1000/1024; never 100% unless every lane was active, never 0% unless none was."""
    p = 100 * a // b if b else 0
    if a and not p:
        return "<1%"
    return f"{p}%"


def access_parts(s: AccessStats) -> tuple[str, str, list[list[str]]]:
    """(the out-of-bounds prefix, the extent, the other parts): each part a list of forms, longest first, in
    the order they drop (last first). Which parts matter most: lanes that left the tensor, what was touched,
    how much of the mask was on, how many programs, how many bytes; then the repeats."""
    oob = f"{s.oob} OOB" if s.oob else ""
    extent = s.extent or s.arg
    if s.kind == "atomic":
        extent = f"atomic {extent}"
    parts: list[list[str]] = []
    if s.active != s.lanes:  # every lane on says nothing the extent does not; the tooltip has the numbers
        parts.append([f"{s.active}/{s.lanes} active", f"{_pct_floor(s.active, s.lanes)} active"])
    parts.append([f"{s.programs} prog"])
    parts.append([format_bytes(s.bytes)])
    if s.programs and s.executions > s.programs:
        per = s.executions / s.programs
        parts.append([f"×{per:.0f} iter" if per == int(per) else f"×{per:.1f} iter"])
    if s.launches > 1:
        parts.append([f"×{s.launches} launches"])
    return oob, extent, parts


def shorten_extent(extent: str, width: int) -> str:
    """`x[1:3, 0:100] (100 elements)` in `width` characters: the element count goes first, then the end of
    the index; `…` says something was cut."""
    if len(extent) <= width:
        return extent
    box = extent.split(" (", 1)[0]
    if box != extent and len(box) + 1 <= width:
        return box + "…"
    return extent[: max(width - 1, 1)] + "…"


def _widths(lengths: list[int], total: int) -> list[int]:
    """The widths of the heads when they must share `total` characters: short ones keep their length, the
    long ones split the rest evenly."""
    out = [0] * len(lengths)
    left = total
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    for k, i in enumerate(order):
        out[i] = min(lengths[i], left // (len(order) - k))
        left -= out[i]
    return out


def fit_labels(accesses: list[tuple[str, str, list[list[str]]]], limit: int = MAX_HINT) -> str:
    """One line's label within `limit` characters. Every access shows its head (out-of-bounds lanes and
    extent, the extent shortened if need be); then, a level at a time over the accesses (so a second access
    is not starved by the first one's details), each access's next part in the longest form that fits. An
    access stops at its first part that does not fit, so what a label shows is always a prefix of its parts
    in their fixed order; of a part's forms, the longest that leaves room for the next part. Accesses whose
    heads cannot get `_MIN_HEAD` characters give way to `+N more`."""
    shown = len(accesses)
    while shown > 1:
        more = f"{JOIN}+{len(accesses) - shown} more" if shown < len(accesses) else ""
        if shown * _MIN_HEAD + len(JOIN) * (shown - 1) + len(more) <= limit:
            break
        shown -= 1
    more = f"{JOIN}+{len(accesses) - shown} more" if shown < len(accesses) else ""
    room = limit - len(JOIN) * (shown - 1) - len(more)
    heads_full = [(oob + SEP if oob else "", extent) for oob, extent, _ in accesses[:shown]]
    widths = _widths([len(p) + len(e) for p, e in heads_full], room)
    labels = [p + shorten_extent(e, max(w - len(p), 2)) for (p, e), w in zip(heads_full, widths)]

    def total() -> int:
        return sum(map(len, labels)) + len(JOIN) * (len(labels) - 1) + len(more)

    open_ = [True] * shown
    level = 0
    while any(open_):
        for i in range(shown):
            parts = accesses[i][2]
            if not open_[i] or level >= len(parts):
                open_[i] = False
                continue
            fits = [f for f in parts[level] if total() + len(SEP) + len(f) <= limit]
            if not fits:
                open_[i] = False
                continue
            # The longest form that leaves room for the next part (`78% active · 64 prog` rather than
            # `6400/8192 active` alone); the longest that fits when none does.
            after = len(SEP) + min(map(len, parts[level + 1])) if level + 1 < len(parts) else 0
            roomy = [f for f in fits if total() + len(SEP) + len(f) + after <= limit]
            labels[i] += SEP + (roomy or fits)[0]
        level += 1
    return JOIN.join(labels) + more


def access_label(s: AccessStats, limit: int = MAX_HINT) -> str:
    """`x_ptr[0:1000] · 1000/1024 active · 8 prog`: one access's label within `limit` characters (out-of-bounds
    lanes first, then the extent, mask, programs, bytes, iterations and launches, as many as fit)."""
    return fit_labels([access_parts(s)], limit)


def access_tooltip(r: AccessRecord) -> str:
    """Markdown: the full numbers behind the label, the record's (the hover's and the table's). From its
    totals and reach only: the hover's facts (maps, first programs) are not computed for a hint."""
    s, t = r.totals, r.tensor
    reach = r.reach if t is not None else None
    head = f"**{s.op}** of `{s.arg}`"
    if t is not None:
        head += f" — {t.dtype}, shape {tuple(t.shape)}"
    # unique: the union over the launches of the first one's shape (analysis/touched.py), as the hover says it
    of = r.unique_of
    unique = f"{s.unique}" + (
        f" of {of}"
        if of is not None
        else " (launches with another shape counted by their own)"
        if reach is not None and reach.shapes_differ
        else ""
    )
    rows = [
        ("launches", f"{s.launches}"),
        ("programs", f"{s.programs}"),
        ("executions", f"{s.executions}" + (f" ({s.executions / s.programs:.1f} per program)" if s.programs else "")),
        ("lanes", f"{s.lanes}"),
        ("active (mask true)", f"{s.active} ({_pct(s.active, s.lanes)})"),
        ("unique elements", unique),
        ("out of bounds lanes", f"{s.oob}"),
        ("bytes", f"{s.bytes} ({format_bytes(s.bytes)})"),
    ]
    if reach is not None and s.extent:
        rows.insert(0, ("elements", f"`{s.extent}`"))
    table = "| | |\n|---|---|\n" + "\n".join(f"| {k} | {v} |" for k, v in rows)
    return f"{head}\n\n{table}"


def line_hint(records: list[AccessRecord]) -> tuple[str, str]:
    """The label and markdown tooltip of one line's hint (several accesses joined)."""
    tips = [access_tooltip(r) for r in records]
    return fit_labels([access_parts(r.totals) for r in records]), "\n\n---\n\n".join(tips)
