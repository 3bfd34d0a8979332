"""An in-kernel tl.make_tensor_descriptor needs triton.set_allocator on a GPU with TMA (measured on an H200:
tests/gpu/results/compare_gpu_h200_2026-12-01_full.txt, tensor_descriptor.py raises RuntimeError there);
the interpreter needs none. The tool says so at the call, and only where the GPU would raise."""

from __future__ import annotations

import textwrap

import pytest
import triton

from triton_lens.analysis import analyze
from triton_lens.trace_engine.process.runner import RunRequest, run

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(
        tuple(int(p) for p in triton.__version__.split(".")[:2]) < (3, 4), reason="tensor descriptors: triton 3.4+"
    ),
]

KERNELS = """
import torch
import triton
import triton.language as tl


@triton.jit
def in_kernel(x_ptr, y_ptr, M, N, B: tl.constexpr):
    src = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[B, B])
    dst = tl.make_tensor_descriptor(y_ptr, shape=[M, N], strides=[N, 1], block_shape=[B, B])
    dst.store([0, 0], src.load([0, 0]))


@triton.jit
def from_host(src, dst):
    dst.store([0, 0], src.load([0, 0]))


x = torch.randn(32, 32)
y = torch.zeros_like(x)
"""


def _findings(tmp_path, body: str):
    path = tmp_path / "k.py"
    path.write_text(textwrap.dedent(KERNELS) + textwrap.dedent(body))
    result = run(RunRequest(path=str(path), cwd=str(tmp_path), timeout_s=120.0))
    assert result.status == "ok", result.error
    return [f for f in analyze(result).findings if f.kind == "allocator"]


def test_an_in_kernel_descriptor_without_an_allocator_is_reported_at_the_call(tmp_path):
    found = _findings(tmp_path, "in_kernel[(2,)](x, y, 32, 32, B=16)\nin_kernel[(1,)](x, y, 32, 32, B=16)\n")
    assert len(found) == 1
    f = found[0]
    assert f.severity == "information" and f.line == 9 and f.col > 0  # the first make_tensor_descriptor
    assert "in_kernel" in f.message and "2 launches" in f.message and "triton.set_allocator(" in f.message


def test_no_finding_once_the_script_sets_an_allocator(tmp_path):
    body = (
        "triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8))\n"
        "in_kernel[(1,)](x, y, 32, 32, B=16)\n"
    )
    assert _findings(tmp_path, body) == []


def test_a_host_tensor_descriptor_needs_no_allocator(tmp_path):
    body = (
        "from triton.tools.tensor_descriptor import TensorDescriptor\n"
        "from_host[(1,)](TensorDescriptor.from_tensor(x, [16, 16]), TensorDescriptor.from_tensor(y, [16, 16]))\n"
    )
    assert _findings(tmp_path, body) == []
