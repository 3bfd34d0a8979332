"""A user's script that raises, exits, segfaults, or allocates without bound: the launches that
finished before are kept, the failure is a clear finding at the right line, nothing hangs."""

from __future__ import annotations

from pathlib import Path

from markers import CORPUS

from triton_lens.analysis import analyze
from triton_lens.trace_engine.process.runner import RunRequest, run

SCRIPTS = Path(__file__).parent / "scripts"


def _run(name: str, **kw):
    r = run(RunRequest(path=str(SCRIPTS / name), timeout_s=kw.pop("timeout_s", 60.0), **kw))
    return r, analyze(r)


def _inc_stats_kept(a):
    store = [s for s in a.accesses if s.kind == "store" and s.arg == "x_ptr"]
    assert store and store[0].active == 100 and store[0].unique == 100, a.accesses


def test_segfault_keeps_earlier_launch_and_reports_the_line():
    r, a = _run("segfaults.py")
    assert r.status == "crashed" and r.error.type == "SIGSEGV"
    assert len(r.launches) == 1
    _inc_stats_kept(a)
    (f,) = [f for f in a.findings if f.kind == "crashed"]
    assert f.severity == "error" and f.line == 10 and "SIGSEGV" in f.message


def test_unbounded_allocation_hits_the_memory_limit():
    r, a = _run("allocates_without_bound.py", memory_mb=2000)
    assert r.status == "crashed" and r.error.type == "MemoryLimit"
    assert "2000 MB" in r.error.message
    assert len(r.launches) == 1
    _inc_stats_kept(a)
    (f,) = [f for f in a.findings if f.kind == "crashed"]
    assert f.line == 11 and "memory limit" in f.message


def test_sys_exit_is_reported_at_its_line():
    r, a = _run("exits.py")
    assert r.status == "exception" and r.error.type == "SystemExit" and r.error.line == 20
    assert "sys.exit(3)" in r.error.message
    _inc_stats_kept(a)


def test_os_exit_is_a_crash_with_its_status_at_its_call():
    r, a = _run("exits.py", argv=["hard"])
    assert r.status == "crashed" and "status 4" in r.error.message
    assert r.error.line == 19  # the os._exit(4) call
    (f,) = [f for f in a.findings if f.kind == "crashed"]
    assert f.line == 19
    _inc_stats_kept(a)


def test_exception_inside_a_kernel_points_at_the_kernel_line():
    r, a = _run("kernel_raises.py")
    assert r.status == "exception"
    assert r.error.line == 10, r.error
    assert "B=64" in r.error.message
    (f,) = [f for f in a.findings if f.kind == "exception"]
    assert f.line == 10 and f.severity == "error"
    # The launch was cut short but its accesses up to the failure are kept.
    assert any(s.line == 9 and s.arg == "x_ptr" for s in a.accesses)


def test_timeout_stops_the_script_and_says_where(tmp_path):
    script = tmp_path / "spins.py"
    script.write_text(
        (SCRIPTS / "exits.py")
        .read_text()
        .replace("    if sys.argv[1:]", "    while True:\n        pass\n    if sys.argv[1:]")
    )
    r, a = _run(str(script), timeout_s=6.0)
    assert r.status == "timeout" and len(r.launches) == 1
    assert r.error.line in (18, 19)  # the `while True:` loop
    (f,) = [f for f in a.findings if f.kind == "timeout"]
    assert f.line == r.error.line and "time limit" in f.message


def test_cancel_kills_the_worker():
    import threading
    import time

    cancel = threading.Event()
    threading.Timer(1.0, cancel.set).start()
    t0 = time.monotonic()
    r = run(RunRequest(path=str(SCRIPTS / "allocates_without_bound.py"), memory_mb=100000), cancel=cancel)
    assert r.status == "error" and r.error.type == "Cancelled"
    assert time.monotonic() - t0 < 10


def test_a_missing_interpreter_is_a_tool_error():
    from triton_lens.model.remedies import EDITOR, PYTHON

    r = run(RunRequest(path=str(SCRIPTS / "exits.py"), python="/nonexistent/python3"))
    # the engine names the remedy's kind; the editor says it with its setting (model/remedies.py)
    assert r.status == "error" and r.error.remedy == PYTHON and "tritonLens" not in r.error.message
    assert "Set tritonLens.python to a Python that has triton" in r.error.text(EDITOR)


def test_an_interpreter_named_relative_to_the_current_folder_runs(tmp_path, monkeypatch):
    # `--python .venv/bin/python`, `tritonLens.python: "./.venv/bin/python"`: the worker starts in a folder
    # of its own, where the relative name found nothing ("the script exited with status 127").
    import os
    import sys

    monkeypatch.chdir(os.path.dirname(os.path.dirname(sys.executable)))  # the venv's folder: bin/python
    r = run(
        RunRequest(path=str(CORPUS / "vector_add.py"), python=os.path.join("bin", os.path.basename(sys.executable)))
    )
    assert r.status == "ok" and len(r.launches) == 1, (r.status, r.error)


def test_an_interpreter_without_triton_is_a_tool_error_that_says_how_to_fix_it():
    import os
    import sys

    bare = os.path.join(sys.base_prefix, "bin", "python3")  # the Python this venv was made from
    r = run(RunRequest(path=str(SCRIPTS / "exits.py"), python=bare))
    assert r.status == "error" and "No module named" in r.error.message
    from triton_lens.model.remedies import COMMAND_LINE, PYTHON

    assert f"{bare} -m pip install" in r.error.message and r.error.remedy == PYTHON
    assert "Pass --python a Python that has triton" in r.error.text(COMMAND_LINE)


def test_a_store_through_an_integer_pointer_outside_every_tensor_is_oob_and_never_executed():
    r, a = _run("int_to_ptr_stores.py")
    assert r.status == "ok", r.error  # not SIGSEGV: the lanes were kept off memory
    (f,) = [f for f in a.findings if f.kind == "oob"]
    assert f.line == 14 and f.lanes == 64 and f.access == "store" and f.severity == "error"
    # Made from x_ptr (x_ptr.to(int64) + delta), the pointer is still x_ptr's: past its end, by element.
    assert f.arg == "x_ptr" and "past the end of x_ptr's tensor" in f.message and "4398046511104" in f.message
    # A pointer table into a tensor the script holds is what grouped GEMM does: it works as on a GPU.
    assert "target written: True" in r.stdout


def test_a_syntax_error_is_reported_at_its_line(tmp_path):
    script = tmp_path / "bad.py"
    script.write_text("import torch\n\n\nx = 1\ny = (2 +\nprint(x)\n")
    r, a = _run(str(script))
    assert r.status == "exception" and r.error.type == "SyntaxError"
    (f,) = [f for f in a.findings if f.kind == "exception"]
    assert f.line in (5, 6) and f.line == r.error.line, f  # where Python says it is, not line 1


def test_a_kernel_that_hangs_inside_its_launch_says_so(tmp_path):
    from triton_lens.lsp.lenses import kernel_summaries, summary_title
    from triton_lens.source.kernels import outline

    script = tmp_path / "spins.py"
    script.write_text(
        "import torch\nimport triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def spin_kernel(x_ptr):\n    while tl.load(x_ptr) == 0:\n        pass\n\n\n"
        "spin_kernel[(4,)](torch.zeros(1))\n"
    )
    r, a = _run(str(script), timeout_s=20.0)  # the clock includes the worker's start on a loaded machine
    # the launch in flight is kept, marked partial (the programs that finished: none, program 0 spins)
    assert r.status == "timeout" and [L.complete for L in r.launches] == [False]
    assert r.in_launch is not None and r.in_launch["kernel"] == "spin_kernel" and r.in_launch["total"] == 4
    assert "inside launch 1 of spin_kernel" in r.error.message
    (k,) = outline(script.read_text())
    title = summary_title(k, kernel_summaries(r), r, running=False, stale=False)
    assert "hung inside launch 1" in title and "of 4 programs" in title, title


def test_a_missing_folder_is_not_blamed_on_the_python_install(tmp_path):
    gone = tmp_path / "moved-away"
    r = run(RunRequest(path=str(gone / "k.py"), source=(SCRIPTS / "exits.py").read_text()))
    assert r.status == "error" and "does not exist" in r.error.message and str(gone) in r.error.message
    assert "pip install" not in r.error.message and "tritonLens.python" not in r.error.message


def test_check_piped_into_head_exits_quietly():
    import subprocess
    import sys

    p = subprocess.Popen(
        [sys.executable, "-m", "triton_lens", "check", str(SCRIPTS / "exits.py")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    p.stdout.close()  # the reader went away before the first line, as `| head -0` does
    err = p.stderr.read().decode()
    p.wait(timeout=300)
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_a_store_through_an_integer_made_from_an_argument_pointer_is_checked_against_that_argument():
    # x_ptr.to(int64) + delta, back to a pointer, landing in a tensor the script holds but did not
    # pass (a canary beside x): the argument's store past its end, reported and kept off memory.
    r, a = _run("int_to_ptr_stores.py", argv=["neighbour"])
    assert r.status == "ok", r.error
    (f,) = [f for f in a.findings if f.kind == "oob"]
    assert f.line == 14 and f.lanes == 64 and f.access == "store" and f.arg == "x_ptr", f
    assert "neighbour untouched: True" in r.stdout and "target written: True" in r.stdout, r.stdout


def test_a_pointer_picked_by_a_scalar_where_among_views_of_one_storage_is_that_views():
    # xformers' tiled matmul picks each program's tile with tl.where(pid < n, A11, A21): every lane is
    # the picked tile's, not the first tensor whose storage holds the address (whose padding the other
    # tile's rows would be: a false out-of-bounds read, kept off memory, and a wrong result).
    r, a = _run("pointer_select.py")
    assert r.status == "ok", r.error
    assert "pointer select ok" in r.stdout
    assert not [f for f in a.findings if f.severity in ("warning", "error")], a.findings
    loads = [s for s in a.accesses if s.kind == "load"]
    assert sorted(s.arg for s in loads) == ["bottom_ptr", "top_ptr"]  # one line, the tile each program picked
    assert all(s.oob == 0 for s in loads), loads


def test_a_pointer_picked_lane_by_lane_from_two_arguments_reads_each_lanes_own_tensor():
    # tl.where(per-lane condition, a_ptr + offs, b_ptr + offs): the block was taken as a's (its first lane's),
    # so b's lanes were out of bounds of a: a false error, and those lanes kept off memory (a wrong result).
    r, a = _run("pointer_select_lanes.py", argv=["pick"])
    assert r.status == "ok", r.error
    assert "values as on a GPU: True" in r.stdout, r.stdout
    assert not [f for f in a.findings if f.severity in ("warning", "error")], a.findings
    loads = sorted((s.arg, s.lanes, s.unique, s.oob, s.extent) for s in a.accesses if s.kind == "load")
    assert loads == [("a_ptr", 32, 32, 0, "a_ptr[0:63:2]"), ("b_ptr", 32, 32, 0, "b_ptr[1:64:2]")], loads


def test_a_lane_by_lane_pick_past_one_arguments_end_is_that_arguments_error_even_inside_another():
    # b's lanes offset by n run past b's end into a (one storage): by address they are a's elements; by
    # provenance (the lane's own argument, as the compiled kernel's pointer is) they are b's overrun.
    r, a = _run("pointer_select_lanes.py", argv=["past"])
    assert r.status == "ok", r.error
    (f,) = [f for f in a.findings if f.kind == "oob"]
    assert (f.arg, f.access, f.lanes) == ("b_ptr", "load", 32), f
    loads = sorted((s.arg, s.lanes, s.oob) for s in a.accesses if s.kind == "load")
    assert loads == [("a_ptr", 32, 0), ("b_ptr", 32, 32)], loads


def test_a_lane_by_lane_pick_whose_lanes_moved_is_split_by_address():
    # after a transpose the per-lane provenance is not carried: each lane goes to the argument holding it
    r, a = _run("pointer_select_lanes.py", argv=["moved"])
    assert r.status == "ok", r.error
    assert "values as on a GPU: True" in r.stdout, r.stdout
    assert not [f for f in a.findings if f.severity in ("warning", "error")], a.findings
    assert sorted((s.arg, s.unique, s.oob) for s in a.accesses if s.kind == "load") == [
        ("a_ptr", 32, 0),
        ("b_ptr", 32, 0),
    ]
