"""The CPU stand-in for CUDA in-process: what CUDA tensors and torch.cuda answer while it is in
place, copies where a device move copies, and everything put back after."""

from __future__ import annotations

import threading

import pytest
import torch
import triton
import triton.testing
from torch.autograd.function import BackwardCFunction
from torch.overrides import _get_current_function_mode_stack

from triton_lens.trace_engine.standin.cuda_standin import ASKED, CudaStandIn, NeedsRealGPU, explain_message


@pytest.fixture
def standin():
    with CudaStandIn(ASKED) as s:
        yield s


def test_tensors_made_for_cuda_say_cuda_and_hold_cpu_values(standin):
    torch.manual_seed(0)
    x = torch.randn(8, device="cuda")
    assert x.is_cuda and not x.is_cpu and x.device == torch.device("cuda", 0) and x.get_device() == 0
    assert x.untyped_storage().device.type == "cpu"  # the values really are on the host
    y = (x * 2)[2:]
    assert y.is_cuda and y.device.type == "cuda"
    assert torch.zeros(3).cuda().is_cuda and torch.zeros(3).to("cuda:0").is_cuda
    assert torch.zeros(3, dtype=torch.float16).to(torch.device("cuda"), torch.float32).dtype == torch.float32
    assert not torch.zeros(3).is_cuda


def test_leaving_the_device_copies_and_entering_copies(standin):
    x = torch.ones(4, device="cuda")
    h = x.cpu()
    assert not h.is_cuda and h.device.type == "cpu" and h.data_ptr() != x.data_ptr()
    h[0] = 5  # a host copy: the device tensor keeps its values
    assert x[0].item() == 1
    c = torch.ones(4)
    d = c.to("cuda")
    assert d.is_cuda and not c.is_cuda and d.data_ptr() != c.data_ptr()
    assert x.to("cuda") is x and x.cuda() is x
    assert not x.to("cpu").is_cuda and x.to(c).device.type == "cpu" and c.to(x).is_cuda


def test_in_place_and_out_keep_their_device(standin):
    x = torch.ones(3, device="cuda")
    host = torch.empty(3)
    host.copy_(x)
    assert not host.is_cuda
    out = torch.empty(3)
    torch.add(x, x, out=out)
    assert not out.is_cuda and out.tolist() == [2.0, 2.0, 2.0]


def test_modules_defaults_and_generators_follow_the_script(standin):
    lin = torch.nn.Linear(4, 2).cuda()
    assert lin.weight.is_cuda and lin(torch.randn(1, 4, device="cuda")).is_cuda
    assert not lin.cpu().weight.is_cuda
    torch.set_default_device("cuda")
    try:
        assert torch.arange(3).is_cuda and torch.get_default_device().type == "cuda"
    finally:
        torch.set_default_device(None)
    with torch.device("cuda"):
        assert torch.ones(2).is_cuda
    g = torch.Generator(device="cuda").manual_seed(1)
    assert torch.randn(2, generator=g, device="cuda").is_cuda
    assert isinstance(torch.default_generator, torch.Generator) and isinstance(g, torch.Generator)


def test_torch_cuda_and_the_triton_driver_answer_for_the_named_gpu():
    with CudaStandIn(ASKED, "A100") as s:
        assert torch.cuda.is_available() and torch.cuda.device_count() == 1 and torch.cuda.current_device() == 0
        assert torch.cuda.get_device_name() == "NVIDIA A100-SXM4-80GB"
        assert torch.cuda.get_device_capability() == (8, 0)
        assert torch.cuda.get_device_properties(0).multi_processor_count == 108
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        end.record()
        torch.cuda.synchronize()
        assert start.elapsed_time(end) >= 0.0
        active = triton.runtime.driver.active
        assert active.get_active_torch_device() == torch.device("cuda", 0)
        t = active.get_current_target()
        assert (t.backend, t.arch, t.warp_size) == ("cuda", 80, 32)
        assert active.utils.get_device_properties(0)["multiprocessor_count"] == 108
        assert triton.testing.do_bench(lambda: None, quantiles=[0.5, 0.2, 0.8]).__len__() == 3
        report = s.report()
    assert report["gpu"] == "NVIDIA A100-SXM4-80GB" and report["reason"] == ASKED
    assert {"torch.cuda.get_device_name", "triton driver", "triton.testing.do_bench"} <= set(report["used"])
    assert report["timed"][0]["file"] == __file__


def test_what_cannot_be_stood_in_raises_naming_it(standin):
    with pytest.raises(NeedsRealGPU, match=r"utils\.fill_2d_tma_descriptor\(\) needs a real GPU"):
        triton.runtime.driver.active.utils.fill_2d_tma_descriptor(0, 1, 2, 3, 4, 5, None)
    with pytest.raises(NeedsRealGPU, match="CUDA graphs"):
        torch.cuda.CUDAGraph()
    with pytest.raises(NeedsRealGPU, match=r"set_device\(1\)"):
        torch.cuda.set_device(1)


class _Scale(torch.autograd.Function):
    """Saves its input and its output; its backward asks the device of what it gets, as libraries do."""

    seen: list = []

    @staticmethod
    def forward(ctx, x):
        y = x * 3
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        props = torch.cuda.get_device_properties(g.device)  # "Expected a cuda device, but got: cpu" before
        _Scale.seen.append((g.device, x.device, y.device, props.name))
        return g * 3


def test_an_autograd_functions_backward_gets_cuda_gradients_and_saved_tensors(standin):
    _Scale.seen.clear()
    x = torch.randn(5, device="cuda", requires_grad=True)
    w = torch.randn(5, device="cuda")
    (_Scale.apply(x) * w).sum().backward()  # the gradient backward gets is made by autograd's mul, in C++
    cuda = torch.device("cuda", 0)
    assert _Scale.seen == [(cuda, cuda, cuda, standin.gpu.name)]
    assert x.grad.is_cuda and x.grad.device == cuda
    torch.testing.assert_close(x.grad, w * 3)
    # A Function on CPU tensors keeps CPU gradients.
    _Scale.seen.clear()
    h = torch.randn(5, requires_grad=True)
    with pytest.raises(ValueError, match="Expected a cuda device"):
        _Scale.apply(h).sum().backward()
    assert not h.is_cuda


class _WithHostStats(torch.autograd.Function):
    """Returns a CUDA result and a host copy of a statistic, and saves a host tensor (lengths)."""

    seen: list = []

    @staticmethod
    def forward(ctx, x):
        lengths = torch.tensor([x.numel()])
        ctx.save_for_backward(x, lengths)
        return x * 2, x.sum().cpu()

    @staticmethod
    def backward(ctx, g, g_stat):
        x, lengths = ctx.saved_tensors
        _WithHostStats.seen.append((g.device.type, g_stat.device.type, x.device.type, lengths.device.type))
        return g * 2 + g_stat.to(g.device)


def test_a_backwards_host_tensors_stay_on_the_host(standin):
    _WithHostStats.seen.clear()
    x = torch.ones(3, device="cuda", requires_grad=True)
    y, stat = _WithHostStats.apply(x)
    assert y.is_cuda and not stat.is_cuda
    (y.sum() + stat).backward()
    assert _WithHostStats.seen == [("cuda", "cpu", "cuda", "cpu")]
    assert x.grad.is_cuda and x.grad.tolist() == [3.0, 3.0, 3.0]


def test_library_op_bodies_see_cuda_tensors_and_a_cuda_only_op_runs(standin):
    seen = []

    @torch.library.custom_op("tl_units::twice", mutates_args=(), device_types="cuda")
    def twice(x: torch.Tensor) -> torch.Tensor:
        seen.append(x.device)  # device(type='cpu') before: the body ran outside the stand-in
        return x * 2

    lib = torch.library.Library("tl_units", "FRAGMENT")
    lib.define("thrice(Tensor x) -> Tensor")
    lib.impl("thrice", lambda x: (seen.append(x.device), x * 3)[1], "CUDA")
    x = torch.arange(4.0, device="cuda")
    y, z = twice(x), torch.ops.tl_units.thrice(x)
    assert seen == [torch.device("cuda", 0)] * 2
    assert y.is_cuda and z.is_cuda and y.tolist() == [0, 2, 4, 6] and z.tolist() == [0, 3, 6, 9]
    # Real CPU tensors to an op for CUDA only fail as on a GPU machine, saying so.
    with pytest.raises(NotImplementedError, match=r"tl_units::thrice is implemented for CUDA only.*CPU tensors"):
        torch.ops.tl_units.thrice(torch.arange(4.0))
    # After the stand-in its kernels stay registered, and no longer bring its mode back: a tensor made
    # during it is a CPU tensor again.
    standin.__exit__(None, None, None)
    seen.clear()
    twice(x)
    assert seen == [torch.device("cpu")] and len(_get_current_function_mode_stack()) == 0
    lib._destroy()


def test_a_builtin_op_a_library_overrides_for_cuda_only_still_runs_natively_on_cpu_tensors(standin):
    # FlagGems' use_gems: aten ops implemented for CUDA by Triton kernels. Stand-in CUDA tensors run the
    # library's kernel; CPU tensors (the interpreter's own copies among them) run aten's CPU kernel, as
    # on a GPU machine. Before: "aten::neg is implemented for CUDA only" for every CPU tensor.
    seen = []
    lib = torch.library.Library("aten", "IMPL")
    lib.impl("neg", lambda x: (seen.append(x.device), torch.zeros_like(x) - x)[1], "CUDA")
    try:
        x = torch.arange(4.0, device="cuda")
        assert torch.neg(x).tolist() == [0, -1, -2, -3] and seen == [torch.device("cuda", 0)]
        assert torch.neg(torch.arange(4.0)).tolist() == [0, -1, -2, -3] and len(seen) == 1
    finally:
        lib._destroy()


def test_nvidia_smi_answers_for_the_stood_in_gpu_where_the_machine_has_none():
    # FlagGems finds its vendor by running nvidia-smi: "No device were detected on your machine!" before.
    import os
    import shutil
    import subprocess

    path, own = os.environ.get("PATH"), shutil.which("nvidia-smi")
    with CudaStandIn("test") as s:
        if own is not None:  # a machine with its own: it stays the one that answers
            assert shutil.which("nvidia-smi") == own
            return
        q = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
        )
        assert q.returncode == 0 and q.stdout.strip() == f"{s.gpu.name}, {s.gpu.total_memory // 2**20}"
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
        assert listed.startswith(f"GPU 0: {s.gpu.name} (UUID: GPU-")
        plain = subprocess.run(["nvidia-smi"], capture_output=True, text=True)
        assert plain.returncode == 0 and "Triton Lens CPU stand-in" in plain.stdout
    assert os.environ.get("PATH") == path and shutil.which("nvidia-smi") is None


def test_threads_the_script_starts_see_cuda_tensors(standin):
    import threading

    out = []
    t = threading.Thread(target=lambda: out.append(torch.ones(2, device="cuda") * 2))
    t.start()
    t.join()
    (y,) = out
    assert y.is_cuda and y.tolist() == [2.0, 2.0]


def test_pinned_memory_non_blocking_copies_and_the_raw_stream(standin):
    host = torch.arange(3.0, pin_memory=True)  # a CPU build has no pinned allocator: host memory
    assert not host.is_cuda
    d = host.to("cuda", non_blocking=True)
    assert d.is_cuda and d.data_ptr() != host.data_ptr() and d.tolist() == [0.0, 1.0, 2.0]
    assert host.cuda(non_blocking=True).is_cuda
    assert torch._C._cuda_getCurrentRawStream(0) == 0 and torch._C._cuda_getDevice() == 0


def test_a_script_that_never_asks_for_cuda_reports_nothing(standin):
    torch.manual_seed(0)  # seeds torch.cuda too, inside torch
    torch.randn(3).sum()
    assert standin.report() is None


def test_everything_is_put_back_after_the_run():
    before = (
        torch.cuda.is_available,
        torch.cuda._lazy_init,
        torch.Generator,
        triton.testing.do_bench,
        dict(vars(triton.runtime.driver)),
        len(_get_current_function_mode_stack()),
        torch.autograd.Function.__dict__["apply"],
        dict(vars(BackwardCFunction)),
        torch.library.Library.impl,
        threading.Thread.start,
        hasattr(torch._C, "_cuda_getCurrentRawStream"),
    )
    with CudaStandIn(ASKED):
        x = torch.ones(2, device="cuda")
    after = (
        torch.cuda.is_available,
        torch.cuda._lazy_init,
        torch.Generator,
        triton.testing.do_bench,
        dict(vars(triton.runtime.driver)),
        len(_get_current_function_mode_stack()),
        torch.autograd.Function.__dict__["apply"],
        dict(vars(BackwardCFunction)),
        torch.library.Library.impl,
        threading.Thread.start,
        hasattr(torch._C, "_cuda_getCurrentRawStream"),
    )
    assert after == before
    assert not torch.cuda.is_available() and x.device.type == "cpu"
    with pytest.raises((AssertionError, RuntimeError)):
        torch.ones(1, device="cuda")


@pytest.mark.parametrize(
    "type_name,message,needed",
    [
        (
            "NotImplementedError",
            "Could not run 'aten::_cslt_compress' with arguments from the 'CPU' backend. This could",
            "aten::_cslt_compress",
        ),
        ("RuntimeError", "Distributed package doesn't have NCCL built in", "NCCL"),
        (
            "ImportError",
            "libcudart.so.12: cannot open shared object file: No such file or directory",
            "a compiled CUDA extension",
        ),
        (
            "OSError",
            "CUDA_HOME environment variable is not set. Please set it to your CUDA install root.",
            "building a CUDA extension",
        ),
        ("AssertionError", "Torch not compiled with CUDA enabled", "a torch.cuda feature"),
    ],
)
def test_errors_from_missing_cuda_are_explained(type_name, message, needed):
    text = explain_message(type_name, message)
    assert text is not None and text.startswith(needed) and "needs a real GPU" in text


def test_a_library_op_without_a_cpu_kernel_is_blamed_on_its_compiled_kernel_not_on_cublas():
    text = explain_message(
        "NotImplementedError", "Could not run 'mamba_ssm::selective_scan_fwd' with arguments from the 'CPU' backend."
    )
    assert text is not None and text.startswith("mamba_ssm::selective_scan_fwd needs a real GPU")
    assert "compiled CUDA code of the library" in text and "cuBLAS" not in text
    aten = explain_message(
        "NotImplementedError", "Could not run 'aten::_cslt_compress' with arguments from the 'CPU' backend."
    )
    assert aten is not None and "cuBLAS" in aten


def test_other_errors_are_left_alone():
    assert explain_message("ValueError", "shapes (3,) and (4,) differ") is None
    assert explain_message("NeedsRealGPU", "NCCL (torch.distributed) needs a real GPU") is None
