"""Performance metrics on hand-computed cases: real kernels run by the engine (perf_cases.py), then
the analysis layer's numbers compared with what a reader works out on paper."""

from pathlib import Path

import numpy as np
import pytest
from recorded import recorded

from triton_lens.analysis import analyze
from triton_lens.analysis.gpus import GPUS, gpu, precision
from triton_lens.analysis.performance import SECTOR, sector_stats
from triton_lens.model import LaunchTrace, Site, TensorInfo
from triton_lens.model.elements import ElementSetsBuilder

CASES = Path(__file__).with_name("perf_cases.py")


def _line(marker: str) -> int:
    for n, text in enumerate(CASES.read_text().splitlines(), 1):
        if text.rstrip().endswith(f"# {marker}"):
            return n
    raise AssertionError(marker)


@pytest.fixture(scope="module")
def analysis():
    return analyze(recorded(CASES))


def _metrics(analysis, marker, kind="load"):
    found = [m for m in analysis.performance.lines if m.line == _line(marker) and m.kind == kind]
    assert len(found) == 1, analysis.performance.lines
    return found[0]


def test_row_major_tile_uses_every_sector(analysis):
    m = _metrics(analysis, "row tile")
    assert m.sector_efficiency == 1.0
    assert m.requested == 4 * 16 * 32 * 4  # 4 programs x 16 x 32 lanes x 4 B
    assert m.mask_efficiency == 1.0
    assert m.reuse == 1.0


def test_column_walk_over_row_major_float32_is_one_eighth(analysis):
    m = _metrics(analysis, "column walk")
    assert m.sector_efficiency == pytest.approx(0.125)
    assert m.sectors == 64 * 64  # every lane of every program in a sector of its own
    assert m.run_bytes == 4 and m.gap_bytes == 64 * 4
    notes = [f for f in analysis.findings if f.kind == "uncoalesced"]
    assert [f.line for f in notes] == [_line("column walk")]
    assert notes[0].severity == "information"
    assert "12.5%" in notes[0].message and "256 B apart" in notes[0].message
    assert "stride of 64 elements" in notes[0].message


def test_broadcast_load_reuse_is_the_number_of_programs(analysis):
    m = _metrics(analysis, "broadcast")
    assert m.unique == 64
    assert m.reuse == 8.0
    assert m.sector_efficiency == 1.0


def test_dot_flops_and_roofline(analysis):
    perf = analysis.performance
    (d,) = perf.dots
    assert d.line == _line("dot") and (d.shape, d.executions) == ((16, 16, 32), 4)
    assert d.flops == 4 * 2 * 16 * 16 * 32 and d.precision == "tf32"
    launch = next(L for L in perf.launches if L.kernel == "dot_kernel")
    assert launch.flops == d.flops
    # DRAM lower bound: a (2 KB) and b (2 KB) read once however many programs read them; c written (4 KB).
    assert launch.dram_bytes == 16 * 32 * 4 + 32 * 16 * 4 + 4 * 256 * 4
    assert launch.intensity == pytest.approx(d.flops / launch.dram_bytes)
    h100 = launch.roofline["h100"]
    assert h100.memory_seconds == pytest.approx(launch.dram_bytes / GPUS["h100"].bandwidth)
    assert h100.compute_seconds == pytest.approx(d.flops / GPUS["h100"].flops["tf32"])
    assert h100.bound == "memory" and h100.seconds == max(h100.memory_seconds, h100.compute_seconds)


def test_json_carries_the_same_numbers(analysis):
    j = analysis.to_json()["performance"]
    assert {g["name"] for g in j["gpus"]} == {"H100 SXM", "H200", "A100", "MI300X", "RTX 4090"}
    col = next(m for m in j["lines"] if m["line"] == _line("column walk") and m["kind"] == "load")
    assert col["sector_efficiency"] == 0.125 and col["stride_bytes"] == 256


def _launch(t: TensorInfo, sets: list[np.ndarray]) -> LaunchTrace:
    b = ElementSetsBuilder()
    for s in sets:
        b.add(np.asarray(s, dtype=np.int64))
    n = len(sets)
    ones = np.ones(n, dtype=np.int32)
    empty = ElementSetsBuilder()
    for _ in sets:
        empty.add_empty()
    return LaunchTrace(
        0,
        "k",
        "f.py",
        1,
        "f.py",
        2,
        (n, 1, 1),
        [t],
        [Site("f.py", 3, 0, 3, 1, 0, "load", "tl.load")],
        np.zeros(n, dtype=np.int32),
        np.arange(n, dtype=np.int32),
        ones,
        ones,
        0 * ones,
        b.finish(),
        empty.finish(),
        empty.finish(),
    )


def test_sector_split_between_runs_of_one_execution_counts_once():
    # float16: elements 0..3 (bytes 0..7) and 8..11 (bytes 16..23) share sector 0; 16..31 is sector 1.
    t = TensorInfo(0, "x", (64,), (1,), "float16", 2)
    L = _launch(t, [np.r_[0:4, 8:12, 16:32]])
    s = sector_stats(L, np.array([0]), t)
    assert s.sectors == 2 and s.requested == 24 * 2
    assert s.efficiency == pytest.approx(48 / (2 * SECTOR))


def test_strided_view_uses_storage_offsets():
    # A transposed view of a 8 x 8 float32 matrix: a "row" of the view is a column in storage.
    t = TensorInfo(0, "xt", (8, 8), (1, 8), "float32", 4)
    L = _launch(t, [np.arange(8)])  # view row 0: storage offsets 0, 8, ..., 56
    s = sector_stats(L, np.array([0]), t)
    assert s.sectors == 8 and s.efficiency == pytest.approx(4 / 32)


def test_gpu_table_and_precisions():
    assert gpu("H100 SXM") is GPUS["h100"] and gpu("rtx 4090") is GPUS["rtx4090"]
    with pytest.raises(KeyError, match="pick one of"):
        gpu("V100")
    assert all(g.source for g in GPUS.values())
    assert (
        precision("fp16", "fp16"),
        precision("bf16", "bf16"),
        precision("fp32", "fp32"),
        precision("fp8e4nv", "fp8e4nv"),
    ) == ("fp16", "fp16", "tf32", "fp8")


def test_hover_shows_the_same_numbers(analysis):
    from triton_lens.lsp.hover import dot_markdown, line_markdown

    col = [r for r in analysis.records if r.totals.line == _line("column walk")]
    text = line_markdown(col)
    assert "sector efficiency: **12.5%**" in text and "256 B apart" in text
    one = [L for L in analysis.performance.launches if L.kernel == "column_walk_kernel"]
    text = line_markdown(col, one)
    assert "launch roofline estimate: ≥ 9.8 ns on H100 SXM, **memory-bound** (32.0 KB DRAM at least" in text
    tile = [r for r in analysis.records if r.totals.line == _line("broadcast")]
    text = line_markdown(tile)
    assert "sector efficiency: **100.0%**" in text and "reuse: 8.00 lanes per unique element" in text
    (d,) = analysis.performance.dots
    md = dot_markdown(d, analysis.performance.launches)
    assert f"**{d.flops:,} FLOPs**" in md and "16×32 @ 32×16" in md
    assert md.count("| memory |") == 5 and "arithmetic intensity 8.00 FLOP/B" in md


def test_scalar_accesses_get_no_coalescing_diagnostic(analysis):
    # row_tile's store, broadcast's store and the dot's store are full tiles; the column walk's
    # store writes 64 contiguous elements: only the column walk's load is flagged (checked above).
    # A scalar per program (a reduction's result) is one element per execution: never flagged.
    from triton_lens.analysis.performance import LineMetrics, Performance, sector_findings

    scalar = LineMetrics(
        "k.py",
        9,
        "out_ptr",
        "store",
        "tl.store",
        "float32",
        4,
        lanes=64,
        active=64,
        requested=256,
        sectors=64,
        unique=64,
        executions=64,
    )
    walk = LineMetrics(
        "k.py",
        8,
        "x_ptr",
        "load",
        "tl.load",
        "float32",
        4,
        lanes=4096,
        active=4096,
        requested=16384,
        sectors=4096,
        unique=4096,
        executions=64,
        run_bytes=4,
        gap_bytes=256,
    )
    notes = sector_findings(Performance([scalar, walk], [], []))
    assert [(f.line, f.arg) for f in notes] == [(8, "x_ptr")]


def test_sectors_of_a_mask_are_the_distinct_sectors_of_its_elements():
    # _sectors_of reads a contiguous tensor's flags a sector at a time (as one integer where it can): it must
    # count what the element offsets give, for every element size and for masks that end inside a sector.
    from triton_lens.analysis.performance import _sectors_of

    rng = np.random.default_rng(5)
    for itemsize in (1, 2, 4, 8, 16, 32):
        for n in (1, 7, 8, 9, 33, 1000, 4097):
            for p in (0.0, 0.02, 0.5, 1.0):
                t = TensorInfo(0, "x", (n,), (1,), "x", itemsize)
                m = rng.random(n) < p
                want = np.unique(np.flatnonzero(m) * itemsize // SECTOR).size
                assert _sectors_of(t, m) == want, (itemsize, n, p)
