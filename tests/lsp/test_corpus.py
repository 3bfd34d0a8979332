"""Every file of the corpus (tests/corpus and ../shared/corpus), opened in the real server: its diagnostics and inlay hints agree
with the file's `# expect:` markers. Files whose `# requires:` excludes the installed triton are
left out (and named in the test log)."""

from __future__ import annotations

import re

import pytest
import triton
from lsp_harness import Session, session_fixture
from lsprotocol import types as lsp
from markers import CORPUS, CorpusFile, Expect, corpus_files

pytestmark = pytest.mark.asyncio(loop_scope="module")

FILES = corpus_files()
APPLIES = [cf for cf in FILES if cf.applies_to(triton.__version__)]
EXCLUDED = [cf for cf in FILES if not cf.applies_to(triton.__version__)]
HANG_LIMIT_S = 6.0
DEFAULT_LIMIT_S = 120.0

client = session_fixture({"timeLimit": DEFAULT_LIMIT_S})

ERROR, WARNING, INFO = (
    lsp.DiagnosticSeverity.Error,
    lsp.DiagnosticSeverity.Warning,
    lsp.DiagnosticSeverity.Information,
)


async def test_corpus_is_there_and_requires_is_honoured():
    assert CORPUS.is_dir() and len(FILES) >= 20
    for cf in EXCLUDED:  # the documented exclusion: say which files and why
        print(f"not run on triton {triton.__version__}: {cf.name} (requires {', '.join(cf.requires)})")
    assert len(APPLIES) + len(EXCLUDED) == len(FILES)


def _at(diags: list[lsp.Diagnostic], line: int, code: str) -> list[lsp.Diagnostic]:
    return [d for d in diags if d.range.start.line == line - 1 and d.code == code]


MAX_HINT = 43  # VS Code's default editor.inlayHints.maximumLength: one line's hints together


def _hint_parts(hints: list[lsp.InlayHint], line: int) -> list[tuple[str, str, int]]:
    """(label part, tooltip section, the whole line's label length) per access on a 1-based line; a label
    part is "" for an access the label had no room for (`+N more`): its tooltip section is there all the same."""
    for h in hints:
        if h.position.line == line - 1:
            labels = h.label.split(" │ ")
            tips = h.tooltip.value.split("\n\n---\n\n")
            if re.fullmatch(r"\+\d+ more", labels[-1]):
                n = int(labels.pop()[1:].split()[0])
                labels += [""] * n
            assert len(labels) == len(tips), (h.label, len(tips))
            return [(lab, tip, len(h.label)) for lab, tip in zip(labels, tips)]
    return []


BYTES = r"\d(\.\d)? [KMG]?B\b"


def _shown_or_no_room(label: str, line_len: int, part: str, later: str | None, why) -> None:
    """`part` is in the access's label, or dropped for room: then nothing after it in the fixed order is
    shown, and adding it to the line (as long now as it was then, or longer) would pass 43 characters; a
    shortened extent (`…`) or no label (`+N more`) means there was no room at all."""
    if part in label:
        return
    assert later is None or not re.search(later, label), (why, label)
    assert line_len + len(" · " + part) > MAX_HINT or label.endswith("…") or not label, (why, label, line_len)


def _for_arg(parts, arg: str):
    return [p for p in parts if f"of `{arg}`" in p[1]]


def check(cf: CorpusFile, e: Expect, diags: list[lsp.Diagnostic], hints: list[lsp.InlayHint], text: str) -> None:
    lines = text.splitlines()
    if e.kind == "stats":
        arg = e.words[-1]
        parts = _for_arg(_hint_parts(hints, e.line), arg)
        assert parts, f"{cf.name} {e}: no hint for {arg}; hints {[(h.position.line + 1, h.label) for h in hints]}"
        label, tip, line_len = parts[0]
        k = e.keys
        if "programs" in k:
            _shown_or_no_room(label, line_len, f"{k['programs']} prog", BYTES, e)  # bytes come after the programs
            assert f"| programs | {k['programs']} |" in tip
        if "active" in k:
            lanes = int(re.search(r"\| lanes \| (\d+) \|", tip).group(1))
            assert k.get("lanes", lanes) == lanes, (e, tip)
            assert f"| active (mask true) | {k['active']} (" in tip, (e, tip)
            if k["active"] == lanes:  # every lane on: the label says nothing of the mask
                assert " active" not in label, (e, label)
            elif f"{k['active']}/{lanes} active" not in label:
                pct = 100 * k["active"] // lanes
                short = f"{pct}% active" if pct or not k["active"] else "<1% active"
                _shown_or_no_room(label, line_len, short, r"\d prog", e)
        if "lanes" in k:
            assert f"| lanes | {k['lanes']} |" in tip, (e, tip)
        if "unique" in k:
            assert f"| unique elements | {k['unique']}" in tip, (e, tip)
    elif e.kind == "launches":
        parts = _hint_parts(hints, e.line)
        assert parts, f"{cf.name} {e}: no hint"
        n = e.keys["launches"]
        for label, tip, line_len in parts:
            assert f"| launches | {n} |" in tip
            if n == 1:
                assert "launches" not in label, label
            else:  # the last part: in the label when it fits
                _shown_or_no_room(label, line_len, f"×{n} launches", None, e)
    elif e.kind == "oob":
        kind, arg = e.words
        found = [d for d in _at(diags, e.line, "oob") if d.message.startswith(arg + ":")]
        assert found, f"{cf.name} {e}: {[(d.range.start.line + 1, d.code, d.message[:60]) for d in diags]}"
        d = found[0]
        assert d.severity == ERROR and d.source == "triton-lens"
        assert f"{e.keys['lanes']} lane" in d.message
        progs = e.keys["programs"]
        assert (f"{progs} programs" in d.message) if progs > 1 else ("of program (" in d.message), d.message
        assert re.search(r"offsets? -?\d+", d.message)  # example element indices
        assert re.search(r"\(\d+(, \d+)*,?\)", d.message)  # example program ids
        # the range is the call itself, not the whole line
        src = lines[e.line - 1]
        assert src[d.range.start.character :].startswith(("tl.", "tl.load", "tl.store")), src[d.range.start.character :]
        # related information: the tensor's parameter in the kernel's def line
        rel = [r for r in d.related_information or [] if "parameter of" in r.message]
        assert rel, d.related_information
        loc = rel[0].location
        pline = lines[loc.range.start.line]
        assert pline[loc.range.start.character : loc.range.end.character] == arg
        assert "def " in "\n".join(lines[max(0, loc.range.start.line - 3) : loc.range.start.line + 1])
    elif e.kind == "race":
        arg = e.words[-1]
        found = [d for d in _at(diags, e.line, "race") if d.message.startswith(arg + ":")]
        assert found, f"{cf.name} {e}: {[(d.range.start.line + 1, d.code) for d in diags]}"
        assert found[0].severity in (ERROR, WARNING)
        if "programs" in e.keys:
            assert found[0].message.startswith(f"{arg}: {e.keys['programs']} programs"), found[0].message
        others = [x for x in cf.expects if x.kind == "race" and x.line != e.line]
        if others:  # related information at the other accesses taking part
            rel_lines = {r.location.range.start.line + 1 for r in found[0].related_information or []}
            assert rel_lines & {x.line for x in others}, (rel_lines, [x.line for x in others])
    elif e.kind == "dead":
        found = [d for d in _at(diags, e.line, "dead-mask") if d.message.startswith(e.words[-1] + ":")]
        assert found and found[0].severity == WARNING, f"{cf.name} {e}: {diags}"
    elif e.kind == "unwritten":
        found = [d for d in _at(diags, e.line, "unwritten") if d.message.startswith(e.words[-1] + ":")]
        assert found and found[0].severity in (INFO, WARNING), f"{cf.name} {e}: {diags}"
        assert str(e.keys["elements"]) in found[0].message
    elif e.kind == "uninit":
        found = [d for d in _at(diags, e.line, "uninit") if d.message.startswith(e.words[-1] + ":")]
        assert found and found[0].severity == ERROR, f"{cf.name} {e}: {diags}"
        assert str(e.keys["elements"]) in found[0].message
    elif e.kind in ("oob-sizes", "wrap", "overrun"):
        arg = e.words[-1]
        found = [d for d in _at(diags, e.line, e.kind) if d.message.startswith(arg + ":")]
        assert found, f"{cf.name} {e}: {[(d.range.start.line + 1, d.code, d.message[:60]) for d in diags]}"
        d = found[0]
        assert d.severity == WARNING and d.source == "triton-lens"
        src = lines[e.line - 1]  # the range is the access itself
        assert src[d.range.start.character :].startswith("tl."), src[d.range.start.character :]
        if "programs" in e.keys:
            assert f"{e.keys['programs']} program" in d.message, d.message
        if e.kind == "wrap":
            assert "overflows int32" in d.message and "`" in d.message  # the operation, as written
    elif e.kind == "exception":
        found = _at(diags, e.line, "exception")
        assert found and found[0].severity == ERROR and e.words[0] in found[0].message, f"{cf.name} {e}: {diags}"
    elif e.kind == "timeout":
        assert [d for d in diags if d.code == "timeout"], f"{cf.name}: {diags}"
    elif e.kind == "no-launch":
        found = [d for d in diags if d.code == "no-launch"]
        assert found and all(d.severity == INFO for d in found), diags
        defs = [i for i, s in enumerate(lines) if s.lstrip().startswith("def ")]
        assert {d.range.start.line for d in found} <= set(defs), (found, defs)
        assert "triton-lens: run" in found[0].message  # how to add a run
    elif e.kind == "clean":
        bad = [d for d in diags if d.severity in (ERROR, WARNING)]
        assert not bad, f"{cf.name} is clean, got {[(d.range.start.line + 1, d.code, d.message[:80]) for d in bad]}"
    else:
        raise AssertionError(f"unknown expectation {e}")
    if e.severity is not None:
        code = {"dead": "dead-mask"}.get(e.kind, e.kind)
        want = {"error": ERROR, "warning": WARNING, "information": INFO}[e.severity]
        found = [d for d in _at(diags, e.line, code) if d.message.startswith(e.words[-1] + ":")]
        assert want in [d.severity for d in found], f"{cf.name} {e}: {[(d.code, d.severity) for d in found]}"


async def _set_time_limit(session: Session, seconds: float) -> None:
    await session.configure({"timeLimit": seconds})  # runs opened from then on wait for it


@pytest.mark.parametrize("cf", APPLIES, ids=[cf.name for cf in APPLIES])
async def test_corpus_file(session: Session, cf: CorpusFile):
    hangs = any(e.kind == "timeout" for e in cf.expects)
    if hangs:
        await _set_time_limit(session, HANG_LIMIT_S)
    try:
        text = cf.path.read_text()
        uri = session.open(cf.path, text)
        done = await session.finished_run(uri, 1)
        assert done["status"] != "error", done
        diags = session.diagnostics(uri)
        assert session.published_version(uri) == 1
        hints = await session.hints(uri)
        # VS Code cuts one line's hints at 43 characters by default: every label fits, whole
        too_long = [(h.position.line + 1, len(h.label), h.label) for h in hints if len(h.label) > MAX_HINT]
        assert not too_long, f"{cf.name}: hints longer than {MAX_HINT} characters: {too_long}"
        failures = []
        for e in cf.expects:
            try:
                check(cf, e, diags, hints, text)
            except AssertionError as err:
                failures.append(f"{e}: {err}")
        assert not failures, "\n".join(failures)
        # every diagnostic is ours, with a code users can filter on
        assert all(d.source == "triton-lens" and d.code for d in diags)
        session.close(uri)
    finally:
        if hangs:
            await _set_time_limit(session, DEFAULT_LIMIT_S)
