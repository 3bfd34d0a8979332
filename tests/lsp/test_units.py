"""Pure pieces of the server, no process: editor facts (analysis/hover.py), line maps, settings,
run plans, hint and hover text."""

from __future__ import annotations

import os
import sys

import numpy as np

from triton_lens.analysis.hover import param_location
from triton_lens.analysis.index_text import FULL, MOST, NONE, SOME, dim_ranges, format_ranges, text_map
from triton_lens.lsp.hints import MAX_HINT, access_label, access_parts, fit_labels, format_bytes, shorten_extent
from triton_lens.lsp.linemap import LineMap
from triton_lens.lsp.runplan import plan
from triton_lens.lsp.settings import Settings, from_initialization_options, glob_to_regex
from triton_lens.lsp.text import Lines
from triton_lens.model import AccessStats

# -- index ranges -------------------------------------------------------------------------------


def test_dim_ranges_contiguous_step_and_scattered():
    assert dim_ranges((1000,), np.arange(0, 1000)) == ["0:1000"]
    assert dim_ranges((64, 100), np.arange(200, 300)) == ["2", "0:100"]
    assert dim_ranges((64, 100), np.array([0, 100, 200, 300])) == ["0:4", "0"]
    assert dim_ranges((100,), np.arange(0, 100, 4)) == ["0:97:4"]
    assert dim_ranges((100,), np.array([1, 2, 7, 50])) == ["4 of 1:51"]
    assert dim_ranges((8,), np.empty(0, np.int64)) == []


def test_format_ranges_counts_elements_when_the_box_is_not_full():
    assert format_ranges("x", (1000,), np.arange(1000)) == "x[0:1000]"
    assert format_ranges("a", (48, 72), np.arange(48 * 72)) == "a[0:48, 0:72]"
    # rows 1-2 partly: row*128 + cols over rows of 100 (the oob_row_stride bug)
    flat = np.arange(128, 228)
    assert format_ranges("x", (64, 100), flat) == "x[1:3, 0:100] (100 elements)"
    assert format_ranges("x", (8,), np.empty(0, np.int64)) == "x[]"


def test_text_map_marks_touched_cells_and_downsamples():
    rows, note = text_map((4, 8), np.arange(8))  # first row only
    assert rows == [FULL * 8, NONE * 8, NONE * 8, NONE * 8]
    assert note == "one cell per element"
    rows, note = text_map((1000,), np.arange(500))
    assert len(rows) == 1 and len(rows[0]) == 32
    assert rows[0].startswith(FULL * 15) and rows[0].endswith(NONE * 15)
    assert "elements" in note
    rows, _ = text_map((1151, 8192), np.arange(0, 1151 * 8192, 2))  # every other element
    assert len(rows) <= 12 and all(len(r) == 32 for r in rows)
    assert set("".join(rows)) == {MOST}
    rows, _ = text_map((100,), np.array([0]))
    assert rows[0][0] == SOME
    # never one entry per element: a huge tensor is fine
    rows, _ = text_map((1 << 20, 1 << 20), np.array([0, 5]))
    assert rows[0][0] == SOME and len(rows) == 12


def test_param_location_finds_the_parameter_in_the_def_from_the_decorator_line():
    src = [
        "import triton",
        "",
        "@triton.jit",
        "def k(x_ptr, out_ptr,",
        "      n, BLOCK: tl.constexpr):",
        "    x_ptr2 = 1",
    ]
    assert param_location(src, 3, "x_ptr") == (4, 6, 11)
    assert param_location(src, 3, "n") == (5, 6, 7)
    assert param_location(src, 3, "t[1]") is None
    assert param_location(src, 3, "BLOCK") == (5, 9, 14)
    assert param_location(["import triton", "@triton.jit", "def f(desc, y):"], 2, "desc.base") == (3, 6, 10)
    assert param_location(["def f(desc, y):"], 1, "desc") is None  # not a kernel


# -- line maps ----------------------------------------------------------------------------------


def test_linemap_identity_edit_in_place_insert_and_delete():
    a = "a\nb\nc\nd"
    assert LineMap.between(a, a).identity
    m = LineMap.between(a, "a\nB\nc\nd")
    assert not m.moved and m.line(1) == 1 and m.line(1, allow_edited=False) is None and m.line(2) == 2
    m = LineMap.between(a, "new\na\nb\nc\nd")
    assert m.moved and m.line(0) == 1 and m.line(3) == 4
    m = LineMap.between(a, "a\nc\nd")
    assert m.moved and m.line(1) is None and m.line(2) == 1
    m = LineMap.between(a, "a\nb\nc\nd\ne")  # appended at the end: nothing moved
    assert not m.moved and m.line(3) == 3
    m = LineMap.between(a, "a\nb1\nb2\nc\nd")  # Enter in the middle of line b
    assert m.moved and m.line(1) == 1 and m.line(1, allow_edited=False) is None and m.line(2) == 3


# -- settings -----------------------------------------------------------------------------------


def test_settings_merge_defaults_and_bad_values():
    s = Settings()
    assert (s.time_limit_s, s.memory_limit_mb, s.python, s.inlay_hints, s.debounce_ms) == (
        30.0,
        8192,
        sys.executable,
        True,
        100,
    )
    s2 = s.merged(
        {
            "timeLimit": 5,
            "memoryLimitMb": "bad",
            "python": "",
            "inlayHints": False,
            "debounceMs": 100,
            "runCommands": {"kernels/**": "pytest tests -k small"},
        }
    )
    assert (s2.time_limit_s, s2.memory_limit_mb, s2.python, s2.inlay_hints, s2.debounce_ms) == (
        5.0,
        8192,
        sys.executable,
        False,
        100,
    )
    assert s2.command_for("/w/kernels/a/add.py", ["/w"]) == ["pytest", "tests", "-k", "small"]
    assert s2.command_for("/w/other/add.py", ["/w"]) is None
    opts, trusted = from_initialization_options({"trusted": False, "settings": {"timeLimit": 7}})
    assert not trusted and opts.time_limit_s == 7
    # Trust fails closed: only an explicit `true` trusts.
    assert from_initialization_options({"trusted": True})[1] is True
    for opts in (None, {}, {"trusted": None}, {"trusted": "true"}, {"trusted": 1}, {"trusted": [True]}, [True]):
        assert from_initialization_options(opts)[1] is False, opts
    assert from_initialization_options({"timeLimit": 3})[0].time_limit_s == 3


def test_a_number_json_reads_as_infinity_or_nan_never_stops_the_server():
    # JSON's 1e400 is float("inf") in Python; int() of it raised inside initialize.
    inf, nan = float("inf"), float("nan")
    keys = ("timeLimit", "memoryLimitMb", "debounceMs", "workers")
    for bad in (inf, -inf, nan, "1e400", "-1e400", "nan", "inf"):
        s, trusted = from_initialization_options({"trusted": True, "settings": dict.fromkeys(keys, bad)})
        assert trusted and s == Settings(), bad  # each bad value keeps the default
        assert Settings().merged(dict.fromkeys(keys, bad)) == Settings(), bad


def test_globs():
    assert glob_to_regex("*.py").fullmatch("a/b/c.py")
    assert glob_to_regex("kernels/*.py").fullmatch("kernels/x.py")
    assert not glob_to_regex("kernels/*.py").fullmatch("kernels/sub/x.py")
    assert glob_to_regex("**/test_*.{py,pyi}").fullmatch("a/test_x.pyi")


# -- run plans ----------------------------------------------------------------------------------

KERNEL = """import triton
import triton.language as tl

@triton.jit
def k(x_ptr):
    pass
"""


def test_plan_kernel_file_runs_as_main(tmp_path):
    p = plan(str(tmp_path / "k.py"), KERNEL, Settings(), [str(tmp_path)])
    assert p.runnable and p.command is None and [k.name for k in p.kernels] == ["k"]
    assert p.kernels[0].line == 5 and p.kernels[0].first_line == 4


def test_plan_run_comment_beats_setting(tmp_path):
    text = KERNEL + "# triton-lens: run pytest tests/test_add.py -k small\n"
    s = Settings().merged({"runCommands": {"*.py": "python other.py"}})
    p = plan(str(tmp_path / "k.py"), text, s, [str(tmp_path)])
    assert p.command == ["pytest", "tests/test_add.py", "-k", "small"] and p.origin == "comment"
    assert p.origin_line == 7 and p.cwd == str(tmp_path)
    p = plan(str(tmp_path / "k.py"), KERNEL, s, [str(tmp_path)])
    assert p.command == ["python", "other.py"] and p.origin == "setting"


def test_plan_syntax_error_and_non_kernel_files(tmp_path):
    p = plan(str(tmp_path / "k.py"), KERNEL + "def broken(:\n", Settings(), [])
    assert not p.runnable and p.syntax is not None and p.syntax.line == 7
    assert [k.name for k in p.kernels] == ["k"]  # lenses stay on a file that does not parse
    p = plan(str(tmp_path / "plain.py"), "import os\nprint(os.getcwd())\n", Settings(), [])
    assert not p.runnable and p.syntax is None and "no @triton.jit" in p.why_not


def test_plan_file_importing_a_workspace_kernel_runs(tmp_path):
    (tmp_path / "mykernels.py").write_text(KERNEL)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "ops.py").write_text(KERNEL)
    for text in ("from mykernels import k\n", "import mykernels\n", "from pkg.ops import k\n", "from pkg import ops\n"):
        p = plan(str(tmp_path / "launch.py"), text, Settings(), [str(tmp_path)])
        assert p.runnable, text
    sub = tmp_path / "pkg" / "launch.py"
    assert plan(str(sub), "from .ops import k\n", Settings(), [str(tmp_path)]).runnable
    assert not plan(str(tmp_path / "launch.py"), "import torch\nimport triton\n", Settings(), [str(tmp_path)]).runnable


# -- text ---------------------------------------------------------------------------------------


def test_lines_utf16_columns_and_trimmed_ranges():
    lines = Lines.from_text("    x = 1  \né = tl.load(p)\n")
    r = lines.trimmed(0)
    assert (r.start.character, r.end.character) == (4, 9)
    assert lines.utf16_col(1, len("é = ".encode())) == 4


# -- hint text ----------------------------------------------------------------------------------


def _stats(**kw):
    base = dict(
        file="/k.py",
        line=3,
        col=4,
        end_line=3,
        end_col=20,
        arg="x",
        kind="load",
        op="tl.load",
        launches=1,
        programs=8,
        lanes=1024,
        active=1000,
        unique=1000,
        oob=0,
        bytes=4000,
        executions=8,
        extent="x[0:1000]",
    )
    base.update(kw)
    return AccessStats(**base)


def test_hint_label_is_compact_and_shows_repeats():
    # What matters first, within VS Code's default 43 characters: the bytes do not fit after a partial mask.
    assert access_label(_stats()) == "x[0:1000] · 1000/1024 active · 8 prog"  # 46 with " · 3.9 KB"
    assert access_label(_stats(extent="x_ptr[0:1000]")) == "x_ptr[0:1000] · 1000/1024 active · 8 prog"
    # every lane on: no mask part, so programs, bytes and the repeats get the room
    assert access_label(_stats(active=1024, executions=32)) == "x[0:1000] · 8 prog · 3.9 KB · ×4 iter"
    label = access_label(_stats(launches=2, executions=32, oob=24))
    # Out-of-bounds lanes lead; the parts that do not fit drop from the end, in their fixed order; the mask's
    # short form where the long one would keep the programs out.
    assert label == "24 OOB · x[0:1000] · 97% active · 8 prog", label
    full = access_label(_stats(launches=2, executions=32, oob=24), limit=200)
    assert full == "24 OOB · x[0:1000] · 1000/1024 active · 8 prog · 3.9 KB · ×4 iter · ×2 launches"
    assert format_bytes(512) == "512 B" and format_bytes(25600) == "25.0 KB"


def test_hint_label_falls_back_to_a_percentage_then_drops():
    # 26 characters of head: the fraction does not fit, its short form does
    label = access_label(_stats(extent="x_ptr[0:1000, 0:64:2]"), limit=36)
    assert label == "x_ptr[0:1000, 0:64:2] · 97% active", label
    assert access_label(_stats(active=1), limit=21) == "x[0:1000]"  # a part is shown whole or not at all
    assert access_label(_stats(active=1), limit=22) == "x[0:1000] · <1% active"


def test_a_long_extent_is_shortened_and_the_oob_count_kept():
    ext = "a_ptr[0:48, 0:72, 0:100, 0:1000] (100000 elements)"
    assert shorten_extent(ext, 43) == "a_ptr[0:48, 0:72, 0:100, 0:1000]…"
    assert shorten_extent(ext, 12) == "a_ptr[0:48,…"
    label = access_label(_stats(extent=ext, oob=5))
    assert label == "5 OOB · a_ptr[0:48, 0:72, 0:100, 0:1000]…", label


def test_a_line_of_several_accesses_fits_as_a_whole():
    load = access_parts(_stats(extent="x_ptr[0:1000]"))
    store = access_parts(_stats(arg="out_ptr", kind="store", extent="out_ptr[0:1000]", active=1024))
    # the load's mask part does not fit: it stops there, the store (all lanes on) still shows its programs
    assert fit_labels([load, store]) == "x_ptr[0:1000] │ out_ptr[0:1000] · 8 prog"
    many = [access_parts(_stats(extent=f"p{i}[0:1000]")) for i in range(7)]
    label = fit_labels(many)
    assert label == "p0[0:100… │ p1[0:100… │ p2[0:100… │ +4 more" and len(label) <= MAX_HINT
    # heads that share the room: a short one keeps its length, the long ones split the rest
    two = fit_labels([access_parts(_stats(extent="a[0:4]")), access_parts(_stats(extent="b" * 60))])
    assert two.startswith("a[0:4] │ bbbb") and two.endswith("…") and len(two) == MAX_HINT


def test_module_files_are_small_and_the_server_holds_no_analysis():
    here = os.path.join(os.path.dirname(__file__), "..", "..", "server", "triton_lens", "lsp")
    server = open(os.path.join(here, "server.py")).read()
    for word in ("numpy", "np.", "group_executions", "ElementSets", "Recorder"):
        assert word not in server, word


def test_touched_mask_agrees_with_sorting_the_indices():
    from triton_lens.analysis.index_text import format_mask, text_map_mask
    from triton_lens.model.elements import ElementSetsBuilder

    sets = [
        np.arange(0, 100),
        np.arange(50, 150),
        np.array([3, 500, 900]),
        np.concatenate([np.arange(200, 210), np.arange(300, 310)]),
        np.empty(0, np.int64),
        np.arange(990, 1000),
    ]
    b = ElementSetsBuilder()
    for x in sets:
        b.add(x)
    es = b.finish()
    assert set(es.kind.tolist()) == {0, 1, 2, 3}  # empty, range, runs and bitmap sets all covered
    m = es.cover(np.arange(len(sets)), 1000)
    ref = np.unique(np.concatenate(sets))
    assert np.array_equal(np.flatnonzero(m), ref)
    for shape in [(1000,), (10, 100), (4, 5, 50)]:
        assert format_mask("x", shape, m) == format_ranges("x", shape, ref)
        assert text_map_mask(shape, m) == text_map(shape, ref)


def test_the_mask_map_counts_as_the_index_map_on_wide_and_narrow_cells():
    # text_map_mask counts a wide cell's elements directly and adds a band's rows first where cells are a few
    # columns wide: both must draw what the index-based map draws, edges of bands and cells included.
    from triton_lens.analysis.index_text import text_map_mask

    rng = np.random.default_rng(7)
    for shape, p in [((1151, 8192), 0.3), ((70_001,), 0.5), ((3001, 64), 0.2), ((37, 5, 129), 0.9), ((4096, 3), 0.01)]:
        m = rng.random(int(np.prod(shape))) < p
        m[: shape[-1]] = True  # a full first row and an empty last one: full and empty cells at the edges
        m[-shape[-1] :] = False
        assert text_map_mask(shape, m) == text_map(shape, np.flatnonzero(m)), shape


def test_ranges_from_a_mask_read_as_ranges_from_sorting(monkeypatch):
    # format_ranges marks small tensors' indices in a mask instead of sorting them: the same text either way.
    from triton_lens.analysis import index_text

    rng = np.random.default_rng(3)
    cases = []
    for _ in range(400):
        shape = tuple(int(x) for x in rng.integers(1, 40, size=int(rng.integers(1, 4))))
        n = int(np.prod(shape))
        start, step = int(rng.integers(0, n)), int(rng.integers(1, 5))
        for flat in (
            rng.integers(0, n, size=int(rng.integers(1, n + 1))),
            np.arange(start, n, step),
            np.array([start]),
        ):
            cases.append((shape, flat, index_text.format_ranges("x", shape, flat)))
    monkeypatch.setattr(index_text, "MASK_LIMIT", 0)  # every set by sorting its indices
    for shape, flat, got in cases:
        assert got == index_text.format_ranges("x", shape, flat), (shape, flat)


def test_columns_follow_the_negotiated_position_encoding():
    from triton_lens.lsp import text

    lines = Lines.from_text("é = tl.load(p)  ")
    try:
        for enc, col, length in (("utf-16", 4, 14), ("utf-8", 5, 15), ("utf-32", 4, 14)):
            text.set_encoding(enc)
            assert lines.utf16_col(0, len("é = ".encode())) == col, enc
            assert lines.trimmed(0).end.character == length, enc
    finally:
        text.set_encoding("utf-16")


def test_only_triton_jit_counts_and_installed_libraries_never_run(tmp_path):
    def kernels(src):
        return [k.name for k in plan(str(tmp_path / "k.py"), src, Settings(), []).kernels]

    assert kernels("import triton as tr\n@tr.jit\ndef a(x): pass\n") == ["a"]
    assert kernels("from triton import jit\n@jit\ndef b(x): pass\n") == ["b"]
    assert kernels("import triton\n@triton.autotune(configs=[], key=[])\n@triton.jit\ndef c(x): pass\n") == ["c"]
    assert kernels("import numba\n@numba.jit\ndef d(x): pass\n") == []
    assert kernels("from jax import jit\n@jit\ndef e(x): pass\n") == []
    import triton.language

    lib = triton.language.__file__.replace("__init__.py", "standard.py")
    p = plan(lib, open(lib).read(), Settings(), [])
    assert not p.runnable and p.why_not == "an installed library file"


def test_a_partial_view_is_never_titled_as_a_complete_run():
    from types import SimpleNamespace

    from triton_lens.lsp.lenses import summary_title
    from triton_lens.lsp.view import PartialInfo

    k = SimpleNamespace(name="softmax_kernel")
    info = PartialInfo("softmax_kernel", 0, 43, 1823)
    going = summary_title(k, {}, None, running=True, stale=False, partial=info)  # type: ignore[arg-type]
    assert going == "⟳ partial results: 43 of 1823 programs of launch 1 · the rest is running…"
    # the run an edit stopped (until the next one's results come): still said to be partial, not "run 0.0 s"
    stopped = summary_title(k, {}, None, running=False, stale=True, partial=info)  # type: ignore[arg-type]
    assert stopped == "partial results: 43 of 1823 programs of launch 1 · the run was stopped by an edit"


def test_the_extensions_declared_defaults_are_the_servers():
    # package.json declares each setting's default for VS Code's settings page; the server has its own
    # (lsp/settings.py) for a client that sends none. Merged into the server's, the declared ones change nothing.
    import json
    from pathlib import Path

    props = json.loads((Path(__file__).resolve().parents[2] / "package.json").read_text())["contributes"][
        "configuration"
    ]["properties"]
    declared = {k.split(".", 1)[1]: v["default"] for k, v in props.items() if "default" in v}
    assert "debounceMs" in declared and "timeLimit" in declared
    for key, value in declared.items():
        assert Settings().merged({key: value}) == Settings(), key
    assert Settings().merged({"debounceMs": 400}) != Settings()  # (a declared default that differs is caught)
