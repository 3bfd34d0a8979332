"""The z3 extra (trace_engine/recording/size_symbolic.py, `triton-lens[symbolic]`): where the re-run at n + 1 sees
nothing, z3 finds the smallest size where an active lane leaves its tensor, and a re-launch there
confirms it; without z3 the check is what it was."""

from __future__ import annotations

import ast
import importlib.util
import os
import textwrap

import pytest

from triton_lens.analysis import analyze
from triton_lens.trace_engine.process.runner import RunRequest, run

pytestmark = pytest.mark.engine

# z3 importable and not switched off (make test-engine32 / test-releases run without it: the extra is pure
# Python over the kernel's source, the same on every release, and test-python runs it on the newest)
HAS_Z3 = importlib.util.find_spec("z3") is not None and os.environ.get("TRITON_LENS_SYMBOLIC", "1") != "0"

# The first block taken as full: in bounds at n = 4096 and at n + 1 (program 0's lanes are inside x at
# both), out of bounds at every n below the block.
FIRST_BLOCK = """
import torch
import triton
import triton.language as tl


@triton.jit
def copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    first = (offs < n) | (offs < BLOCK)
    x = tl.load(x_ptr + offs, mask=first)
    tl.store(out_ptr + offs, x, mask=offs < n)


n = 4096
x = torch.randn(n)
out = torch.empty(n)
copy[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
assert torch.equal(out, x)
"""

TAIL = """
import torch
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x * 2, mask=offs < n)


n = 4096
x = torch.randn(n)
out = torch.empty(n)
scale[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
"""


def _sizes(tmp_path, text: str, without_z3: bool = False):
    p = tmp_path / "k.py"
    p.write_text(textwrap.dedent(text))
    env = None
    if without_z3:  # a z3 that cannot be imported, first on the worker's path: the machine without the extra
        stub = tmp_path / "no_z3" / "z3"
        stub.mkdir(parents=True, exist_ok=True)
        (stub / "__init__.py").write_text("raise ImportError('z3 is not installed here')\n")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(stub.parent), os.environ.get("PYTHONPATH", "")]))
    r = run(RunRequest(path=str(p), timeout_s=120, env=env))
    assert r.status == "ok", r.error
    return [f for f in analyze(r).findings if f.kind in ("oob-sizes", "wrap")]


@pytest.mark.skipif(
    not HAS_Z3,
    reason="z3 is off: z3-solver not installed (the optional extra triton-lens[symbolic]) or TRITON_LENS_SYMBOLIC=0",
)
def test_with_z3_the_smallest_failing_size_below_the_block_is_found_and_confirmed(tmp_path):
    found = _sizes(tmp_path, FIRST_BLOCK)
    assert [(f.kind, f.arg, f.line) for f in found] == [("oob-sizes", "x_ptr", 12)], [f.message for f in found]
    f = found[0]
    assert f.witness["size_value"] == 1 and f.witness["size"] == "n = 1" and f.witness["found_by"] == "z3"
    assert "z3 finds" in f.message and "confirmed by running" in f.message and "1023 active lanes" in f.message


def test_without_z3_the_check_is_the_cheap_path_alone(tmp_path):
    # n + 1 sees nothing here: without the extra there is no finding, exactly as before it existed ...
    assert _sizes(tmp_path, FIRST_BLOCK, without_z3=True) == []
    # ... and what the cheap path finds, it finds the same way with or without z3 (z3 only asks where it
    # left an access in bounds)
    plain = _sizes(tmp_path, TAIL, without_z3=True)
    assert [(f.kind, f.arg, f.witness["size"]) for f in plain] == [("oob-sizes", "x_ptr", "n = 4097")]
    assert "found_by" not in plain[0].witness and "z3" not in plain[0].message
    if HAS_Z3:
        assert [(f.message, f.witness) for f in _sizes(tmp_path, TAIL)] == [(f.message, f.witness) for f in plain]


@pytest.mark.skipif(
    not HAS_Z3,
    reason="z3 is off: z3-solver not installed (the optional extra triton-lens[symbolic]) or TRITON_LENS_SYMBOLIC=0",
)
def test_the_model_reads_straight_line_code_and_stops_at_a_loop():
    import z3

    from triton_lens.trace_engine.recording.size_symbolic import Model

    src = textwrap.dedent(
        """
        def k(x_ptr, n, BLOCK):
            offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
            tl.assume(n % 16 == 0)
            a = tl.load(x_ptr + offs, mask=offs < n)
            for i in range(3):
                b = tl.load(x_ptr + offs + i)
            c = tl.load(x_ptr + offs)
        """
    )
    fn = ast.parse(src).body[0]
    assert isinstance(fn, ast.FunctionDef)
    n = z3.Int("n")
    m = Model(z3, {"x_ptr": ("x_ptr", z3.IntVal(0)), "n": n, "BLOCK": z3.IntVal(64)}, [z3.IntVal(4)] * 3)
    m.walk(fn.body)
    assert [(a.line, a.kind, a.tensor) for a in m.accesses] == [(5, "load", "x_ptr")]  # none after the loop
    assert m.block == 64 and len(m.assumptions) == 1
    s = z3.Solver()
    s.add(m.accesses[0].mask, m.accesses[0].offset >= n, m.lane >= 0, m.lane < 64)
    assert s.check() == z3.unsat  # masked by offs < n: never at or past n


@pytest.mark.skipif(
    not HAS_Z3,
    reason="z3 is off: z3-solver not installed (the optional extra triton-lens[symbolic]) or TRITON_LENS_SYMBOLIC=0",
)
def test_the_queries_stop_at_the_launchs_resource_count_not_at_a_time():
    import z3

    from triton_lens.trace_engine.recording.size_symbolic import Access, Model, Work, witnesses

    m = Model(z3, {}, [z3.IntVal(1)] * 3)
    m.block = 64
    off = m.pid[0] * 64 + m.lane
    acc = Access(1, "load", "x", off, z3.BoolVal(True))  # unmasked: out of bounds at every n < 64
    work = Work()
    assert [w.size for w in witnesses(m, acc, (1, 0), 1, 1000, {64}, work)] == [1, 2, 3]  # smallest first
    assert 0 < work.left < Work().left  # each query's count spent from the launch's
    assert list(witnesses(m, acc, (1, 0), 1, 1000, {64}, Work(0))) == []  # nothing left: no query


# A kernel that takes no size: its bounds are constants (Triton-Viz's notebook demo). A smaller tensor is a
# host's bug, not a size the kernel admits: nothing the kernel sees (an integer argument, the grid) moves.
NO_SIZE_ARGUMENT = """
import torch
import triton
import triton.language as tl


@triton.jit
def demo(x_ptr, z_ptr):
    r = tl.arange(0, 8)
    x = tl.load(x_ptr + r, r < 5, 0)
    tl.store(z_ptr + r, x, r < 5)


z = torch.zeros(5)
demo[(1, 1, 1)](torch.ones(8), z)
"""


@pytest.mark.skipif(
    not HAS_Z3,
    reason="z3 is off: z3-solver not installed (the optional extra triton-lens[symbolic]) or TRITON_LENS_SYMBOLIC=0",
)
def test_with_z3_a_kernel_without_a_size_is_not_shrunk_below_its_constant_bounds(tmp_path):
    assert _sizes(tmp_path, NO_SIZE_ARGUMENT) == []


# A masked copy launched through a grid function (the tutorials' lambda) and through the launch statement,
# and a kernel whose programs step by 1000 over blocks of 1024: its `pid * 1000 + lane` leaves int32 once the
# last program passes 2**31 - 1, so its proof must stop there, where the run-based wrap check finds the wrap.
PROVED = """
import torch
import triton
import triton.language as tl


@triton.jit
def add(x_ptr, y_ptr, z_ptr, N, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    mask = offs < N
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def overlap(x_ptr, z_ptr, N, B: tl.constexpr):
    offs = tl.program_id(0) * 1000 + tl.arange(0, B)
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=offs < N), mask=offs < N)


@triton.jit
def narrowed(x_ptr, z_ptr, N, B: tl.constexpr):
    offs = (tl.program_id(0) * B + tl.arange(0, B)).to(tl.int16)
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=offs < N), mask=offs < N)


N = 4096
x, y, z = torch.randn(N), torch.randn(N), torch.empty(N)
add[lambda meta: (triton.cdiv(N, meta["B"]),)](x, y, z, N, B=1024)
add[(triton.cdiv(N, 512),)](x, y, z, N, 512)
overlap[(triton.cdiv(N, 1000),)](x, z, N, B=1024)
narrowed[(triton.cdiv(N, 1024),)](x, z, N, B=1024)
"""


@pytest.mark.skipif(
    not HAS_Z3,
    reason="z3 is off: z3-solver not installed (the optional extra triton-lens[symbolic]) or TRITON_LENS_SYMBOLIC=0",
)
def test_with_z3_an_access_in_bounds_at_every_size_is_proved_up_to_where_int32_holds(tmp_path):
    from triton_lens.lsp.hover import access_markdown

    p = tmp_path / "k.py"
    p.write_text(PROVED)
    r = run(RunRequest(path=str(p), timeout_s=120))
    assert r.status == "ok", r.error
    proofs = {(L.index, q["tensor"]): q for L in r.launches for c in L.size_checked for q in c.get("proved", [])}
    # add, through the grid function and the launch statement: every access, every N the int32 argument holds
    for launch, grid in ((0, "(triton.cdiv(N, meta['B']),)"), (1, "(triton.cdiv(N, 512),)")):
        for t in ("x_ptr", "y_ptr", "z_ptr"):
            q = proofs[(launch, t)]
            assert (q["size"], q["from"], q["upto"], q["limit"]) == ("N", 1, 2**31 - 1, "int32"), q
            assert f"the grid `{grid}`" in q["assuming"] and f"`{t}` holds N elements" in q["assuming"]
    # overlap: the proof stops just below the size at which the run-based check confirms the wrap
    wraps = {f.arg: f for f in analyze(r).findings if f.kind == "wrap"}
    for t in ("x_ptr", "z_ptr"):
        q = proofs[(2, t)]
        assert q["limit"] == "wrap" and q["inexact_from"] == q["upto"] + 1 == wraps[t].witness["size_value"], q
    # a cast to int16: the compiled kernel wraps at 16 bits, which the proof does not model: no claim
    assert not [k for k in proofs if k[0] == 3]
    # the hover says it, once for the launches proved over the same sizes
    a = analyze(r)
    rec = next(x for x in a.records if x.key[2] == "x_ptr" and x.facts is not None and x.facts.kernel == "add")
    text = access_markdown(rec)
    assert text.count("- **in bounds for every N ≤ 2,147,483,647**: z3 proves that no active lane leaves `x_ptr`") == 1
    assert "the largest N an int32 argument holds" in text


@pytest.mark.skipif(
    not HAS_Z3,
    reason="z3 is off: z3-solver not installed (the optional extra triton-lens[symbolic]) or TRITON_LENS_SYMBOLIC=0",
)
def test_the_proof_reads_division_as_the_gpu_truncates_it():
    """`(lane - 8) // 2` is -4 .. 3 under z3's Euclidean division of unbounded integers but the compiled
    kernel truncates toward zero (-3 .. 3): where a dividend can be negative the two readings differ, and no
    proof is claimed for the sizes where it can."""
    import z3

    from triton_lens.trace_engine.recording.size_symbolic import Access, Model, Work, proof

    m = Model(z3, {}, [z3.IntVal(1)] * 3)
    m.block = 16
    shifted = Access(1, "load", "x", (m.lane - 8) / 2 + 4, z3.BoolVal(True))  # 0 .. 7 Euclidean, 1 .. 7 truncated
    assert proof(m, shifted, (0, 8), 1, 100, Work()) is None
    plain = Access(1, "load", "x", m.lane / 2, z3.BoolVal(True))  # 0 .. 7 either way
    p = proof(m, plain, (0, 8), 1, 100, Work())
    assert p is not None and (p.upto, p.inexact_from) == (100, None)
    # an offset that leaves int32 as n grows: proved only below the first size where it does
    grows = Access(1, "load", "x", m.n * 4 + m.lane - 4 * m.n, z3.BoolVal(True))
    p = proof(m, grows, (0, 16), 1, 2**31, Work())
    # 4n + 15 (the last lane) fits int32 up to n = 536870908 (4n + 15 = 2**31 - 1)
    assert p is not None and (p.upto, p.inexact_from) == (536870908, 536870909)
