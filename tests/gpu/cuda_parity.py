"""On a machine with an NVIDIA GPU: every corpus file run with CUDA tensors gives the same per-line
stats and findings as with CPU tensors (the interpreter copies CUDA storages to the host; the
engine maps addresses back to the user's tensors), and as with CPU tensors standing in for CUDA
ones (trace_engine/standin/cuda_standin.py, RunRequest(device="cpu")): the run a machine without a GPU makes.

The scripts written for a GPU (tests/engine/scripts/cuda, and the corpus's own) are run both ways
too: with real CUDA tensors and with the stand-in. Their do_bench calls launch a kernel many times on
a GPU and once on the stand-in, so those are compared launch by launch (the set of distinct
launches and their per-line stats) and by their findings' kind, line and argument.

    python tests/gpu/cuda_parity.py [CORPUS_DIR]

Prints one line per file and exits 1 on any difference. Not collected by pytest: CI has no GPU.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import triton  # noqa: E402
from markers import CORPUS, parse  # noqa: E402

from triton_lens.analysis import analyze  # noqa: E402
from triton_lens.model import RunResult  # noqa: E402
from triton_lens.trace_engine.process.runner import RunRequest, run  # noqa: E402

# Runs a script with every new tensor on the GPU (CPU generators stay CPU-only: seeded on the CPU,
# then moved, as a user would).
WRAPPER = """
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
"""


def summary(a):
    acc = sorted(
        (s.line, s.arg, s.kind, s.launches, s.programs, s.lanes, s.active, s.unique, s.oob, s.bytes) for s in a.accesses
    )
    fnd = sorted((f.kind, f.severity, f.line, f.arg, f.access, f.lanes, f.programs, f.elements) for f in a.findings)
    return acc, fnd


GPU_SCRIPTS = Path(__file__).resolve().parent.parent / "engine" / "scripts" / "cuda"


def per_launch(run_result):
    """The distinct launches (kernel, grid, per-line stats of that launch alone) and the findings'
    (kind, line, arg, access), without the stand-in's own timing notes."""
    launches = set()
    for L in run_result.launches:
        one = analyze(RunResult(file=run_result.file, status="ok", launches=[L]))
        launches.add(
            (
                L.kernel,
                L.grid,
                tuple(
                    sorted(
                        (s.line, s.arg, s.kind, s.programs, s.lanes, s.active, s.unique, s.oob, s.bytes)
                        for s in one.accesses
                    )
                ),
            )
        )
    fnd = {(f.kind, f.line, f.arg, f.access) for f in analyze(run_result).findings if f.kind != "cpu-timing"}
    return launches, fnd


def compare_gpu_scripts(paths) -> int:
    failures = 0
    for path in paths:
        real = run(RunRequest(path=str(path), timeout_s=300.0))
        standin = run(RunRequest(path=str(path), timeout_s=300.0, device="cpu"))
        same = (
            per_launch(real) == per_launch(standin)
            and real.status == standin.status
            and real.cuda_standin is None
            and standin.cuda_standin is not None
        )
        failures += not same
        print(
            f"{'same' if same else 'DIFFERENT':9} {path.name:26} real CUDA vs CPU stand-in: status={real.status} "
            f"launches={len(real.launches)}/{len(standin.launches)}"
        )
        if not same:
            print("   cuda:   ", per_launch(real), real.error)
            print("   stand-in:", per_launch(standin), standin.error)
    return failures


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
        standin = analyze(
            run(
                RunRequest(
                    path=str(path), command=[sys.executable, str(wrapper), str(path)], timeout_s=timeout, device="cpu"
                )
            )
        )
        devices = sorted({t.device for L in gpu_run.launches for t in L.tensors})
        same = (
            summary(cpu) == summary(gpu) == summary(standin)
            and cpu.result.status == gpu.result.status == standin.result.status
        )
        failures += not same
        print(
            f"{'same' if same else 'DIFFERENT':9} {path.name:26} status={gpu.result.status:10} devices={devices} "
            f"findings={[(f.kind, f.line, f.lanes) for f in gpu.findings]}"
        )
        if not same:
            print("   cpu:", summary(cpu), cpu.result.error)
            print("   gpu:", summary(gpu), gpu.result.error)
            print("   stand-in:", summary(standin), standin.result.error)
    # needs_*.py use what only a GPU has (cuDNN, NCCL): they succeed there and stop on the stand-in, by design.
    scripts = [p for p in sorted(GPU_SCRIPTS.glob("*.py")) if not p.name.startswith("needs_")]
    failures += compare_gpu_scripts(scripts + [corpus / "cuda_script_without_gpu.py"])
    print(f"{failures} file(s) differ")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
