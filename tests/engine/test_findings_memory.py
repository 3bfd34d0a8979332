"""Host-write tracking: what torch operations wrote, uninitialised reads, unwritten outputs' severity."""

from __future__ import annotations

import subprocess
import sys

import pytest
from findings_script import Script
from markers import CORPUS

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module")
def s() -> Script:
    return Script("memory_cases.py")


def test_a_load_of_torch_empty_memory_is_uninit(s):
    (f,) = s.at("read_all", "uninit")
    assert f.severity == "error" and f.elements == 64 and f.access == "load" and f.arg == "src_ptr"
    assert "nothing had written" in f.message and "torch.zeros" in f.message


def test_copy_out_and_random_fills_count_as_written(s):
    assert not s.at("read_copied", "uninit")


def test_a_strided_view_assignment_marks_only_the_view(s):
    (f,) = s.at("read_half_columns", "uninit")
    assert f.elements == 16 and f.example_elements == [4, 5, 6]


def test_freed_empty_memory_reused_by_a_filled_tensor_is_written(s):
    assert not s.at("read_reused", "uninit")


def test_a_zero_filled_partial_write_is_information(s):
    (f,) = s.at("write_half_zeros", "unwritten")
    assert f.severity == "information" and f.elements == 50
    assert "torch.empty" not in f.message  # the host zero-filled it: no talk of garbage


def test_a_partial_write_of_torch_empty_is_a_warning(s):
    (f,) = s.at("write_half_empty", "unwritten")
    assert f.severity == "warning" and f.elements == 50 and "never written" in f.message
    # 2 programs of 64 lanes had room for all 100 elements: the mask left the half out, not the grid
    assert "their mask (or offsets) left these out: check the store's mask" in f.message
    assert "launch enough programs" not in f.message


def test_the_grid_too_small_bug_makes_check_exit_1():
    # PyTorch issue 195535: grid n // BLOCK instead of cdiv, output from torch.empty.
    p = subprocess.run(
        [sys.executable, "-m", "triton_lens", "check", str(CORPUS / "unwritten_output.py")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 1, p.stdout + p.stderr
    assert "warning: out_ptr: 104 of 1000 elements" in p.stdout
    assert "launch enough programs to cover the output" in p.stdout  # 7 programs of 128: 896 lanes for 1000


def test_a_run_stopped_inside_a_launch_keeps_the_programs_that_finished():
    from findings_script import SCRIPTS

    from triton_lens.analysis import analyze
    from triton_lens.trace_engine.process.runner import RunRequest, run

    r = run(RunRequest(path=str(SCRIPTS / "hangs_in_launch.py"), timeout_s=25.0))
    assert r.status == "timeout", (r.status, r.error)
    (L,) = r.launches
    assert not L.complete
    assert sorted(set(L.ex_program.tolist())) == [0, 1, 2]  # program 3 was still running
    a = analyze(r)
    (f,) = [f for f in a.findings if f.kind == "timeout"]
    assert "launch it stopped in is shown with the programs that finished (partial)" in f.message
    assert not [f for f in a.findings if f.kind == "unwritten"]  # a partial launch's outputs are not judged


@pytest.fixture(scope="module")
def scratch() -> Script:
    return Script("scratch_cases.py")


def test_a_scratch_buffer_read_later_only_where_written_and_dropped_is_information(scratch):
    # 16 partial sums of a buffer of 62: the next launch reads the 16, the host drops the buffer.
    (f,) = scratch.at("dropped", "unwritten")
    assert f.severity == "information" and f.elements == 46, f.message
    assert "scratch" in f.message and "no launch and no host operation read" in f.message


def test_a_scratch_buffer_whose_unwritten_part_the_host_reads_is_a_warning(scratch):
    (f,) = scratch.at("read_back", "unwritten")
    assert f.severity == "warning" and f.elements == 46 and "never written" in f.message
