"""On a machine with an NVIDIA GPU: does the compiled kernel do what the size check's z3 proof says, at the
edge of the range it proves? (docs/findings.md, "Proved in bounds")

Two kernels of tests/engine/test_size_symbolic.py's PROVED file, launched compiled at the sizes their proof
names, each in its own process (an illegal address kills the CUDA context):
- `add`: proved in bounds for every N <= 2**31 - 1 (the largest an int32 argument holds): run at that N.
- `overlap` (`pid * 1000 + tl.arange(0, 1024)`): proved for every N <= 2,147,483,000, and from N =
  2,147,483,001 an operation of its offset leaves int32: run at both. Below, the proof's claim; at the next
  size, the run-based `wrap` finding's (the last program's offsets wrap negative and pass the mask).
And `tl.multiple_of(n, 1024)` on a scalar argument, which the size check now takes as the kernel's claim:
that it compiles and runs on the GPU.

Each launch reports CLEAN (ran; the output's first and last 4096 elements equal the input's), WRONG (ran; they
differ), FAULT (a CUDA error) or SKIP (not enough GPU memory). int8 tensors keep 2**31 elements at 2 GiB each.

    python tests/gpu/proof_bounds_gpu.py [--out RESULT.txt]

Not collected by pytest (CI has no GPU).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

CASE = r"""
import sys, torch, triton, triton.language as tl

@triton.jit
def add(x_ptr, y_ptr, z_ptr, N, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    mask = offs < N
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)

@triton.jit
def overlap(x_ptr, z_ptr, N, B: tl.constexpr):
    offs = tl.program_id(0) * 1000 + tl.arange(0, B)
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=offs < N), mask=offs < N)

@triton.jit
def claimed(x_ptr, z_ptr, n, BLOCK: tl.constexpr):
    n = tl.multiple_of(n, 1024)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)

kernel, N = sys.argv[1], int(sys.argv[2])
need = (3 if kernel == "add" else 2) * N
free, _ = torch.cuda.mem_get_info()
if need + (1 << 30) > free:
    print("SKIP"); sys.exit(0)
x = torch.randint(-100, 100, (N,), dtype=torch.int8, device="cuda")
z = torch.full((N,), 127, dtype=torch.int8, device="cuda")
try:
    if kernel == "add":
        y = torch.zeros(N, dtype=torch.int8, device="cuda")
        add[(triton.cdiv(N, 1024),)](x, y, z, N, B=1024)
    elif kernel == "overlap":
        overlap[(triton.cdiv(N, 1000),)](x, z, N, B=1024)
    else:
        claimed[(triton.cdiv(N, 1024),)](x, z, N, BLOCK=1024)
    torch.cuda.synchronize()
    k = 4096
    ok = torch.equal(z[:k], x[:k]) and torch.equal(z[-k:], x[-k:])
except Exception as e:
    print("FAULT", type(e).__name__, str(e).splitlines()[0][:100]); sys.exit(0)
print("CLEAN" if ok else "WRONG")
"""

CASES = [
    ("add", 2**31 - 1, "CLEAN", "proved: every N <= 2,147,483,647"),
    ("overlap", 2_147_483_000, "CLEAN", "proved: every N <= 2,147,483,000"),
    ("overlap", 2_147_483_001, "not CLEAN", "past the proof: the wrap check's size"),
    ("claimed", 4096, "CLEAN", "tl.multiple_of on a scalar argument compiles"),
]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    a = ap.parse_args()
    lines = []
    # triton.jit reads a kernel's source from its file (`python -c` has none)
    case = os.path.join(tempfile.mkdtemp(prefix="proof-bounds-"), "case.py")
    with open(case, "w") as fh:
        fh.write(CASE)
    for kernel, n, expect, why in CASES:
        t0 = time.time()
        p = subprocess.run([sys.executable, case, kernel, str(n)], capture_output=True, text=True, timeout=600)
        got = (p.stdout.strip().splitlines() or [f"ERROR {p.stderr.strip()[-200:]}"])[-1]
        verdict = got.split()[0]
        holds = verdict == "CLEAN" if expect == "CLEAN" else verdict in ("WRONG", "FAULT")
        lines.append(
            f"{kernel:8} N={n:>13,}  {got:60}  expected {expect:9} ({why}): {'as said' if holds else 'NOT as said'}"
            f"  [{time.time() - t0:.1f} s]"
        )
        print(lines[-1], flush=True)
    if a.out:
        with open(a.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
