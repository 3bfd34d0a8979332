"""A launch's programs over several processes (trace_engine/recording/parallel.py, issue 13): the `check --json` of every
corpus file is the same with --workers 2 as with --workers 1 (apart from timings), every marker holds
with 2 workers, and what cannot be split (atomics, an exception, a crash) runs as one process would.

The tests lower the thresholds (TRITON_LENS_PARALLEL_*) so that even the corpus's small launches are
split after their first program, and read the report the engine writes for each split launch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import triton
from markers import corpus_files
from test_engine_corpus import HANG_LIMIT_S, analysed, check

from triton_lens.analysis import analyze
from triton_lens.trace_engine.process.runner import RunRequest, run
from triton_lens.trace_engine.recording.parallel import CHUNK_SPLIT, MAX_CHUNKS, chunk_plan

pytestmark = pytest.mark.engine

FILES = [cf for cf in corpus_files() if cf.applies_to(triton.__version__)]


def split_env(report) -> dict:
    return dict(
        os.environ,
        TRITON_LENS_PARALLEL_MIN_PROGRAMS="2",
        TRITON_LENS_PARALLEL_MIN_SECONDS="0",
        TRITON_LENS_PARALLEL_PROBE_SECONDS="0",
        TRITON_LENS_PARALLEL_REPORT=str(report),
    )


def early_env(report) -> dict:
    """As split_env, with every launch judged by its second program (parallel.EARLY_PROGRAMS), never by time."""
    return dict(split_env(report), TRITON_LENS_PARALLEL_EARLY_PROGRAMS="2", TRITON_LENS_PARALLEL_PROBE_SECONDS="60")


def splits(report) -> list[dict]:
    if not os.path.exists(report):
        return []
    with open(report) as f:
        return [json.loads(line) for line in f]


def without_timings(o):
    if isinstance(o, dict):
        return {k: without_timings(v) for k, v in o.items() if k != "seconds"}
    if isinstance(o, list):
        return [without_timings(v) for v in o]
    return o


def without_where_stopped(report: dict) -> dict:
    """A stopped run's report without the line and stack it was stopped at (the loop's `while` or its body)."""
    out = without_timings(report)
    if out.get("error"):
        out["error"] = {k: v for k, v in out["error"].items() if k not in ("line", "traceback")}
    out["findings"] = [
        {k: v for k, v in f.items() if k not in ("line", "end_line", "detail")} if f["kind"] == "timeout" else f
        for f in out["findings"]
    ]
    return out


_runs: dict = {}


def runs_of(cf, tmp_path_factory):
    """(one-process analysis, two-worker analysis, the split report) of a corpus file, run once each."""
    if cf.name not in _runs:
        report = tmp_path_factory.mktemp("split") / "report.jsonl"
        timeout = HANG_LIMIT_S if any(e.kind == "timeout" for e in cf.expects) else 120.0
        one = analysed(cf)  # the corpus test's one-process run (cached there: the full suite runs each file once)
        two = analyze(run(RunRequest(path=str(cf.path), timeout_s=timeout, workers=2, env=split_env(report))))
        _runs[cf.name] = (one, two, splits(report))
    return _runs[cf.name]


@pytest.mark.parametrize("cf", FILES, ids=[cf.name for cf in FILES])
def test_check_json_is_the_same_with_two_workers(cf, tmp_path_factory):
    one, two, _ = runs_of(cf, tmp_path_factory)
    if one.result.status == "timeout":  # where a spinning script was stopped is timing, not the engine
        assert without_where_stopped(two.to_json()) == without_where_stopped(one.to_json())
    else:
        assert without_timings(two.to_json()) == without_timings(one.to_json())
    # (Tensor values are compared by the seeded scripts below: most corpus files draw unseeded inputs.)


CASES = [pytest.param(cf, e, id=f"{cf.name}:{e.line}:{e.kind}:{'-'.join(e.words)}") for cf in FILES for e in cf.expects]


@pytest.mark.parametrize("cf,e", CASES)
def test_marker_holds_with_two_workers(cf, e, tmp_path_factory):
    check(runs_of(cf, tmp_path_factory)[1], e)


# What the split reports of a few corpus files say: launches were split and merged, kernels with atomics
# were not. One test per file, scheduled with the file's other tests (tests/xdist_scopes.py), so that its
# runs are the ones those tests made (a whole-corpus count here ran every file again in its own process).
SPLIT_EXPECTED = {
    "softmax.py": "every launch split over two children and merged",
    "matmul.py": "every launch split over two children and merged",
    "atomic_histogram.py": "not split: its one kernel adds with tl.atomic_add",
    "lock_critical_section.py": "only the kernel without atomics split; the spin lock's runs in one process",
}
SPLIT_FILES = [cf for cf in FILES if cf.name in SPLIT_EXPECTED]


@pytest.mark.parametrize("cf", SPLIT_FILES, ids=[cf.name for cf in SPLIT_FILES])
def test_the_corpus_was_really_split(cf, tmp_path_factory):
    """The comparisons above mean something: launches were split and merged, kernels with atomics were not."""
    report = runs_of(cf, tmp_path_factory)[2]
    if cf.name in ("softmax.py", "matmul.py"):
        assert report and all(s["merged"] and s["children"] == ["ok", "ok"] for s in report), report
    elif cf.name == "atomic_histogram.py":
        assert report == []
    else:
        assert [s["kernel"] for s in report] == ["unlocked_accumulate"], report


def _script(tmp_path, body: str):
    p = tmp_path / "k.py"
    p.write_text(textwrap.dedent(body))
    return p


HEADER = """
    import torch, triton, triton.language as tl
    torch.manual_seed(0)
"""


def _both(path, tmp_path, env_of=split_env, **kw):
    report = tmp_path / "report.jsonl"
    env = env_of(report)
    one = run(RunRequest(path=str(path), workers=1, env=env, **kw))
    two = run(RunRequest(path=str(path), workers=2, env=env, **kw))
    return one, two, splits(report)


def test_chunks_cover_the_programs_in_order_and_shrink():
    # Vector add on 16 workers (0.64 ms a program): 1/32 of the rest each, then 8 programs (5 ms) at least.
    plan = chunk_plan(16, 4096, 16, 0.00064)
    assert plan[0] == (16, 16 + 4080 // (CHUNK_SPLIT * 16)) and plan[-1][1] == 4096
    assert all(a[1] == b[0] for a, b in zip(plan, plan[1:]))  # contiguous, in program order
    sizes = [hi - lo for lo, hi in plan]
    assert sizes == sorted(sizes, reverse=True) and min(sizes[:-1]) == 8 and len(plan) < 200
    # A slow program (layer norm, 28 ms): single programs at the end.
    assert [hi - lo for lo, hi in chunk_plan(1, 1024, 16, 0.028)][-5:] == [1] * 5
    # No timing yet, or a huge launch: every program covered, never more chunks than the queue holds.
    assert chunk_plan(0, 3, 8, 0.0) == [(0, 1), (1, 2), (2, 3)]
    big = chunk_plan(0, 10**6, 2, 1e-6)
    assert len(big) <= MAX_CHUNKS and big[-1][1] == 10**6


def test_a_child_held_up_leaves_the_other_chunks_to_the_others(tmp_path):
    # Program 1 (the first chunk's) waits until program 99 has run: with chunks fixed per child at the
    # split the first child would wait for the second's last program of the launch. Taken from a queue,
    # the other child runs every chunk after the first while the first one waits.
    flag = tmp_path / "99-ran"
    path = _script(
        tmp_path,
        HEADER
        + f"""
    import os, time

    @triton.jit
    def k(x, o, B: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * B + tl.arange(0, B)
        tl.store(o + offs, tl.load(x + offs) + 1)
        time.sleep(0.006)  # (longer than a chunk's least work: chunks of one program at least)
        if pid == 1:
            t0 = time.monotonic()
            while not os.path.exists({str(flag)!r}) and time.monotonic() - t0 < 60:
                time.sleep(0.01)
        if pid == 99:
            open({str(flag)!r}, "w").close()

    x = torch.randn(100 * 16); o = torch.zeros(100 * 16)
    k[(100,)](x, o, B=16)
    print(bool(torch.equal(o, x + 1)))
    """,
    )
    report = tmp_path / "report.jsonl"
    r = run(RunRequest(path=str(path), workers=2, env=split_env(report), timeout_s=120))
    assert r.status == "ok" and r.stdout.strip() == "True", (r.status, r.error)
    (s,) = splits(report)
    first = chunk_plan(1, 100, 2, 0.006)[0]
    assert s["merged"] and sorted(s["chunks"]) == [first[1] - first[0], 99 - (first[1] - first[0])], s
    assert s["n_chunks"] > 2


def test_children_are_forked_as_a_tree_and_the_result_is_one_process_s(tmp_path):
    # 4 workers: the parent forks the children of slots 2 (which forks slot 3's), 1 and 0.
    path = _script(
        tmp_path,
        HEADER
        + """
    @triton.jit
    def k(x, o, n, B: tl.constexpr):
        offs = tl.program_id(0) * B + tl.arange(0, B)
        m = offs < n
        tl.store(o + offs, tl.load(x + offs, mask=m) * 3 + 1, mask=m)

    n = 200 * 16 - 5
    x = torch.randn(n); o = torch.zeros(n)
    k[(200,)](x, o, n, B=16)
    print(bool(torch.equal(o, x * 3 + 1)))
    """,
    )
    report = tmp_path / "report.jsonl"
    env = split_env(report)
    one = run(RunRequest(path=str(path), workers=1, env=env))
    four = run(RunRequest(path=str(path), workers=4, env=env))
    assert one.status == four.status == "ok" and four.stdout.strip() == "True", (four.status, four.error)
    (s,) = splits(report)
    assert s["merged"] and s["children"] == ["ok"] * 4 and s["forked_by"] == [-1, -1, -1, 2], s
    assert without_timings(analyze(four).to_json()) == without_timings(analyze(one).to_json())


def test_the_stores_are_written_while_the_children_exit_and_all_are_reaped_by_the_launch_s_end(tmp_path):
    # The children linger after their result (as the exit of a process with a large address space does,
    # each waiting for the children it forked): the parent writes the stores without waiting for them,
    # into pages they released before their results, and reaps them before the launch returns.
    path = _script(
        tmp_path,
        HEADER
        + """
    import os, posix, time, types
    from triton_lens.trace_engine.recording import parallel
    parallel.posix = types.SimpleNamespace(_exit=lambda code: (time.sleep(0.5), posix._exit(code)))

    @triton.jit
    def k(x, o, B: tl.constexpr):
        offs = tl.program_id(0) * B + tl.arange(0, B)
        tl.store(o + offs, tl.load(x + offs) * 3 + 1)

    x = torch.randn(200 * 1024); o = torch.ones(200 * 1024)  # o's pages are the script's before the split
    k[(200,)](x, o, B=1024)
    print(bool(torch.equal(o, x * 3 + 1)))
    print("children left", open(f"/proc/self/task/{os.getpid()}/children").read().split())
    """,
    )
    report = tmp_path / "report.jsonl"
    r = run(RunRequest(path=str(path), workers=4, env=split_env(report)))
    assert r.status == "ok" and r.stdout.splitlines() == ["True", "children left []"], (r.status, r.error, r.stdout)
    (s,) = splits(report)
    assert s["merged"] and s["children"] == ["ok"] * 4 and s["forked_by"] == [-1, -1, -1, 2], s
    assert s["alive_at_write"] == 3, s  # the parent's three children, all still exiting
    assert all(b >= 400 * 1024 for b in s["child_released"]), s  # each released (most of) x's and o's pages
    assert s["reaped_ms"] > s["frames_ms"][-1][0] + 500, s  # reaped at the launch's end, after they lingered


@pytest.mark.parametrize("writes", ["logged", "always"])
def test_the_stored_bytes_go_through_the_slots_files_not_the_pipes(tmp_path, writes):
    # 512 programs store 4 MB: the parent reads the children's stored bytes from their slots' files
    # (store_log.StoreFile); the pipes carry the records, a small part of that. A child keeps its stores
    # out of its own memory (child_writes.py: this kernel never loads what it stores) unless the setting
    # has it write them through.
    path = _script(
        tmp_path,
        HEADER
        + """
    @triton.jit
    def k(x, o, B: tl.constexpr):
        offs = tl.program_id(0) * B + tl.arange(0, B)
        tl.store(o + offs, tl.load(x + offs) + 1)

    x = torch.randn(512 * 2048); o = torch.zeros(512 * 2048)
    k[(512,)](x, o, B=2048)
    print(bool(torch.equal(o, x + 1)))
    """,
    )
    report = tmp_path / "report.jsonl"
    env = split_env(report)
    if writes == "always":
        env["TRITON_LENS_PARALLEL_CHILD_WRITES"] = "1"
    r = run(RunRequest(path=str(path), workers=2, env=env))
    assert r.status == "ok" and r.stdout.strip() == "True", (r.status, r.error, r.stdout)
    (s,) = splits(report)
    stored = (512 - s["probe"]) * 2048 * 4  # what the children's programs stored
    assert s["merged"] and s["filed_bytes"] == stored, s
    assert 0 < s["piped_bytes"] < stored / 20, s
    # Each chunk's programs, CPU seconds and page faults. Written to a child's own copy of o, its stores
    # fault at each of o's pages they write first since the fork: 8 KB a program, 2 faults a program at
    # least in every chunk. Logged only, the chunks after a child's first (which copies the heap pages its
    # recording writes) fault less than once a program, both children together, give or take 64 pages the
    # heap may grow into (a child whose later chunks ran 10 programs met 18 faults).
    assert s["child_wrote_through"] == ([None, None] if writes == "logged" else ["always", "always"]), s
    later_programs = later_faults = 0
    for ran, chunks, faults in zip(s["chunks"], s["child_chunk_cpu"], s["child_minflt"]):
        assert sum(c[0] for c in chunks) == ran and all(c[1] > 0 for c in chunks), s
        assert sum(c[2] for c in chunks) <= faults, s
        if writes == "always":
            assert all(c[2] >= 2 * c[0] for c in chunks), s
        later_programs += sum(c[0] for c in chunks[1:])
        later_faults += sum(c[2] for c in chunks[1:])
    if writes == "logged":
        assert later_faults < later_programs + 64, s


def test_a_child_writes_its_stores_to_its_memory_once_a_load_could_read_them(tmp_path):
    # A program that loads what it stored (o, then o2 from o): each child writes what it logged before
    # that load, and each store after it as it comes. An in-place kernel (each program loads its block of
    # p, then stores it): no load reads a pending store, and no child writes one.
    path = _script(
        tmp_path,
        HEADER
        + """
    @triton.jit
    def read_back(x, o, o2, B: tl.constexpr):
        offs = tl.program_id(0) * B + tl.arange(0, B)
        tl.store(o + offs, tl.load(x + offs) + 1)
        tl.store(o2 + offs, tl.load(o + offs) * 2)

    @triton.jit
    def in_place(p, B: tl.constexpr):
        offs = tl.program_id(0) * B + tl.arange(0, B)
        tl.store(p + offs, tl.load(p + offs) * 2)

    x = torch.randn(64 * 256); o = torch.zeros(64 * 256); o2 = torch.zeros(64 * 256)
    read_back[(64,)](x, o, o2, B=256)
    p = torch.randn(64 * 256); before = p.clone()
    in_place[(64,)](p, B=256)
    print(bool(torch.equal(o, x + 1)), bool(torch.equal(o2, (x + 1) * 2)), bool(torch.equal(p, before * 2)))
    """,
    )
    one, two, reports = _both(path, tmp_path)
    for r in (one, two):
        assert r.status == "ok" and r.stdout.split() == ["True"] * 3, (r.status, r.error, r.stdout)
    assert len(reports) == 2 and all(s["merged"] for s in reports), reports
    assert [s["child_wrote_through"] for s in reports] == [["load", "load"], [None, None]], reports
    assert without_timings(analyze(two).to_json())["findings"] == without_timings(analyze(one).to_json())["findings"]


@pytest.mark.parametrize("env_of", [split_env, early_env], ids=["probe", "early"])
def test_a_progressive_sample_s_partial_comes_while_the_split_launch_runs(tmp_path, env_of):
    # The sample (programs 0, 50, 99) is forked before the split; program 98, in a split child, waits
    # for the file the partial's callback writes: a partial handed on only after the launch would come
    # after a 30 s wait. A launch judged by its second program (early) waits for its sample's probe and
    # fork all the same.
    flag = tmp_path / "partial-came"
    path = _script(
        tmp_path,
        HEADER
        + f"""
    import os, time

    @triton.jit
    def k(x, o, B: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * B + tl.arange(0, B)
        tl.store(o + offs, tl.load(x + offs) * 2)
        if pid == 98:
            t0 = time.monotonic()
            while not os.path.exists({str(flag)!r}) and time.monotonic() - t0 < 30:
                time.sleep(0.01)
            print("partial before program 98 ended:", os.path.exists({str(flag)!r}))

    x = torch.randn(100 * 16); o = torch.zeros(100 * 16)
    k[(100,)](x, o, B=16)
    """,
    )
    report = tmp_path / "report.jsonl"
    env = dict(
        env_of(report),
        TRITON_LENS_PARTIAL_MIN_PROGRAMS="2",
        TRITON_LENS_PARTIAL_MIN_SECONDS="0",
        TRITON_LENS_PARTIAL_PROBE_SECONDS="0",
        TRITON_LENS_SAMPLE_MAX="2",
    )
    partials = []

    def on_partial(p):
        partials.append(p.programs_done)
        flag.write_text("")

    r = run(RunRequest(path=str(path), workers=2, env=env, progressive=True, timeout_s=120), on_partial=on_partial)
    assert r.status == "ok", (r.status, r.error)
    assert partials and splits(report)[0]["merged"], (partials, splits(report))
    assert splits(report)[0]["probe"] >= 1  # (the sample forked first: the split came after its probe)
    assert "partial before program 98 ended: True" in r.stdout, r.stdout


@pytest.mark.parametrize("env_of", [split_env, early_env], ids=["probe", "early"])
def test_a_split_launch_records_and_stores_exactly_what_one_process_does(tmp_path, env_of):
    # Contiguous and scattered stores, a @jit helper first called in a child, out-of-bounds lanes; split
    # after a probe of one program, or after two (early: judged by the second).
    path = _script(
        tmp_path,
        HEADER
        + """
    @triton.jit
    def add(x, y, o, n, B: tl.constexpr):
        offs = tl.program_id(0) * B + tl.arange(0, B)
        m = offs < n
        tl.store(o + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)

    @triton.jit
    def helper(p, offs):
        return tl.load(p + offs)

    @triton.jit
    def scatter(x, idx, o, B: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * B + tl.arange(0, B)
        i = tl.load(idx + offs)
        v = tl.load(x + offs)
        if pid > 10:
            v = helper(x, i)
        tl.store(o + i, v * 2)
        if pid == 40:
            tl.store(o + offs + 100000, v)  # out of bounds: never stored

    n = 10000
    x, y, o = torch.randn(n), torch.randn(n), torch.empty(n)
    add[(triton.cdiv(n, 128),)](x, y, o, n, B=128)
    idx = torch.randperm(4096).to(torch.int32)
    g = torch.zeros(4096, dtype=torch.float16)
    scatter[(64,)](x, idx, g, B=64)
    """,
    )
    one, two, report = _both(path, tmp_path, env_of)
    assert one.status == two.status == "ok", (one.error, two.error)
    assert [s["kernel"] for s in report] == ["add", "scatter"] and all(s["merged"] for s in report)
    assert [s["probe"] for s in report] == ([2, 2] if env_of is early_env else [1, 1])
    for a, b in zip(one.launches, two.launches):
        assert a.sites == b.sites
        for c in ("ex_site", "ex_program", "ex_lanes", "ex_active", "ex_oob"):
            assert np.array_equal(getattr(a, c), getattr(b, c)), c
        for s in ("touched", "masked", "oob"):
            for k, v in getattr(a, s).arrays().items():
                assert np.array_equal(v, getattr(b, s).arrays()[k]), (s, k)
        assert sorted(a.values) == sorted(b.values)
        for i in a.values:
            assert np.array_equal(a.values[i], b.values[i]), (a.kernel, a.tensors[i].name)
    split, single = without_timings(analyze(two).to_json()), without_timings(analyze(one).to_json())
    # (seen once differing in the findings alone, every array equal, on triton 3.2 in a fresh clone: say which)
    only = [(f["kind"], f["line"], f["message"]) for f in split["findings"] if f not in single["findings"]]
    missing = [(f["kind"], f["line"], f["message"]) for f in single["findings"] if f not in split["findings"]]
    assert split == single, ("split only:", only, "one process only:", missing)
    assert any(f["kind"] == "oob" for f in split["findings"])


@pytest.mark.parametrize("env_of", [split_env, early_env], ids=["probe", "early"])
def test_an_exception_in_a_childs_program_is_the_one_process_exception(tmp_path, env_of):
    path = _script(
        tmp_path,
        HEADER
        + """
    @triton.jit
    def k(x, o, B: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * B + tl.arange(0, B)
        v = tl.load(x + offs)
        if pid == 70:
            v = v + tl.load(x + offs + 2 * B, mask=offs > 0)[:2]   # a shape error, in that program only
        tl.store(o + offs, v)

    x = torch.randn(100 * 16); o = torch.zeros(100 * 16)
    k[(100,)](x, o, B=16)
    """,
    )
    one, two, report = _both(path, tmp_path, env_of)
    assert one.status == two.status == "exception"
    assert (two.error.type, two.error.message, two.error.line, two.error.traceback) == (
        one.error.type,
        one.error.message,
        one.error.line,
        one.error.traceback,
    )
    assert without_timings(analyze(two).to_json()) == without_timings(analyze(one).to_json())
    # (whichever child took that program's chunk)
    assert report and sorted(report[0]["children"]) == ["error", "ok"] and not report[0]["merged"]


def test_the_parent_s_loop_ends_at_the_split_and_the_outputs_come_back_to_the_device(tmp_path):
    # Once the children's results are merged, the parent's grid loop ends at the split's program
    # (compat.END_LOOP), not after one visit per program still to come, and tensors made for "cuda" (the
    # CPU stand-in, whose host copy is the tensor itself) hold the output. (That the copy back to the device
    # arguments runs is test_loop_end.py's: here it would have nothing to copy.)
    path = _script(
        tmp_path,
        HEADER
        + """
    @triton.jit
    def k(x, o, B: tl.constexpr):
        offs = tl.program_id(0) * B + tl.arange(0, B)
        tl.store(o + offs, tl.load(x + offs) * 2)

    x = torch.randn(300 * 16, device="cuda"); o = torch.zeros(300 * 16, device="cuda")
    k[(300,)](x, o, B=16)
    print(o.device.type, bool(torch.equal(o.cpu(), x.cpu() * 2)))
    """,
    )
    report = tmp_path / "report.jsonl"
    r = run(RunRequest(path=str(path), workers=2, env=split_env(report), timeout_s=120))
    assert r.status == "ok" and r.stdout.split() == ["cuda", "True"], (r.status, r.error, r.stdout)
    (s,) = splits(report)
    assert s["merged"] and s["parent_visits"] == s["probe"] + 1, s


def test_a_large_launch_is_judged_by_its_second_program(tmp_path):
    # (early_programs lowered to 2, the probe's time never reached, min_seconds 0.2) Both launches are
    # decided after two programs: the cheap one's rest (~40 us a program) is far under 2 * min_seconds and
    # stays in one process, the slow one's (20 ms a program, after a 200 ms first) is split, its chunks
    # sized by the second program's time alone.
    path = _script(
        tmp_path,
        HEADER
        + """
    import time

    @triton.jit
    def cheap(o):
        tl.store(o + tl.program_id(0), 1.0)

    @triton.jit
    def slow(x, o, B: tl.constexpr):
        pid = tl.program_id(0)
        time.sleep(0.2 if pid == 0 else 0.02)
        offs = pid * B + tl.arange(0, B)
        tl.store(o + offs, tl.load(x + offs) + 1)

    c = torch.zeros(300); cheap[(300,)](c)
    x = torch.randn(64 * 16); o = torch.zeros(64 * 16)
    slow[(64,)](x, o, B=16)
    print(bool(torch.equal(c, torch.ones(300))), bool(torch.equal(o, x + 1)))
    """,
    )
    report = tmp_path / "report.jsonl"
    env = dict(early_env(report), TRITON_LENS_PARALLEL_MIN_SECONDS="0.2")
    r = run(RunRequest(path=str(path), workers=2, env=env, timeout_s=120))
    assert r.status == "ok" and r.stdout.split() == ["True", "True"], (r.status, r.error, r.stdout)
    (s,) = splits(report)
    assert s["kernel"] == "slow" and s["probe"] == 2 and s["merged"], s
    # (the second program's 20 ms, not the first's 200 nor their mean)
    assert 0.02 <= s["per_program_s"] < 0.08 and s["n_chunks"] == len(chunk_plan(2, 64, 2, s["per_program_s"])), s


def test_a_child_that_cannot_keep_its_stored_bytes_leaves_the_launch_to_one_process(tmp_path):
    # No memory for a chunk's bytes in the child (simulated: the script makes every append fail once the
    # child has forked): the children end as errors, memory is untouched, and the parent runs the rest.
    path = _script(
        tmp_path,
        HEADER
        + """
    import os
    from triton_lens.trace_engine.recording import store_log

    PARENT = os.getpid()
    _append = store_log.StoreFile.append

    def append(self, data):
        if os.getpid() != PARENT:
            raise OSError(28, "No space left on device")
        return _append(self, data)

    store_log.StoreFile.append = append

    @triton.jit
    def k(x, o, B: tl.constexpr):
        offs = tl.program_id(0) * B + tl.arange(0, B)
        tl.store(o + offs, tl.load(x + offs) * 2)

    x = torch.randn(100 * 16); o = torch.zeros(100 * 16)
    k[(100,)](x, o, B=16)
    print(bool(torch.equal(o, x * 2)))
    """,
    )
    one, two, report = _both(path, tmp_path)
    assert one.status == two.status == "ok" and two.stdout.strip() == "True", (two.status, two.error, two.stdout)
    assert without_timings(analyze(two).to_json()) == without_timings(analyze(one).to_json())
    # Each child that took a chunk ends as an error; one forked after the first error had emptied the queue
    # (the parent takes the chunks left: `_drain`) takes none and ends well (seen under load: ["ok", "error"]).
    (s,) = report
    assert not s["merged"] and "error" in s["children"] and set(s["children"]) <= {"error", "ok"}, s


def test_a_split_that_cannot_open_its_store_files_runs_in_one_process_and_leaks_none(tmp_path):
    # The second slot's file cannot be made (out of descriptors, simulated): the first one is closed again
    # and the launch runs in one process.
    path = _script(
        tmp_path,
        HEADER
        + """
    import os
    from triton_lens.trace_engine.recording import store_log

    made = []
    _init = store_log.StoreFile.__init__

    def init(self):
        made.append(1)
        if len(made) == 2:
            raise OSError(24, "Too many open files")
        _init(self)

    store_log.StoreFile.__init__ = init

    @triton.jit
    def k(x, o, B: tl.constexpr):
        offs = tl.program_id(0) * B + tl.arange(0, B)
        tl.store(o + offs, tl.load(x + offs) + 1)

    x = torch.randn(100 * 16); o = torch.zeros(100 * 16)
    k[(100,)](x, o, B=16)  # (the first launch opens what the interpreter keeps open; it fails the same way)
    before = sorted(os.listdir("/proc/self/fd"))
    made.clear()
    k[(100,)](x, o, B=16)
    print(bool(torch.equal(o, x + 1)), len(made), sorted(os.listdir("/proc/self/fd")) == before)
    """,
    )
    report = tmp_path / "report.jsonl"
    r = run(RunRequest(path=str(path), workers=2, env=split_env(report)))
    assert r.status == "ok" and r.stdout.strip() == "True 2 True", (r.status, r.error, r.stdout)
    assert splits(report) == []  # (neither launch forked)


def test_an_atomic_the_kernel_code_hides_is_met_in_the_child_and_runs_in_one_process(tmp_path):
    # The atomic is in a helper reached through a dict: the static check cannot see it.
    path = _script(
        tmp_path,
        HEADER
        + """
    @triton.jit
    def bump(p, v):
        tl.atomic_add(p, v)

    HELPERS = {"bump": bump}

    @triton.jit
    def k(x, total, B: tl.constexpr):
        pid = tl.program_id(0)
        v = tl.sum(tl.load(x + pid * B + tl.arange(0, B)), axis=0)
        HELPERS["bump"](total, v)

    x = torch.arange(64 * 8, dtype=torch.float32); total = torch.zeros(1)
    k[(64,)](x, total, B=8)
    print(float(total[0]))
    """,
    )
    one, two, report = _both(path, tmp_path)
    assert one.status == two.status == "ok", (one.error, two.error)
    assert one.stdout.strip() == two.stdout.strip() == str(float(sum(range(64 * 8))))
    assert without_timings(analyze(two).to_json()) == without_timings(analyze(one).to_json())
    assert report and "atomic" in report[0]["children"] and not report[0]["merged"]


def test_a_crash_in_a_child_ends_the_run_as_in_one_process(tmp_path):
    path = _script(
        tmp_path,
        HEADER
        + """
    import os, signal

    @triton.jit
    def k(x, o, B: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * B + tl.arange(0, B)
        tl.store(o + offs, tl.load(x + offs))
        if pid == 90:
            os.kill(os.getpid(), signal.SIGSEGV)

    @triton.jit
    def first(x, o, B: tl.constexpr):
        offs = tl.program_id(0) * B + tl.arange(0, B)
        tl.store(o + offs, tl.load(x + offs) * 2)

    x = torch.randn(100 * 16); o = torch.zeros(100 * 16)
    first[(100,)](x, o, B=16)
    k[(100,)](x, o, B=16)
    """,
    )
    one, two, report = _both(path, tmp_path)
    assert one.status == two.status == "crashed"
    kill_line = path.read_text().splitlines().index("        os.kill(os.getpid(), signal.SIGSEGV)") + 1
    assert (two.error.type, two.error.line) == (one.error.type, one.error.line) == ("SIGSEGV", kill_line)
    assert len(one.launches) == len(two.launches) == 1  # the launch before the crash is kept
    assert [s["kernel"] for s in report] == ["first", "k"] and "lost" in report[1]["children"]


def test_the_memory_limit_counts_the_children(tmp_path):
    # Each program keeps 16 MB. The parent runs program 0 only (its 16 MB stay far below the limit);
    # the two children keep 1 GB each: only counting them stops the run.
    path = _script(
        tmp_path,
        HEADER
        + """
    import time
    import numpy as np
    KEEP = []

    @triton.jit
    def k(x, B: tl.constexpr):
        tl.load(x + tl.arange(0, B))
        KEEP.append(np.ones(1 << 21))
        time.sleep(0.02)

    x = torch.zeros(16)
    k[(129,)](x, B=16)
    """,
    )
    report = tmp_path / "report.jsonl"
    r = run(RunRequest(path=str(path), workers=2, memory_mb=900, env=split_env(report)))
    assert r.status == "crashed" and r.error.type == "MemoryLimit", (r.status, r.error)
    assert splits(report) == []  # stopped while the children ran: the parent never got their results


def test_the_memory_limit_counts_the_stored_bytes_waiting_in_memory_files():
    # A split's children leave their stored bytes in in-memory files that the worker holds and no process
    # maps (store_log.StoreFile): they show in no resident size, and the footprint counts them.
    from triton_lens.trace_engine.process.process_tree import footprint_bytes, memory_file_bytes, resident_bytes

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import os, sys; fd = os.memfd_create('held'); os.write(fd, b'x' * (64 << 20)); "
            "print('ready', flush=True); sys.stdin.read()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    try:
        assert holder.stdout.readline().strip() == b"ready"
        held = memory_file_bytes(holder.pid)
        assert held >= 64 << 20, held
        assert resident_bytes(holder.pid) < 64 << 20  # (written through the file, mapped by none)
        assert footprint_bytes(os.getpid()) >= resident_bytes(holder.pid) + held
    finally:
        holder.stdin.close()
        holder.wait()
    assert memory_file_bytes(holder.pid) == 0  # (a process that is gone holds none)


def test_check_cli_takes_workers(tmp_path):
    report = tmp_path / "report.jsonl"
    softmax = next(cf.path for cf in FILES if cf.name == "softmax.py")  # 64 programs
    out = {}
    for w in ("1", "2"):
        p = subprocess.run(
            [sys.executable, "-m", "triton_lens", "check", "--json", "--workers", w, str(softmax)],
            capture_output=True,
            text=True,
            env=split_env(report),
            timeout=300,
        )
        assert p.returncode == 0, p.stderr
        out[w] = without_timings(json.loads(p.stdout))
    assert out["1"] == out["2"]
    assert [s["workers"] for s in splits(report)] == [2] and splits(report)[0]["merged"]


def test_workers_setting_and_default():
    from triton_lens.lsp.settings import Settings
    from triton_lens.trace_engine.process.process_tree import default_workers, resolve_workers

    assert Settings().workers == 0 and resolve_workers(0) == default_workers()
    assert Settings().merged({"workers": 3}).workers == 3
    assert Settings().merged({"workers": -1}).workers == 0  # a bad value is ignored
    assert 1 <= default_workers() <= 15
    assert resolve_workers(4) == 4


def test_a_child_past_the_time_limit_says_where_it_was(tmp_path):
    path = _script(
        tmp_path,
        HEADER
        + """
    import time

    @triton.jit
    def k(x, o, B: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid * B + tl.arange(0, B)
        tl.store(o + offs, tl.load(x + offs))
        if pid == 90:
            time.sleep(1000)

    x = torch.randn(100 * 16); o = torch.zeros(100 * 16)
    k[(100,)](x, o, B=16)
    """,
    )
    # Each run waits the whole limit out. The limit counts from the script's start (runner.py: script_t0),
    # not the worker's, so 10 s is ample for the 100 programs before the sleep: the test passed at 5 s with
    # four busy loops on two cores. (At 60 s it took 130 s of CI's test-python.)
    one, two, _ = _both(path, tmp_path, timeout_s=10.0)
    sleep_line = path.read_text().splitlines().index("        time.sleep(1000)") + 1
    assert one.status == two.status == "timeout"
    assert one.error.line == two.error.line == sleep_line
