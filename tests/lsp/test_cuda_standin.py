"""A kernel file whose __main__ makes its tensors with device="cuda", opened in the real server on a
machine without a GPU: it gets its hints and diagnostics, and the server tells the editor that CPU
tensors stood in for CUDA ones (runFinished's cudaStandIn, the kernel's code lens)."""

from __future__ import annotations

import pytest
from lsp_harness import Session, session_fixture

from triton_lens.lsp.settings import Settings

pytestmark = pytest.mark.asyncio(loop_scope="module")

ON_CUDA = """import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x * 2, mask=offs < n)


if __name__ == "__main__":
    x = torch.randn(1000, device="cuda")
    out = torch.empty_like(x)
    scale_kernel[(8,)](x, out, 1000, B=128)
    torch.cuda.synchronize()
"""
LOAD_LINE = 8  # 0-based: `x = tl.load(x_ptr + offs)`, no mask


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    return tmp_path_factory.mktemp("cuda_standin")


client = session_fixture({"timeLimit": 120}, with_workspace=True)


async def test_a_cuda_file_gets_its_hints_and_the_stand_in_notice(session: Session, workspace):
    path = workspace / "on_cuda.py"
    path.write_text(ON_CUDA)
    uri = session.open(path)
    done = await session.finished_run(uri, 1, timeout=120)
    assert done["status"] == "ok"
    assert done["cudaStandIn"] == {"gpu": "NVIDIA H100 80GB HBM3", "reason": "no CUDA device on this machine"}
    hints = await session.hints(uri)
    (load,) = [h for h in hints if h.position.line == LOAD_LINE]
    # every lane on: the label leaves the mask out, the tooltip has it
    assert "8 prog" in load.label and " active" not in load.label, load.label
    assert "| active (mask true) | 1024 (100.0%) |" in load.tooltip.value
    oob = [d for d in session.diagnostics(uri) if d.code == "oob"]
    assert [d.range.start.line for d in oob] == [LOAD_LINE]
    assert not [d for d in session.diagnostics(uri) if d.code == "exception"]
    titles = [lens.command.title for lens in await session.lenses(uri)]
    assert any("1 launch" in t and t.endswith("CPU stand-in for CUDA") for t in titles), titles


async def test_a_cpu_file_gets_no_notice(session: Session, workspace):
    path = workspace / "on_cpu.py"
    path.write_text(ON_CUDA.replace('device="cuda"', 'device="cpu"').replace("    torch.cuda.synchronize()\n", ""))
    uri = session.open(path)
    done = await session.finished_run(uri, 1, timeout=120)
    assert done["status"] == "ok" and done["cudaStandIn"] is None
    titles = [lens.command.title for lens in await session.lenses(uri)]
    assert not any("stand-in" in t for t in titles), titles


async def test_device_and_gpu_settings():
    s = Settings()
    assert (s.device, s.stand_in_gpu) == ("auto", "H100")
    s = s.merged({"device": "cpu", "standInGpu": "a100"})
    assert (s.device, s.stand_in_gpu) == ("cpu", "A100")
    assert s.merged({"device": "gpu", "standInGpu": "V100"}) == s  # unknown values keep what was there
