"""The kernel author's `# triton-lens: sizes` conditions (source/size_conditions.py): read from the comment
lines above a kernel or in its body, evaluated without running anything, and honoured by the size check
(trace_engine/recording/size_probe.py) as a `tl.assume` is: a size they refuse is one the kernel does not
admit. What cannot be used is said at the comment's line."""

from __future__ import annotations

import textwrap

import pytest

from triton_lens.analysis import analyze
from triton_lens.source.size_conditions import conditions_for, evaluate, parse
from triton_lens.trace_engine.process.runner import RunRequest, run
from triton_lens.trace_engine.recording.size_symbolic import z3_module

pytestmark = pytest.mark.engine

KERNEL_FILE = """import triton
import triton.language as tl

# a note that is no condition
# triton-lens: sizes n <= 2**24, M % 16 == 0
@triton.jit
def k(x, n, M, B: tl.constexpr):
    s = "# triton-lens: sizes n < 0"  # a string, not a comment
    # triton-lens: sizes 1 <= n <= 2**30 and not (M < 0)
    pass


# triton-lens: sizes n < 5
@triton.jit
def other(x, n):
    pass
"""


def test_conditions_are_read_above_the_kernel_and_in_its_body_and_nowhere_else():
    lines = KERNEL_FILE.splitlines(True)
    c = conditions_for(lines, 6)  # the decorator's line
    assert [(x.text, x.line, sorted(x.names)) for x in c.conditions] == [
        ("n <= 2**24", 5, ["n"]),
        ("M % 16 == 0", 5, ["M"]),
        ("1 <= n <= 2**30 and not (M < 0)", 9, ["M", "n"]),
    ]
    assert c.errors == []
    assert c.holds({"n": 16, "M": 32}) and not c.holds({"n": 16, "M": 33}) and not c.holds({"n": 2**24 + 1, "M": 0})
    assert [x.text for x in conditions_for(lines, 14).conditions] == ["n < 5"]  # the other kernel's own


def test_what_a_condition_may_not_say_is_an_error_that_names_the_fix():
    conds, errors = parse(" n <=, foo(n), n.shape, 1.5 < n, n ** 2 < 10 or n == 3", 7)
    assert [c.text for c in conds] == ["n ** 2 < 10 or n == 3"]
    assert [(line, m.split(":")[0]) for line, m in errors] == [
        (7, "cannot read the size condition `n <=`"),
        (7, "the size condition `foo(n)` uses `foo(n)`"),
        (7, "the size condition `n.shape` uses `n.shape`"),
        (7, "the size condition `1.5 < n` uses the literal 1.5"),
    ]
    assert all("e.g. `# triton-lens: sizes n <= 2**24, M % 16 == 0`" in m for _, m in errors)
    assert parse("", 3)[1] and "states no condition" in parse("", 3)[1][0][1]
    # evaluated by a walk of the tree: a huge power or a division by zero is no value, never a crash or a hang
    (big,), _ = parse("n < 2 ** 100000", 1)
    (zero,), _ = parse("n // 0 == 1", 1)
    assert evaluate(big.node, {"n": 1}) is None and evaluate(zero.node, {"n": 1}) is None


def _run(tmp_path, text: str):
    p = tmp_path / "k.py"
    p.write_text(textwrap.dedent(text))
    r = run(RunRequest(path=str(p), timeout_s=120))
    assert r.status == "ok", r.error
    return r, analyze(r)


STATED = """
import torch
import triton
import triton.language as tl


# Callers pad n to whole blocks and never pass more than 2**20 elements.
# triton-lens: sizes n % 1024 == 0, n <= 2**20
@triton.jit
def whole_blocks(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2)


# triton-lens: sizes n % 16 == 0
@triton.jit
def rows_of_16(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2, mask=offs < n)


# triton-lens: sizes m > 3, x_ptr > 0
@triton.jit
def misnamed(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


n = 4096
x = torch.randn(n)
out = torch.empty(n)
whole_blocks[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
rows_of_16[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
misnamed[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
"""


def test_the_size_check_tries_only_sizes_the_conditions_admit(tmp_path):
    r, a = _run(tmp_path, STATED)
    checked = {L.kernel: L.size_checked[0] for L in r.launches}
    # whole blocks up to 2**20: the next size tried is the next whole block, the largest 2**20; no finding
    assert (checked["whole_blocks"]["tail"], checked["whole_blocks"]["largest"]) == ("n = 5120", "n = 1048576")
    # multiples of 16: the ragged neighbour is 4112 (still not whole blocks of 1024: the unmasked load's tail)
    assert checked["rows_of_16"]["tail"] == "n = 4112"
    found = sorted((f.kind, f.line, f.arg, f.witness.get("size")) for f in a.findings if f.kind != "sizes-comment")
    assert found == [("oob-sizes", 19, "x_ptr", "n = 4112")], [f.message for f in a.findings]
    # the conditions that name no integer argument are said at their comment's line, and ignored
    said = [(f.line, f.severity, f.message) for f in a.findings if f.kind == "sizes-comment"]
    assert [(line, sev) for line, sev, _ in said] == [(22, "warning"), (22, "warning")]
    assert "`m > 3` names `m`, which is no integer argument of `misnamed`" in said[0][2]
    # with z3, the unmasked accesses of whole_blocks are proved for every n the conditions admit, and say so
    if z3_module() is not None:
        proved = checked["whole_blocks"]["proved"]
        assert [(p["upto"], p["limit"]) for p in proved] == [(2**20, "stated")] * 2
        assert "`# triton-lens: sizes n % 1024 == 0`" in proved[0]["assuming"]
    assert "`x_ptr > 0` names `x_ptr` (a tensor)" in said[1][2] and "constexprs: BLOCK, n)" in said[1][2]


WRAPS = """
import torch
import triton
import triton.language as tl


{comment}
@triton.jit
def rows(x_ptr, y_ptr, n_rows, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    tl.store(y_ptr + row * stride + cols, tl.load(x_ptr + row * stride + cols))


x = torch.randn(64, 4096)
y = torch.empty_like(x)
rows[(x.shape[0],)](x, y, x.shape[0], x.stride(0), BLOCK=4096)
"""


def test_an_upper_bound_keeps_the_wrap_check_below_it(tmp_path):
    _, plain = _run(tmp_path, WRAPS.format(comment=""))
    assert {(f.kind, f.witness["size"]) for f in plain.findings} == {("wrap", "n_rows = 524289")}
    _, bounded = _run(tmp_path, WRAPS.format(comment="# triton-lens: sizes n_rows <= 2**19"))
    assert bounded.findings == []


@pytest.mark.parametrize(
    "comment", ["# triton-lens: sizes n_rows <= 2**19 + 1", "# triton-lens: sizes n_rows % 2 == 1"]
)
def test_a_wrap_is_reported_at_the_smallest_size_the_conditions_admit(tmp_path, comment):
    _, a = _run(tmp_path, WRAPS.format(comment=comment))
    assert {(f.kind, f.witness["size"]) for f in a.findings} == {("wrap", "n_rows = 524289")}


CLAIMED = """
import torch
import triton
import triton.language as tl


@triton.jit
def claimed(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    n = tl.multiple_of(n, 1024)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2)


@triton.jit
def unclaimed(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * 2)


n = 4096
x = torch.randn(n)
out = torch.empty(n)
claimed[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
unclaimed[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
"""


def test_a_size_that_breaks_a_scalars_multiple_of_is_not_admitted(tmp_path):
    """The compiled kernel takes `tl.multiple_of(n, 1024)` as true: n = 4097 is no size it admits (a
    re-launch there raises, as under a broken tl.assume), while the same kernel without the claim has a tail."""
    r, a = _run(tmp_path, CLAIMED)
    assert sorted({(f.kind, f.line) for f in a.findings}) == [("oob-sizes", 17)], [f.message for f in a.findings]
    if z3_module() is not None:  # z3 assumes the claim too: the unmasked accesses are proved under it
        (entry,) = next(L for L in r.launches if L.kernel == "claimed").size_checked
        assert {p["tensor"] for p in entry["proved"]} == {"x_ptr", "out_ptr"}
        assert all("`tl.multiple_of(n, 1024)`" in p["assuming"] for p in entry["proved"])
