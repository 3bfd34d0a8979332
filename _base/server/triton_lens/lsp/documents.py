"""One open document: its current text and version, its run plan, the view of its last finished run,
and that view mapped onto the current text (shifted where lines moved, marked as from an earlier
version when it no longer matches the text, withheld on lines that changed)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from lsprotocol import types as lsp

from .diagnostics import mark_stale, syntax_diagnostic, untrusted_diagnostic
from .lenses import kernel_lenses
from .linemap import LineMap
from .runplan import Plan
from .runs import RunHandle
from .text import Lines
from .view import HoverSpot, RunView

INLINE_MAP_LINES = 2000  # below this a line map takes well under a millisecond: computed where asked for
_NOT_YET = LineMap(identity=False, moved=True)  # maps no line

STALE_NOTE = "_From an earlier version of this file: lines moved since it ran; a new run is on its way._\n\n"


@dataclass
class Doc:
    uri: str
    path: str
    version: int
    text: str
    plan: Plan
    view: RunView | None = None
    run: RunHandle | None = None  # the run in flight, if any
    timer: asyncio.TimerHandle | None = None  # of a debounced run
    published: str | None = None  # what was last published (its JSON key), to skip identical publications
    _lines: Lines | None = None
    _map: tuple[int, int, LineMap] | None = None
    _reverse: tuple[int, int, dict[int, int]] | None = None
    map_pending: tuple[int, int] | None = None  # the key of the map being computed off the event loop

    def update(self, version: int, text: str, plan: Plan) -> None:
        self.version, self.text, self.plan = version, text, plan
        self._lines = None

    @property
    def lines(self) -> Lines:
        if self._lines is None:
            self._lines = Lines.from_text(self.text)
        return self._lines

    def map_key(self) -> tuple[int, int] | None:
        """What the line map depends on: (version that ran, current version); None: no map needed."""
        if self.view is None or (self.view.version == self.version and self.view.text == self.text):
            return None
        return (self.view.version, self.version)

    def map_ready(self) -> bool:
        """The map can be had at once: none is needed, it is computed, or the texts are small enough
        to map where it is asked for. Otherwise the server computes it off the event loop."""
        key = self.map_key()
        if key is None or self.view is None or (self._map is not None and self._map[:2] == key):
            return True
        return self.text.count("\n") < INLINE_MAP_LINES and self.view.text.count("\n") < INLINE_MAP_LINES

    def set_map(self, key: tuple[int, int], m: LineMap) -> None:
        if key == self.map_key():
            self._map = (*key, m)

    def linemap(self) -> LineMap:
        """From the text of the last finished run to the current text. For a large text whose map is
        still being computed (off the event loop): a map of nothing, so nothing is shown on a line it
        may no longer belong to; the server publishes and refreshes when the map is there."""
        key = self.map_key()
        if key is None:
            return LineMap()
        if self._map is None or self._map[:2] != key:
            if not self.map_ready():
                return _NOT_YET
            assert self.view is not None  # (a key means a view)
            self._map = (*key, LineMap.between(self.view.text, self.text))
        return self._map[2]

    @property
    def current(self) -> bool:
        """The shown results come from the current text."""
        return self.view is not None and self.view.version == self.version

    @property
    def stale(self) -> bool:
        """The shown results no longer line up with the text as it is (lines moved)."""
        return self.view is not None and self.linemap().moved

    # -- what the editor gets -------------------------------------------------------------------

    def diagnostics(self, trusted: bool) -> list[lsp.Diagnostic]:
        out: list[lsp.Diagnostic] = []
        if not trusted and (self.plan.kernels or self.plan.imported_kernels):
            out.append(untrusted_diagnostic(self.lines, self.plan.kernels))
        if self.plan.syntax is not None:
            out.append(syntax_diagnostic(self.plan.syntax, self.lines))
        if self.plan.too_large:
            out.append(
                lsp.Diagnostic(
                    range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)),
                    message=f"Not run: {self.plan.why_not}.",
                    severity=lsp.DiagnosticSeverity.Information,
                    code="too-large",
                    source="triton-lens",
                )
            )
        if self.view is None:
            return out
        m = self.linemap()
        for d in self.view.diagnostics:
            l0 = d.range.start.line
            new = m.line(l0)
            if new is None:
                continue
            if new == l0 and not m.moved and l0 not in m.edited:
                out.append(d)
                continue
            shifted = _shift(d, new - l0, m, self.uri)
            if m.moved or l0 in m.edited:
                shifted = mark_stale(shifted, self.view.version)
            out.append(shifted)
        return out

    def inlay_hints(self, rng: lsp.Range) -> list[lsp.InlayHint]:
        if self.view is None:
            return []
        m = self.linemap()
        out = []
        for l0, (label, tooltip) in self.view.hints.items():
            new = m.line(l0, allow_edited=False)
            if new is None or new < rng.start.line or new > rng.end.line:
                continue
            tip = STALE_NOTE + tooltip if m.moved else tooltip
            out.append(
                lsp.InlayHint(
                    position=lsp.Position(new, self.lines.length16(new)),
                    label=label,
                    tooltip=lsp.MarkupContent(lsp.MarkupKind.Markdown, tip),
                    padding_left=True,
                )
            )
        out.sort(key=lambda h: h.position.line)
        return out

    def hover(self, pos: lsp.Position) -> lsp.Hover | None:
        if self.view is None:
            return None
        m = self.linemap()
        if m is _NOT_YET:
            return None
        old: int | None
        if m.identity:
            old = pos.line
        else:
            key = (self.view.version, self.version)
            if self._reverse is None or self._reverse[:2] != key:
                self._reverse = (*key, {n: o for o, n in m.same.items()})
            old = self._reverse[2].get(pos.line)
            if old is None:
                return None
        for spot in self.view.hovers.get(old, []):
            if spot.col < 0 or _within(old, pos.character, spot):
                md = STALE_NOTE + spot.markdown if m.moved else spot.markdown
                delta = pos.line - old
                rng = (
                    lsp.Range(
                        lsp.Position(spot.line + delta, spot.col), lsp.Position(spot.end_line + delta, spot.end_col)
                    )
                    if spot.col >= 0
                    else None
                )
                return lsp.Hover(contents=lsp.MarkupContent(lsp.MarkupKind.Markdown, md), range=rng)
        return None

    @property
    def running_shown(self) -> bool:
        """A run is in flight and has said so (runs.SAY_RUNNING_AFTER_S): what the lens, the status bar and the
        viewer show; a run not yet said to run leaves the last result shown as it was."""
        return self.run is not None and self.run.announced

    def code_lenses(self, *, trusted: bool) -> list[lsp.CodeLens]:
        not_run = ""
        if not trusted:
            not_run = "not run — the workspace is not trusted"
        elif self.plan.syntax is not None and self.view is None:
            not_run = "not run — the file does not parse"
        result = self.view.result if self.view is not None else None
        return kernel_lenses(
            self.uri,
            self.plan.kernels,
            result,
            running=self.running_shown,
            stale=self.view is not None and not self.current and self.stale,
            not_run=not_run,
            # a sample's snapshot: of the run still going, or of one an edit stopped (lenses.summary_title)
            partial=self.view.partial if self.view is not None else None,
        )


def _within(line: int, char: int, spot: HoverSpot) -> bool:
    if line < spot.line or line > spot.end_line:
        return False
    if line == spot.line and char < spot.col:
        return False
    if line == spot.end_line and char > spot.end_col:
        return False
    return True


def _shift(d: lsp.Diagnostic, delta: int, m: LineMap, uri: str) -> lsp.Diagnostic:
    r = d.range
    rng = lsp.Range(
        lsp.Position(r.start.line + delta, r.start.character), lsp.Position(r.end.line + delta, r.end.character)
    )
    related = None
    if d.related_information:
        related = []
        for ri in d.related_information:
            if ri.location.uri != uri:
                related.append(ri)
                continue
            rl = m.line(ri.location.range.start.line)
            if rl is None:
                continue
            dd = rl - ri.location.range.start.line
            lr = ri.location.range
            related.append(
                lsp.DiagnosticRelatedInformation(
                    lsp.Location(
                        uri,
                        lsp.Range(
                            lsp.Position(lr.start.line + dd, lr.start.character),
                            lsp.Position(lr.end.line + dd, lr.end.character),
                        ),
                    ),
                    ri.message,
                )
            )
    return lsp.Diagnostic(
        range=rng,
        message=d.message,
        severity=d.severity,
        code=d.code,
        source=d.source,
        related_information=related or None,
        data=d.data,
        tags=d.tags,
    )
