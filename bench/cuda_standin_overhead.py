"""What the CPU stand-in for CUDA costs a run: the same work with plain CPU tensors and with "cuda"
tensors under the stand-in (trace_engine/standin/cuda_standin.py), measured side by side in one process, interleaved.

- host ops: a script's torch work between launches (small elementwise ops, views, reductions), where
  every call passes through the stand-in's TorchFunctionMode;
- a traced launch: a vector add of 98432 elements under the recorder (the interpreter's own torch
  calls pass through the mode too);
- autograd.Function forward + backward: the stand-in's wrappers of Function.apply and of the backward
  node (cuda_reentry.py: the mode pushed again, gradients and saved outputs marked);
- threads: start + join of a thread making a tensor (Thread.start's wrapper pushes the mode in it).

    python bench/cuda_standin_overhead.py [--rounds 5] [--out bench/results/cuda_standin_overhead_DATE.txt]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time

os.environ["TRITON_INTERPRET"] = "1"

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from triton_lens.trace_engine.interpreter import compat  # noqa: E402
from triton_lens.trace_engine.recording.recorder import Recorder  # noqa: E402
from triton_lens.trace_engine.standin.cuda_standin import ASKED, CudaStandIn  # noqa: E402

compat.enable_interpreter()


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def host_ops(device: str, n_ops: int = 3000) -> None:
    x = torch.randn(256, device=device)
    for _ in range(n_ops // 6):
        y = (x * 2 + 1)[1:]
        s = y.sum()
        x = torch.cat([y, s.reshape(1)]).contiguous()
        assert x.is_cuda == (device == "cuda")


def launch(device: str) -> None:
    n = 98432
    x, y = torch.rand(n, device=device), torch.rand(n, device=device)
    out = torch.empty_like(x)
    with Recorder():
        add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, B=1024)


class _Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x * 2
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * 2 + y * 0


def autograd_function(device: str, n_calls: int = 200) -> None:
    x = torch.randn(256, device=device, requires_grad=True)
    for _ in range(n_calls):
        _Double.apply(x).sum().backward()
    assert x.grad.is_cuda == (device == "cuda")


def threads(device: str, n_threads: int = 50) -> None:
    import threading

    for _ in range(n_threads):
        t = threading.Thread(target=lambda: torch.ones(4, device=device) * 2)
        t.start()
        t.join()


def timed(fn, device: str, standin: bool) -> float:
    t0 = time.perf_counter()
    if standin:
        with CudaStandIn(ASKED):
            fn(device)
    else:
        fn(device)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    lines = [
        f"# CPU stand-in for CUDA: cost against plain CPU tensors ({datetime.date.today()}, "
        f"{platform.node()}, {os.cpu_count()} CPUs, torch {torch.__version__}, triton {triton.__version__})",
        "# median of interleaved rounds; ratio = stand-in / plain",
    ]
    cases = (
        ("host ops (3000 torch calls)", host_ops),
        ("traced launch (98432 elements)", launch),
        ("autograd.Function fwd+bwd (200)", autograd_function),
        ("threads started (50)", threads),
    )
    for name, fn in cases:
        timed(fn, "cpu", False), timed(fn, "cuda", True)  # warm up both
        plain, stand = [], []
        for _ in range(args.rounds):
            plain.append(timed(fn, "cpu", False))
            stand.append(timed(fn, "cuda", True))
        p, s = statistics.median(plain), statistics.median(stand)
        lines.append(f"{name:32} plain {p * 1e3:8.1f} ms   stand-in {s * 1e3:8.1f} ms   ratio {s / p:5.2f}x")
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
