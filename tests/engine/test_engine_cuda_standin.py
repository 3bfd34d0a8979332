"""Scripts written for a GPU run unchanged under `triton-lens check` on a machine without one (CI, this
machine): CPU tensors stand in for CUDA ones, and every output says so (trace_engine/standin/cuda_standin.py). On a
machine with a GPU, tests/gpu/cuda_parity.py compares the stand-in with real CUDA tensors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from markers import CORPUS

SCRIPTS = Path(__file__).parent / "scripts" / "cuda"


def check(*args: str):
    p = subprocess.run(
        [sys.executable, "-m", "triton_lens", "check", *args], capture_output=True, text=True, timeout=300
    )
    return p


def check_json(path: Path, *args: str):
    p = check(str(path), "--json", *args)
    return p.returncode, json.loads(p.stdout)


def serious(out):
    return [f for f in out["findings"] if f["severity"] in ("error", "warning")]


def stats(out, line):
    return [a for a in out["accesses"] if a["line"] == line]


def test_tutorial_vector_add_runs_and_its_do_bench_says_it_timed_the_interpreter():
    rc, out = check_json(SCRIPTS / "vector_add.py")
    assert rc == 0 and out["status"] == "ok", out["error"]
    s = out["cuda_standin"]
    assert s["gpu"] == "NVIDIA H100 80GB HBM3" and s["reason"] == "no CUDA device on this machine"
    assert {"triton driver", "cuda tensors", "triton.testing.do_bench", "torch.cuda.get_device_name"} <= set(s["used"])
    # add() once, and once more inside do_bench (which calls its function once on the interpreter).
    assert [L["kernel"] for L in out["launches"]] == ["add_kernel", "add_kernel"]
    (x,) = stats(out, 15)
    assert x["programs"] == 2 * 97 and x["active"] == 2 * 98432 and x["oob"] == 0
    assert serious(out) == []
    (timing,) = [f for f in out["findings"] if f["kind"] == "cpu-timing"]
    assert timing["line"] == 41 and timing["severity"] == "information"
    assert "CPU interpreter" in timing["message"] and "not on a GPU" in timing["message"]
    assert [t["line"] for t in s["timed"]] == [41]


def test_human_output_says_cuda_was_stood_in_at_the_top_and_in_the_summary():
    p = check(str(CORPUS / "cuda_script_without_gpu.py"))
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.strip().splitlines()
    assert lines[0].startswith("note: CPU stand-in for CUDA (no CUDA device on this machine)")
    assert "NVIDIA H100 80GB HBM3" in lines[0]
    assert lines[-1].endswith("CPU stand-in for CUDA)")


def test_fused_softmax_sizes_its_grid_from_the_stood_in_gpus_properties():
    rc, out = check_json(SCRIPTS / "fused_softmax.py")
    assert rc == 0 and serious(out) == [], out["error"]
    (row,) = stats(out, 25)
    assert row["programs"] == 132 * 2  # H100: 132 SMs, occupancy 2
    assert row["active"] == 300 * 97 and row["unique"] == 300 * 97
    rc, out = check_json(SCRIPTS / "fused_softmax.py", "--gpu", "A100")
    assert rc == 0 and out["cuda_standin"]["gpu"] == "NVIDIA A100-SXM4-80GB"
    assert stats(out, 25)[0]["programs"] == 108 * 2


def test_matmul_tutorial_autotunes_on_its_cuda_configs():
    rc, out = check_json(SCRIPTS / "matmul.py")
    # The tutorial's `stride_cm * offs_cm` is int32: with M = N (64 here, 46342 there) it wraps once C passes
    # 2**31 elements (4 GiB of float16, which an H100 holds): the one finding, and a true one.
    wraps = [(f["kind"], f["line"], f["arg"]) for f in serious(out)]
    assert rc == 1 and out["status"] == "ok" and wraps == [("wrap", 66, "c_ptr")], (out["error"], wraps)  # 1: a warning
    assert {"triton driver", "torch.cuda.get_device_capability"} <= set(out["cuda_standin"]["used"])
    assert sorted(f["line"] for f in out["findings"] if f["kind"] == "cpu-timing") == [90, 91]
    assert [L["kernel"] for L in out["launches"]] == ["matmul_kernel"] * 2  # matmul(a, b), and once in do_bench
    (c,) = stats(out, 66)
    # Two launches over 64x64 outputs: 4096 distinct elements (analysis/touched.py), 2 x 4096 lanes.
    assert c["kind"] == "store" and c["launches"] == 2 and c["unique"] == 64 * 64 and c["active"] == 2 * 64 * 64
    assert c["oob"] == 0


def test_a_missing_mask_is_found_in_a_script_timed_with_cuda_events():
    rc, out = check_json(SCRIPTS / "events_missing_mask.py")
    assert rc == 1 and out["status"] == "ok", out["error"]
    found = sorted((f["kind"], f["line"], f["arg"], f["lanes"]) for f in serious(out))
    assert found == [("oob", 11, "x_ptr", 24), ("oob", 12, "out_ptr", 24)]
    assert {"torch.cuda.set_device", "torch.cuda.synchronize", "cuda tensors"} <= set(out["cuda_standin"]["used"])


@pytest.mark.parametrize(
    "name,line,needed",
    [
        ("needs_cudnn.py", 20, "aten::cudnn_convolution"),
        ("needs_nccl.py", 18, "NCCL"),
    ],
)
def test_what_cannot_be_stood_in_is_one_finding_at_its_line(name, line, needed):
    rc, out = check_json(SCRIPTS / name)
    assert rc == 1 and out["status"] == "exception"
    (f,) = serious(out)
    assert f["line"] == line and f["kind"] == "exception"
    assert f["message"].startswith(f"NeedsRealGPU: {needed}") and "needs a real GPU" in f["message"]
    assert len(out["launches"]) == 1  # the launch before it is kept


def test_cpu_flag_gives_its_reason_and_a_cpu_only_script_gets_no_notice():
    rc, out = check_json(CORPUS / "cuda_script_without_gpu.py", "--cpu")
    assert rc == 0 and out["cuda_standin"]["reason"].startswith("asked for")
    rc, out = check_json(CORPUS / "oob_gather.py")  # CPU tensors, torch.manual_seed: nothing stood in
    assert out["cuda_standin"] is None
    assert not any(f["kind"] == "cpu-timing" for f in out["findings"])


def test_an_unknown_gpu_name_is_a_usage_error_naming_the_choices():
    p = check(str(CORPUS / "cuda_script_without_gpu.py"), "--gpu", "V100")
    assert p.returncode == 2 and "H100" in p.stderr and "A100" in p.stderr


def test_a_gpu_test_suite_skipped_without_cuda_runs_its_tests():
    from triton_lens.trace_engine.process.runner import RunRequest, run

    path = SCRIPTS / "test_gpu_only.py"
    r = run(
        RunRequest(
            path=str(path),
            command=["pytest", "-q", "-p", "no:cacheprovider", str(path)],
            cwd=str(SCRIPTS),
            timeout_s=300,
        )
    )
    assert r.status == "ok", (r.error, r.stdout[-2000:])
    assert "2 passed" in r.stdout
    assert [L.grid for L in r.launches] == [(1, 1, 1), (3, 1, 1)]
    assert r.cuda_standin is not None and "cuda tensors" in r.cuda_standin.used


LIBRARY = SCRIPTS / "library"


@pytest.mark.parametrize(
    "name,kernels,used",
    [
        # forward, then backward through autograd's engine (which calls the Function's backward from C++)
        ("softmax_autograd.py", ["softmax_fwd_kernel", "softmax_bwd_kernel"], "torch.cuda.get_device_properties"),
        # custom_op forward, its registered autograd's backward (the op again), the CUDA-only Library op
        ("custom_ops.py", ["scale_kernel"] * 3, "cuda tensors"),
        ("triton_op.py", ["add_kernel"], "cuda tensors"),
        # one launch on the main thread, three from the thread pool
        ("host_calls.py", ["add_one_kernel"] * 4, "cuda tensors"),
    ],
)
def test_library_code_runs_where_torch_calls_it_backward_ops_and_threads(name, kernels, used):
    """Each script asserts its outputs (and gradients) equal torch's: status "ok" means they did."""
    rc, out = check_json(LIBRARY / name)
    assert rc == 0 and out["status"] == "ok", out["error"]
    assert serious(out) == []
    assert [L["kernel"] for L in out["launches"]] == kernels
    assert used in out["cuda_standin"]["used"]
    assert all(a["oob"] == 0 and a["active"] > 0 for a in out["accesses"])
