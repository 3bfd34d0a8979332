"""Real upstream kernels with shape-dependent bugs (kernels/: each bug and fixed version written again from
the commits before and after the fix, each file citing its report), run through the real engine at small
sizes where the run alone is clean:
- every `# expect:` marker holds, checked by the corpus's own checker (tests/engine/test_engine_corpus.py);
- each bug version's finding names its failing size, and that size is the smallest one, worked out here
  from the kernel's own offset arithmetic (not read from the tool);
- each fixed version has no size finding (`oob-sizes`, `wrap`, `overrun`) beyond its markers: a fix that
  leaves a wrap behind has that wrap marked where it is, and nothing else;
- what the check cannot see (offsets from loaded values) is asserted as the documented miss it is.
About 55 s in one process on a shared 2-core VM (16 scripts, each a run plus its size check).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from markers import ROOT, parse

from triton_lens.analysis import analyze
from triton_lens.trace_engine.process.runner import RunRequest, run

sys.path.insert(0, str(ROOT / "tests" / "engine"))
from test_engine_corpus import check  # noqa: E402  (the corpus's checker: one meaning per marker)

KERNELS = Path(__file__).parent / "kernels"
FILES = sorted(KERNELS.glob("*.py"))
SIZE_KINDS = ("oob-sizes", "wrap", "overrun")
I32 = 2**31  # the first offset an int32 cannot hold


def _first(threshold) -> int:
    """The smallest n >= 1 with threshold(n) true (threshold grows with n)."""
    lo, hi = 1, 1
    while not threshold(hi):
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if threshold(mid) else (mid, hi)
    return hi


# The smallest failing size of each bug, from the kernel's arithmetic at the launch's other sizes: the
# largest offset the last program computes (active lanes) reaches 2**31, at a size whose grid CUDA can
# launch (x up to 2**31 - 1 programs, y and z up to 65,535: past them the launch fails and the kernel never
# runs). Every size below drives grid axis 0 only. (file, arg) -> size value.
SMALLEST = {
    # row_idx * X_row_stride, the last row n - 1, rows of 600
    ("liger_803_bug.py", "X_ptr"): _first(lambda n: (n - 1) * 600 >= I32),
    ("liger_803_bug.py", "Y_ptr"): _first(lambda n: (n - 1) * 600 >= I32),
    # the leftover: row_idx[:, None] * X_row_stride in the block kernel, rows of 96
    ("liger_803_fixed.py", "X_ptr"): _first(lambda n: (n - 1) * 96 >= I32),
    ("liger_803_fixed.py", "Y_ptr"): _first(lambda n: (n - 1) * 96 >= I32),
    # pid_b * stride_dt_batch + pid_c * chunk_size * stride_dt_seqlen: batch strides 160 * 8, last chunk 4
    ("mamba_1015_bug.py", "dt_ptr"): _first(lambda b: (b - 1) * 1280 + 4 * 32 * 8 >= I32),
    # pid_b * stride_dt_out_batch (8 heads * 5 chunks * 32)
    ("mamba_1015_bug.py", "dt_out_ptr"): _first(lambda b: (b - 1) * 1280 >= I32),
    ("mamba_1015_bug.py", "dA_cumsum_ptr"): _first(lambda b: (b - 1) * 1280 >= I32),
    # (pid_p * 24 + linear_index) * 64, the last prefix row P - 1 (index values read as 0)
    ("flaggems_6087_bug.py", "input_ptr"): _first(lambda p: (p - 1) * 24 * 64 >= I32),
    # (pid_p * M + index_offsets) * 64 with M = 5 and the last active index 4, the last prefix row P - 1.
    # Not along M (where it was once reported, at 4,793,491 indices): the grid's axis 1 is cdiv(M, 4),
    # which CUDA caps at 65,535, so M stops at 262,140, an offset of 117,438,656.
    ("flaggems_6087_bug.py", "out_ptr"): _first(lambda p: ((p - 1) * 5 + 4) * 64 >= I32),
    # offs_m * stride_m: the last active row 199, the row stride = the columns
    ("triton_6748_bug.py", "pointer"): _first(lambda c: 199 * c >= I32),
    # index_b * NUM_COLUMNS with index_b = the program id, 2 programs per token (top-2), 96 columns
    ("megablocks_185_bug.py", "b"): _first(lambda t: (2 * t - 1) * 96 >= I32),
}

# Out of the check's reach (documented in each file and in docs/findings.md): offsets built from loaded
# values, which the check reads as zeros, sizes past 2**31, a grid held while the size moves, and wraps
# that need two sizes to grow together. (file, arg) of a wrap the kernel has and the check cannot see.
MISSED = {
    ("liger_1246_bug.py", "pre_act_ptr"),  # row_offs = loaded row_start + arange
    ("liger_1246_bug.py", "post_act_ptr"),
    ("liger_1246_bug.py", "x_ptr"),  # a loaded token index times stride_x_T
    ("megablocks_185_bug.py", "a"),  # offset = a loaded token index
    # Not a loaded value: the check holds integer arguments below 2**31 (int32 on the GPU), and this
    # kernel wraps only once n itself passes 2**31 (then int64) while the program id stays int32.
    ("triton_832_bug.py", "in_ptr0"),
    ("triton_832_bug.py", "out_ptr0"),
    # Grid limits: along the batch, the wrap of `(bos * H + i_h) * K` needs B * H past 65,535 programs on
    # grid axis 1 (it was once reported at 174,764 and 349,527 batches: no launch). On a GPU it wraps along T
    # instead (from 4,194,304 for k, 8,388,608 for A, grid axis 0), where the check holds the grid: the
    # launch passes NT, computed before it (the file's notes).
    ("fla_911_bug.py", "k"),
    ("fla_911_bug.py", "A"),
    # The fix's leftover, `offs_h * stride_head`: the heads (grid axis 2, blocks of 4) stop at 262,140 and
    # the chunks (axis 1) at 65,535, so one size alone never wraps (it was once reported at 13,421,774
    # heads, a grid of 3,355,444 on axis 2: no launch). It wraps where both grow, 262,140 heads and a
    # sequence of 8,193, and the check moves one size at a time.
    ("mamba_1015_fixed.py", "dt_out_ptr"),
    ("mamba_1015_fixed.py", "dA_cumsum_ptr"),
}

_cache: dict[str, object] = {}


def analysed(path: Path):
    if path.name not in _cache:
        _cache[path.name] = analyze(run(RunRequest(path=str(path), timeout_s=300)))
    return _cache[path.name]


def test_the_set_is_there():
    names = {p.name for p in FILES}
    bugs = {n for n in names if n.endswith("_bug.py")}
    assert len(bugs) >= 7 and {b.replace("_bug", "_fixed") for b in bugs} <= names, names
    # Every expected smallest size is of a file of the set.
    assert {f for f, _ in SMALLEST} | {f for f, _ in MISSED} <= names


MARKERS = [
    pytest.param(p, e, id=f"{p.name}:{e.line}:{e.kind}:{'-'.join(e.words)}") for p in FILES for e in parse(p).expects
]


@pytest.mark.parametrize("path,e", MARKERS)
def test_marker(path: Path, e):
    check(analysed(path), e)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_the_run_alone_is_clean_and_only_the_marked_sizes_fail(path: Path):
    a = analysed(path)
    assert a.result.status == "ok", a.result.error
    serious = [f for f in a.findings if f.severity in ("warning", "error")]
    other = [f"{f.line}: {f.kind} {f.message}" for f in serious if f.kind not in SIZE_KINDS]
    assert not other, other  # at the script's sizes the kernel is right: the bug needs another size
    marked = {(e.line, e.kind, e.words[-1]) for e in parse(path).expects if e.kind in SIZE_KINDS}
    got = {(f.line, f.kind, f.arg) for f in a.findings if f.kind in SIZE_KINDS and f.file == a.result.file}
    assert got == marked, f"size findings {sorted(got)}, marked {sorted(marked)}"


@pytest.mark.parametrize("key", sorted(SMALLEST), ids=[f"{f}:{arg}" for f, arg in sorted(SMALLEST)])
def test_each_wrap_is_reported_at_its_smallest_failing_size(key):
    name, arg = key
    a = analysed(KERNELS / name)
    found = [f for f in a.findings if f.kind == "wrap" and f.arg == arg]
    assert len(found) == 1, [(f.kind, f.arg, f.line) for f in a.findings]
    w = found[0].witness
    assert w["size_value"] == SMALLEST[key], (w["size"], SMALLEST[key], found[0].message)
    assert w["size"] in found[0].message and str(SMALLEST[key]) in w["size"]
    # A grid CUDA can launch (CUDA's limits, written out here rather than read from the tool).
    assert all(g <= most for g, most in zip(w["grid"], (2**31 - 1, 65_535, 65_535))), w["grid"]


@pytest.mark.parametrize("key", sorted(MISSED), ids=[f"{f}:{arg}" for f, arg in sorted(MISSED)])
def test_a_wrap_out_of_the_checks_reach_is_not_reported(key):
    # The documented limitations, asserted as they are: loads read zeros on address-only memory, so an
    # offset built from a loaded index never grows with the size; integer arguments stay below 2**31; a
    # held grid is not searched for a wrap; one size moves at a time. If the check learns to see one, this
    # fails and the entry moves to SMALLEST.
    name, arg = key
    a = analysed(KERNELS / name)
    assert not [f for f in a.findings if f.kind in SIZE_KINDS and f.arg == arg]
