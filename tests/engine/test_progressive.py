"""Progressive results (trace_engine/recording/progressive.py) leave the complete run as it was: with every launch
of 2+ programs sampled in a fork (the thresholds lowered), each corpus file gives the very launches,
findings and hints a run without them gives; every snapshot is a launch's real programs, complete=False."""

from __future__ import annotations

import os

import numpy as np
import pytest
from markers import corpus_files
from test_engine_corpus import analysed

from triton_lens.analysis import analyze
from triton_lens.trace_engine.process.runner import RunRequest, run
from triton_lens.trace_engine.recording.progressive import sample_positions, sample_size

pytestmark = pytest.mark.engine

FORCE = {
    "TRITON_LENS_PARTIAL_MIN_PROGRAMS": "2",
    "TRITON_LENS_PARTIAL_MIN_SECONDS": "0",
    "TRITON_LENS_PARTIAL_PROBE_SECONDS": "0",
}
# Order-sensitive ones first (atomics, a lock, races, several launches), then the rest.
FIRST = ("atomic_histogram", "lock_critical_section", "race_read_write", "race_write_write", "multi_launch")
FILES = sorted(
    (cf for cf in corpus_files() if not any(e.kind == "timeout" for e in cf.expects)),
    key=lambda cf: (not cf.name.startswith(FIRST), cf.name),
)
COLUMNS = ("ex_site", "ex_program", "ex_lanes", "ex_active", "ex_oob", "ex_overrun")  # (ex_vhash: per process)


def test_the_sample_has_the_corners_and_spreads_evenly():
    assert sample_positions((100, 1, 1), 5) == [0, 25, 50, 74, 99]
    got = sample_positions((4, 3, 2), 2)
    assert {0, 23} <= set(got) and (3 * 3 + 2) * 2 + 1 in got  # corners: (0,0,0), (3,2,1), (3,2,0)...
    assert sample_size(1823, 0.002, 0.02, 16, 48, 0.6) == 37
    assert sample_size(64, 0.08, 0.02, 16, 48, 0.6) == 3  # at most a twentieth of the launch
    assert sample_size(10_000, 0.125, 0.02, 16, 48, 0.6) == 4  # at most 0.6 s of programs


def _shape(r):
    return [(t.kernel, t.grid, t.complete, len(t.ex_site)) for t in r.launches]


@pytest.mark.parametrize("cf", FILES, ids=[cf.name for cf in FILES])
def test_a_sampled_run_completes_as_a_plain_one(cf):
    fa = analysed(cf)  # the corpus test's plain run (120 s limit; cached there, and tests/xdist_scopes.py
    plain = fa.result  # sends a corpus file's tests of the three engine files to one process)
    snaps: list = []
    env = dict(os.environ, **FORCE)
    prog = run(RunRequest(path=str(cf.path), timeout_s=120, env=env, progressive=True), on_partial=snaps.append)
    assert (prog.status, _shape(prog)) == (plain.status, _shape(plain))
    for a, b in zip(plain.launches, prog.launches):
        for c in COLUMNS:
            assert np.array_equal(getattr(a, c), getattr(b, c)), (a.kernel, c)
        for s in ("touched", "masked", "oob"):
            for k, v in getattr(a, s).arrays().items():
                assert np.array_equal(v, getattr(b, s).arrays()[k]), (a.kernel, s, k)
        assert a.values.keys() == b.values.keys()
        if any(e.kind in ("uninit", "unwritten") for e in cf.expects):
            continue  # torch.empty's garbage differs from process to process, progressive or not
        for i in a.values:
            assert np.array_equal(a.values[i], b.values[i], equal_nan=True), (a.kernel, i)
    fb = analyze(prog)
    assert [(f.kind, f.line, f.message) for f in fa.findings] == [(f.kind, f.line, f.message) for f in fb.findings]
    assert [s.__dict__ for s in fa.accesses] == [s.__dict__ for s in fb.accesses]
    for p in snaps:
        t = p.result.launches[-1]
        assert not t.complete and t.index == p.launch and p.programs_done <= p.programs_total == t.n_programs
        assert set(t.ex_program.tolist()) <= set(range(t.n_programs))
        assert [x.index for x in p.result.launches[:-1]] == [x.index for x in prog.launches if x.index < p.launch]


LONG = """
import torch
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for i in range(12):
        acc += tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, acc, mask=offs < n)


n = 1024 * 64
x = torch.rand(n)
out = torch.empty(n)
k[(1024,)](x, out, n, BLOCK=64)
"""


def test_a_long_launch_sends_its_partial_before_the_launch_every_time(tmp_path):
    # A worker that just started (no spare kept warm): with the child's frame relayed by a thread of the
    # worker, the interpreter's main thread kept the GIL from it and the partial came after the launch,
    # or never, in about one run of four.
    script = tmp_path / "long.py"
    script.write_text(LONG)
    for _ in range(3):
        order: list[str] = []
        r = run(
            RunRequest(path=str(script), timeout_s=120, progressive=True),
            on_partial=lambda p, order=order: order.append(f"partial {p.programs_done} of {p.programs_total}"),
            on_launch=lambda t, order=order: order.append("launch"),
        )
        assert r.status == "ok" and len(r.launches) == 1
        assert len(order) == 2 and order[0].endswith("of 1024") and order[1] == "launch", order


def test_the_sample_child_is_reaped_and_its_pipe_closed_by_the_launch_end(tmp_path):
    # progressive.py: the child writes its frame, says so with a byte on a pipe and exits; the parent takes
    # the frame when the byte comes (not when the child has exited) and reaps the child at the launch's end.
    # After the launch the script's process has no child left (no zombie) and no descriptor more than before.
    script = tmp_path / "reaped.py"
    script.write_text(
        "import os\n"
        "before = sorted(os.listdir('/proc/self/fd'))\n" + LONG + "after = sorted(os.listdir('/proc/self/fd'))\n"
        "try:\n"
        "    left = os.waitpid(-1, os.WNOHANG)\n"
        "except ChildProcessError:\n"
        "    left = 'none'\n"
        "print('CHILDREN', left, 'FDS', len(after) - len(before))\n"
    )
    partials = []
    r = run(RunRequest(path=str(script), timeout_s=120, progressive=True), on_partial=partials.append)
    assert r.status == "ok" and len(partials) == 1, (r.status, r.error)
    assert "CHILDREN none FDS 0" in r.stdout, r.stdout
