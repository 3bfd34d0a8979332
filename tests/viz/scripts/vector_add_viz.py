"""The seed's example (shared/corpus/vector_add.py) written for Triton-Viz; only the import differs.

PORT (environment) picks the viewer's port; the test runs this file and then drives the viewer.
"""
import os

import torch
import triton
import triton.language as tl
import triton_lens as triton_viz


@triton_viz.trace("tracer")
@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N, B: tl.constexpr):
    pid = tl.program_id(0)
    offsets = tl.arange(0, B) + pid * B
    mask = offsets < N
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    z = x + y
    tl.store(z_ptr + offsets, z, mask=mask)


N = 128
BLOCK_SIZE = 64
num_blocks = triton.cdiv(N, BLOCK_SIZE)
x = torch.arange(N, dtype=torch.float32)
y = torch.arange(N, dtype=torch.float32)
z = torch.zeros(N, dtype=torch.float32)
add_kernel[(num_blocks,)](x, y, z, N, BLOCK_SIZE)
assert torch.equal(z, x + y)
triton_viz.launch(share=False, port=int(os.environ.get("PORT", "5001")), block=False)
