"""On a machine with an NVIDIA GPU: what a compiled Triton launch does with a grid at and past CUDA's grid
limits (x 2**31 - 1, y and z 65535). The size check admits only sizes whose grid launches: a size whose
grid cannot launch is not one the GPU runs the kernel at.

    python tests/gpu/grid_limits_probe.py

Each grid is launched in its own process (a failed launch may leave the CUDA context unusable).
Not collected by pytest (CI has no GPU).
"""

from __future__ import annotations

import subprocess
import sys

CASE = r"""
import sys, torch, triton, triton.language as tl
@triton.jit
def k(out_ptr):
    pid = tl.program_id(0) + tl.program_id(1) + tl.program_id(2)
    tl.store(out_ptr + (pid * 0), pid)   # every program writes element 0
grid = tuple(int(v) for v in sys.argv[1].split(","))
out = torch.zeros(1, dtype=torch.int32, device="cuda")
try:
    k[grid](out)
    torch.cuda.synchronize()
    print("RAN", out.item())
except Exception as e:
    print("RAISED", type(e).__name__, str(e).splitlines()[0][:200])
"""
GRIDS = ["1,65535,1", "1,65536,1", "1,1,65535", "1,1,65536", "2147483647,1,1", "2147483648,1,1", "65536,1,1"]


def main() -> None:
    with open("/tmp/grid_case.py", "w") as f:  # @jit needs its source in a file
        f.write(CASE)
    for g in GRIDS:
        p = subprocess.run([sys.executable, "/tmp/grid_case.py", g], capture_output=True, text=True, timeout=300)
        err = p.stderr.strip().splitlines()
        print(g, "->", p.stdout.strip()[:300], "| rc", p.returncode, "|", (err[-1] if err else "")[:300], flush=True)
    import torch
    import triton

    print("triton", triton.__version__, "torch", torch.__version__, torch.cuda.get_device_name())


if __name__ == "__main__":
    main()
