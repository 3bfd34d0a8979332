"""On a machine with an NVIDIA GPU: what tl.sum and tl.cumsum of bfloat16 compute, compiled, against
candidate models: float32 accumulation rounded once (numpy's order; the tool's pairwise tree, the model of
trace_engine/interpreter/semantics.py) and bfloat16 accumulation with every step rounded.

    PYTHONPATH=server python tests/gpu/bf16_reduce_probe.py
"""

import sys

import numpy as np
import torch
import triton
import triton.language as tl

from triton_lens.trace_engine.interpreter import semantics


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
    hits = {"f32, numpy's order": 0, "f32, the tool's tree": 0, "bf16 each step": 0}
    scan_hits = {"f32 (the tool's)": 0, "bf16 each step": 0}
    trials = 50
    for n in (64, 256, 1024):
        for _ in range(trials):
            x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
            o = torch.empty(1, device="cuda", dtype=torch.bfloat16)
            c = torch.empty(n, device="cuda", dtype=torch.bfloat16)
            red[(1,)](x, o, c, N=n)
            g = bits(o)[0]
            xb = bits(x)
            values = semantics._bf16_as_f32(xb)
            once = semantics._to_bf16_bits(np.float32(values.sum(dtype=np.float32))).reshape(())
            tree = semantics._bf16_tree_sum(xb, 0, False)
            steps, acc = [], np.float32(0)
            for v in values:  # bfloat16 accumulation: every partial rounded
                acc = semantics._bf16_as_f32(semantics._to_bf16_bits(np.float32(acc + v))).reshape(())
                steps.append(acc)
            stepped = semantics._to_bf16_bits(np.array(steps, dtype=np.float32))
            hits["f32, numpy's order"] += int(g == once)
            hits["f32, the tool's tree"] += int(g == tree)
            hits["bf16 each step"] += int(g == stepped[-1])
            gc = bits(c)
            scan_hits["f32 (the tool's)"] += int(np.array_equal(gc, semantics._bf16_running(xb, 0, np.add)))
            scan_hits["bf16 each step"] += int(np.array_equal(gc, stepped))
        print(f"n={n}: sum equal to {hits} of {trials}; cumsum equal to {scan_hits} of {trials}")
        hits = dict.fromkeys(hits, 0)
        scan_hits = dict.fromkeys(scan_hits, 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
