"""Lines as VS Code counts them (\\n, \\r\\n, \\r only) in the server's copy of a document and in the
line maps; line maps in linear (n log n) work, whatever the lines repeat."""

from __future__ import annotations

from types import SimpleNamespace

from lsprotocol import types as lsp

from triton_lens.lsp.edits import DocText
from triton_lens.lsp.linemap import LineMap
from triton_lens.lsp.text import Lines
from triton_lens.model.lines import split_lines

ODD = "a = 1  # \x0c form feed\nb = '\x0b'\nc = '\u2028'\r\nd = '\x1c\x1d\x1e\x85\u2029'\re\n"


def test_only_newline_characters_break_lines():
    assert split_lines(ODD) == [
        "a = 1  # \x0c form feed",
        "b = '\x0b'",
        "c = '\u2028'",
        "d = '\x1c\x1d\x1e\x85\u2029'",
        "e",
        "",
    ]
    assert "".join(split_lines(ODD, keepends=True)) == ODD
    assert Lines.from_text(ODD).get(4) == "e"
    assert len(Lines.from_text(ODD).text_lines) == 6


def change(l1, c1, l2, c2, text):
    return SimpleNamespace(range=lsp.Range(lsp.Position(l1, c1), lsp.Position(l2, c2)), text=text)


def test_incremental_edits_below_odd_characters_land_where_the_editor_put_them():
    d = DocText(ODD)
    d.apply(change(4, 0, 4, 1, "E"))  # line 4 is "e" for VS Code
    assert split_lines(d.text)[4] == "E" and d.text.count("\x0c") == 1
    d.apply(change(2, 7, 3, 0, ""))  # join lines 2 and 3 across a \r\n
    assert split_lines(d.text)[2] == "c = '\u2028'd = '\x1c\x1d\x1e\x85\u2029'"
    d.apply(SimpleNamespace(text="whole\n"))  # a full-text change
    assert d.text == "whole\n"


def test_positions_are_in_utf16_units():
    d = DocText("x = '😀é'\ny\n")  # the emoji is two UTF-16 units
    d.apply(change(0, 7, 0, 8, "E"))  # replaces é
    assert d.text == "x = '😀E'\ny\n"


def test_linemap_counts_lines_as_the_editor_does():
    old = "k = 1\x0c\nkernel\n"
    new = "inserted\nk = 1\x0c\nkernel\n"
    m = LineMap.between(old, new)
    assert m.moved and m.line(1) == 2  # not 3: the form feed is no line break


class Counted:
    """A line that counts how often it is hashed or compared."""

    ops = 0

    def __init__(self, s):
        self.s = s

    def __hash__(self):
        Counted.ops += 1
        return hash(self.s)

    def __eq__(self, other):
        Counted.ops += 1
        return self.s == other.s


def test_a_20k_line_file_of_repeated_lines_maps_in_linear_work():
    base = []
    for i in range(2000):
        base += [
            "",
            "    x = tl.load(p + offs, mask=m)",
            ")",
            f"# block {i}",
            "",
            "    tl.store(q, x)",
            "",
            ")",
            "",
            "pass",
        ]
    old = [Counted(s) for s in base]
    new_s = base[:10000] + ["    y = 1  # typed"] + base[10000:15000] + base[15001:]
    new = [Counted(s) for s in new_s]
    Counted.ops = 0
    m = LineMap.of_lines(old, new)
    n = len(old) + len(new)
    assert Counted.ops < 30 * n, Counted.ops  # difflib's matcher needs millions here
    assert m.line(9999) == 9999 and m.line(10000) == 10001 and m.line(15000) is None and m.line(19999) == 19999
    assert m.moved


async def test_a_large_documents_line_map_is_computed_off_the_event_loop(monkeypatch):
    import asyncio
    import threading

    from triton_lens.lsp import documents
    from triton_lens.lsp import server as server_mod
    from triton_lens.lsp.documents import Doc
    from triton_lens.lsp.runplan import Plan
    from triton_lens.lsp.view import RunView

    srv = server_mod.create_server()
    srv.scheduler.loop = asyncio.get_running_loop()
    published = []
    monkeypatch.setattr(srv, "text_document_publish_diagnostics", lambda p: published.append(p))
    monkeypatch.setattr(srv, "_refresh", lambda **kw: None)
    threads = []
    real = LineMap.between

    def spy(a, b):
        threads.append(threading.current_thread())
        return real(a, b)

    monkeypatch.setattr(server_mod.LineMap, "between", staticmethod(spy))
    old = "".join(f"x{i % 7} = {i % 3}\n" for i in range(documents.INLINE_MAP_LINES + 500))
    new = "# typed\n" + old
    diag = lsp.Diagnostic(range=lsp.Range(lsp.Position(2400, 0), lsp.Position(2400, 4)), message="m", code="oob")
    view = RunView(version=1, text=old, result=None, analysis=None, plan=Plan(True), diagnostics=[diag])
    doc = Doc(uri="file:///w/big.py", path="/w/big.py", version=2, text=new, plan=Plan(True), view=view)
    srv.docs[doc.uri] = doc
    srv.publish(doc)
    assert published == [] and doc.map_pending == (1, 2)  # nothing computed on the loop, nothing published yet
    assert (
        doc.hover(lsp.Position(2401, 0)) is None
        and doc.inlay_hints(lsp.Range(lsp.Position(0, 0), lsp.Position(9999, 0))) == []
    )
    for _ in range(200):
        await asyncio.sleep(0.01)
        if published:
            break
    assert threads and all(t is not threading.main_thread() for t in threads)
    (p,) = published
    assert [d.range.start.line for d in p.diagnostics] == [2401]  # moved down by the typed line
