"""On a machine with an NVIDIA GPU: every corpus file run with CUDA tensors gives the same per-line
stats and findings as with CPU tensors (the interpreter copies CUDA storages to the host; the
engine maps addresses back to the user's tensors).

    python tests/gpu/cuda_parity.py [CORPUS_DIR]

Prints one line per file and exits 1 on any difference. Not collected by pytest: CI has no GPU.
"""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import triton  # noqa: E402

from markers import CORPUS, parse  # noqa: E402
from triton_lens.analysis import analyze  # noqa: E402
from triton_lens.trace.runner import RunRequest, run  # noqa: E402

# Runs a script with every new tensor on the GPU (CPU generators stay CPU-only: seeded on the CPU,
# then moved, as a user would).
WRAPPER = '''
import runpy, sys, torch
torch.set_default_device("cuda")
_randint = torch.randint
def randint(*a, generator=None, **k):
    if generator is not None and generator.device.type == "cpu":
        k.setdefault("device", "cpu")
        return _randint(*a, generator=generator, **k).cuda()
    return _randint(*a, **k)
torch.randint = randint
path = sys.argv[1]
sys.argv = [path]
sys.path.insert(0, __import__("os").path.dirname(path))
runpy.run_path(path, run_name="__main__")
'''


def summary(a):
    acc = sorted((s.line, s.arg, s.kind, s.launches, s.programs, s.lanes, s.active, s.unique, s.oob, s.bytes)
                 for s in a.accesses)
    fnd = sorted((f.kind, f.severity, f.line, f.arg, f.access, f.lanes, f.programs, f.elements) for f in a.findings)
    return acc, fnd


def main() -> int:
    corpus = Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else CORPUS
    import torch
    assert torch.cuda.is_available(), "no CUDA device"
    print(f"triton {triton.__version__}, torch {torch.__version__}, {torch.cuda.get_device_name(0)}")
    wrapper = Path(tempfile.mkdtemp()) / "on_cuda.py"
    wrapper.write_text(WRAPPER)
    failures = 0
    for path in sorted(corpus.glob("*.py")):
        cf = parse(path)
        if not cf.applies_to(triton.__version__):
            continue
        timeout = 10.0 if any(e.kind == "timeout" for e in cf.expects) else 300.0
        cpu = analyze(run(RunRequest(path=str(path), timeout_s=timeout)))
        gpu_run = run(RunRequest(path=str(path), command=[sys.executable, str(wrapper), str(path)], timeout_s=timeout))
        gpu = analyze(gpu_run)
        devices = sorted({t.device for L in gpu_run.launches for t in L.tensors})
        same = summary(cpu) == summary(gpu) and cpu.result.status == gpu.result.status
        failures += not same
        print(f"{'same' if same else 'DIFFERENT':9} {path.name:26} status={gpu.result.status:10} devices={devices} "
              f"findings={[(f.kind, f.line, f.lanes) for f in gpu.findings]}")
        if not same:
            print("   cpu:", summary(cpu), cpu.result.error)
            print("   gpu:", summary(gpu), gpu.result.error)
    print(f"{failures} file(s) differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
