"""On a machine with an NVIDIA GPU (triton 3.6+): tl.dot of float32 tiles at input_precision "bf16x3" and
"bf16x6", compiled, against the tool's model of them (trace_engine/interpreter/tf32.py) and against float64.

    PYTHONPATH=server python tests/gpu/bf16xn_probe.py

Prints, per precision and trial, the largest difference between the GPU's output and the model's (what
is left is the order of the tensor cores' float32 sums), and each one's error against float64."""

import sys

import numpy as np
import torch
import triton
import triton.language as tl

from triton_lens.trace_engine.interpreter import tf32


@triton.jit
def dot_at(a_ptr, b_ptr, o_ptr, P: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, N)
    a = tl.load(a_ptr + i[:, None] * N + i[None, :])
    b = tl.load(b_ptr + i[:, None] * N + i[None, :])
    tl.store(o_ptr + i[:, None] * N + i[None, :], tl.dot(a, b, input_precision=P))


def main() -> int:
    print(f"triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name(0)}")
    torch.manual_seed(1)
    worst = 0.0
    for trial in range(4):
        scale = 10.0 ** torch.randint(-3, 3, (64, 64), device="cuda")
        a, b = torch.randn(64, 64, device="cuda") * scale, torch.randn(64, 64, device="cuda")
        exact = (a.double() @ b.double()).cpu().numpy()
        for p in ("bf16x3", "bf16x6"):
            out = torch.empty(64, 64, device="cuda")
            dot_at[(1,)](a, b, out, P=p, N=64)
            gpu = out.cpu().numpy()
            model = tf32.dot(a.cpu().numpy(), b.cpu().numpy(), np.zeros((64, 64), np.float32), p)
            ieee = np.matmul(a.cpu().numpy(), b.cpu().numpy())
            d = float(np.abs(gpu - model).max())
            worst = max(worst, d / float(np.abs(exact).max()))
            print(
                f"trial {trial} {p}: |gpu - model| {d:.3g}, |gpu - ieee| {np.abs(gpu - ieee).max():.3g}, "
                f"error vs float64: gpu {np.abs(gpu - exact).max():.3g}, model {np.abs(model - exact).max():.3g}"
            )
    print(f"largest |gpu - model| relative to the largest |result|: {worst:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
