"""On a machine with an NVIDIA GPU: how tl.dot of float32 tiles rounds its operands, compiled, for each
input_precision, measured against numpy emulations (IEEE fp32, fp32 -> tf32 by truncation, by rounding to
nearest with ties away from zero, by rounding to nearest even), and against the tool's own emulation
(triton_lens.trace_engine.interpreter.tf32.dot, "tool=", when triton_lens is importable: PYTHONPATH=server). The tool's
tl.dot follows what this prints.

    PYTHONPATH=server python tests/gpu/tf32_probe.py [--out RESULT.txt]

Not collected by pytest (CI has no GPU).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import torch
import triton
import triton.language as tl

try:
    from triton_lens.trace_engine.interpreter import tf32 as _tool
except ImportError:  # the probe runs without the tool too
    _tool = None  # type: ignore[assignment]


@triton.jit
def _dot(a_ptr, b_ptr, c_ptr, M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, PRECISION: tl.constexpr):
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    rk = tl.arange(0, K)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    if PRECISION == "default":
        c = tl.dot(a, b)
    else:
        c = tl.dot(a, b, input_precision=PRECISION)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)


def _tf32(x: np.ndarray, mode: str) -> np.ndarray:
    bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    drop = 13
    if mode == "rna":
        bits = bits + (1 << (drop - 1))
    elif mode == "rne":
        bits = bits + ((1 << (drop - 1)) - 1) + ((bits >> drop) & 1)
    bits = (bits >> drop) << drop
    return (bits & 0xFFFFFFFF).astype(np.uint32).view(np.float32)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    lines = [f"# tests/gpu/tf32_probe.py ({torch.cuda.get_device_name()}, triton {triton.__version__})"]
    rng = np.random.default_rng(0)
    for precision in ("default", "tf32", "tf32x3", "ieee"):
        for M, N, K in ((16, 16, 16), (64, 64, 32), (128, 64, 64)):
            # One nonzero column/row isolates the operand rounding: c[i, j] = round(a[i, 0]) * round(b[0, j]).
            a = np.zeros((M, K), np.float32)
            b = np.zeros((K, N), np.float32)
            a[:, 0] = rng.standard_normal(M).astype(np.float32)
            b[0, :] = rng.standard_normal(N).astype(np.float32)
            ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
            tc = torch.empty((M, N), device="cuda", dtype=torch.float32)
            _dot[(1,)](ta, tb, tc, M, N, K, precision)
            got = tc.cpu().numpy()
            row = []
            for mode in ("ieee", "trunc", "rna", "rne"):
                if mode == "ieee":
                    want = a.astype(np.float64) @ b.astype(np.float64)
                else:
                    want = _tf32(a, mode).astype(np.float64) @ _tf32(b, mode).astype(np.float64)
                want = want.astype(np.float32)
                row.append(f"{mode}={int((got != want).sum())}")
            if _tool is not None:
                tool = _tool.dot(a, b, np.zeros((M, N), np.float32), "tf32" if precision == "default" else precision)
                row.append(f"tool={int((got != tool).sum())}")
            # A dense product: how far from IEEE fp32 the whole dot is (relative to the sum of |a||b|).
            a = rng.standard_normal((M, K)).astype(np.float32)
            b = rng.standard_normal((K, N)).astype(np.float32)
            ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
            _dot[(1,)](ta, tb, tc, M, N, K, precision)
            got = tc.cpu().numpy().astype(np.float64)
            scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
            dev = {}
            for mode in ("ieee", "rna", "rne", "trunc"):
                ea = a if mode == "ieee" else _tf32(a, mode)
                eb = b if mode == "ieee" else _tf32(b, mode)
                want = ea.astype(np.float64) @ eb.astype(np.float64)
                dev[mode] = float(np.max(np.abs(got - want) / scale))
            if _tool is not None:
                tool = _tool.dot(a, b, np.zeros((M, N), np.float32), "tf32" if precision == "default" else precision)
                dev["tool"] = float(np.max(np.abs(got - tool.astype(np.float64)) / scale))
            dense = " ".join(f"{k}={v:.2e}" for k, v in dev.items())
            lines.append(
                f"{precision:8} {M}x{N}x{K}: mismatches over {M * N} single products: {' '.join(row)}; "
                f"dense max |gpu - emulation| / sum|a||b|: {dense}"
            )
            print(lines[-1], flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
