"""On a machine with an NVIDIA GPU: what tl.sum and tl.cumsum of bfloat16 compute, compiled, against
candidate models (float32 accumulation rounded once; a pairwise tree rounded at each step; sequential
steps rounded each time).

    PYTHONPATH=server python tests/gpu/bf16_reduce_probe.py
"""

import sys

import numpy as np
import torch
import triton
import triton.language as tl

from triton_lens.trace_engine import semantics


@triton.jit
def red(X, O, C, N: tl.constexpr):
    i = tl.arange(0, N)
    x = tl.load(X + i)
    tl.store(O, tl.sum(x, 0))
    tl.store(C + i, tl.cumsum(x, 0))


def bits(t: torch.Tensor) -> np.ndarray:
    return t.view(torch.int16).cpu().numpy().view(np.uint16)


def main() -> int:
    print(f"triton {triton.__version__}, {torch.cuda.get_device_name(0)}")
    torch.manual_seed(0)
    hits = {"f32 once": 0, "tree": 0, "sequential": 0}
    scan_hits = {"f32 once": 0, "sequential": 0}
    trials = 50
    for n in (64, 256, 1024):
        for _ in range(trials):
            x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
            o = torch.empty(1, device="cuda", dtype=torch.bfloat16)
            c = torch.empty(n, device="cuda", dtype=torch.bfloat16)
            red[(1,)](x, o, c, N=n)
            g = bits(o)[0]
            xb = bits(x)
            once = semantics._to_bf16_bits(np.float32(semantics._bf16_as_f32(xb).sum(dtype=np.float32))).reshape(())
            tree = semantics._bf16_tree_sum(xb, 0, False)
            seq = semantics._bf16_running(xb, 0, np.add)[-1]
            hits["f32 once"] += int(g == once)
            hits["tree"] += int(g == tree)
            hits["sequential"] += int(g == seq)
            gc = bits(c)
            cs_once = semantics._to_bf16_bits(np.cumsum(semantics._bf16_as_f32(xb), dtype=np.float32))
            scan_hits["f32 once"] += int(np.array_equal(gc, cs_once))
            scan_hits["sequential"] += int(np.array_equal(gc, semantics._bf16_running(xb, 0, np.add)))
        print(f"n={n}: sum equal to {hits} of {trials}; cumsum equal to {scan_hits} of {trials}")
        hits = dict.fromkeys(hits, 0)
        scan_hits = dict.fromkeys(scan_hits, 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
