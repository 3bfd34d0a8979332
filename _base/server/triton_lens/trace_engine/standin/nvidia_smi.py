"""`nvidia-smi` for the CPU stand-in: vendor probes that shell out answer as on the stood-in GPU.

Libraries find their GPU by running `nvidia-smi` (FlagGems' device detector: "No device were detected on
your machine!" otherwise). While the stand-in is in place and the machine has no `nvidia-smi` of its
own, a directory holding a small one goes first on PATH, for the script and the processes it starts;
it answers `-L`, `--query-gpu=FIELDS --format=csv[,noheader][,nounits]` and a plain call (a table
that says it is Triton Lens's stand-in) for the one stood-in GPU, and says so on any other question.
`install(scope, profile)` puts it in place until the stand-in's `PatchScope` is left: PATH as it was, the
directory removed.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

from ..interpreter.patches import PatchScope
from .gpu_profiles import GpuProfile

_SCRIPT = '''#!{python} -I
"""Triton Lens's stand-in nvidia-smi: the CPU stand-in for CUDA answers for one {name}."""
import sys

GPU = {gpu!r}
args = sys.argv[1:]
if not args:
    print("Triton Lens CPU stand-in for CUDA: no GPU here; kernels run on Triton's CPU interpreter.")
    print(f"GPU 0: {{GPU['name']}}, {{GPU['memory.total'] }} MiB")
    sys.exit(0)
if args[0] in ("-L", "--list-gpus"):
    print(f"GPU 0: {{GPU['name']}} (UUID: {{GPU['uuid']}})")
    sys.exit(0)
query = next((a.split("=", 1)[1] for a in args if a.startswith("--query-gpu=")), None)
fmt = next((a.split("=", 1)[1] for a in args if a.startswith("--format=")), "")
if query is None or "csv" not in fmt:
    sys.stderr.write("Triton Lens's stand-in nvidia-smi answers -L and --query-gpu=... --format=csv only\\n")
    sys.exit(2)
fields = [f.strip() for f in query.split(",")]
units = "nounits" not in fmt
def value(f):
    v = GPU.get(f, "[N/A]")
    return f"{{v}} MiB" if units and f.startswith("memory.") and v != "[N/A]" else str(v)
if "noheader" not in fmt:
    print(", ".join(f + (" [MiB]" if units and f.startswith("memory.") else "") for f in fields))
print(", ".join(value(f) for f in fields))
'''


def _fields(gpu: GpuProfile) -> dict[str, object]:
    mib = gpu.total_memory // (1024 * 1024)
    return {
        "name": gpu.name,
        "index": 0,
        "count": 1,
        "uuid": "GPU-00000000-0000-0000-0000-000000000000",
        "pci.bus_id": "00000000:00:00.0",
        "compute_cap": f"{gpu.major}.{gpu.minor}",
        "memory.total": mib,
        "memory.used": 0,
        "memory.free": mib,
        "utilization.gpu": 0,
        "driver_version": "[N/A]",
    }


def install(scope: PatchScope, gpu: GpuProfile) -> None:
    """The stand-in nvidia-smi first on PATH until `scope` is left, unless the machine has one."""
    if shutil.which("nvidia-smi") is not None:
        return
    folder = tempfile.mkdtemp(prefix="triton-lens-nvidia-smi-")
    scope.defer(lambda: shutil.rmtree(folder, ignore_errors=True))
    exe = os.path.join(folder, "nvidia-smi")
    with open(exe, "w") as f:
        f.write(_SCRIPT.format(python=sys.executable, name=gpu.name, gpu=_fields(gpu)))
    os.chmod(exe, 0o755)
    before = os.environ.get("PATH")
    scope.set_item(os.environ, "PATH", folder + (os.pathsep + before if before else ""))
