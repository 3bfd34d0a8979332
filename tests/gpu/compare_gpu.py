"""On a machine with an NVIDIA GPU: every corpus file and every real-world script, run once compiled on the
GPU and once under Triton Lens (same CUDA tensors, same seed), gives the same launches and the same output
tensors (within the dtype's tolerance) wherever the tool's run has no finding.

    python tests/gpu/compare_gpu.py [--only NAME|PATH.py ...] [--out RESULT.txt] [--skip-realworld]

Prints one row per script and a summary; exits 1 if a script without findings differs. The repo's
`server/` must be importable (pip install -e ., or PYTHONPATH=server). Not collected by pytest: CI has
no GPU; test_compare_gpu.py checks the CPU-only parts (capture, comparison, table).

How it works: a small wrapper (CAPTURE below) runs the script with torch's default device set to CUDA,
seeds torch, and snapshots every tensor argument of every `kernel[grid](...)` launch right after it
(KernelInterface.__getitem__: plain, autotuned and heuristics kernels alike; autotune's timing runs do not
go through it). The compiled run is that wrapper in a plain Python; the tool's run is the same wrapper as
the run command of the engine (runner.run), so the kernels run under the interpreter with the tool's
semantics and the analysis sees them.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

TESTS = Path(__file__).resolve().parent.parent
REPO = TESTS.parent
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(REPO / "server"))

CAPTURE = r"""
import atexit, os, runpy, sys
out_path, script, device = sys.argv[1], sys.argv[2], sys.argv[3]
import torch
import triton
from triton.runtime.jit import KernelInterface

if device != "cpu":
    torch.set_default_device(device)
    # CPU generators stay on the CPU (seeded there, then moved), as a user would write it.
    _randint, _randperm = torch.randint, torch.randperm

    def randint(*a, generator=None, **k):
        if generator is not None and generator.device.type == "cpu":
            k.setdefault("device", "cpu")
            return _randint(*a, generator=generator, **k).to(device)
        return _randint(*a, **k)
    torch.randint = randint
torch.manual_seed(0)
launches = []


def snapshot(kernel, grid, args, kwargs):
    name = getattr(kernel, "__name__", None) or getattr(getattr(kernel, "fn", None), "__name__", "kernel")
    tensors = {}
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor):
            tensors[f"arg{i}"] = a.detach().to("cpu", copy=True)
    for k, a in kwargs.items():
        if isinstance(a, torch.Tensor):
            tensors[k] = a.detach().to("cpu", copy=True)
    g = "callable" if callable(grid) else [int(x) for x in grid]
    launches.append({"kernel": name, "grid": g, "tensors": tensors})


_getitem = KernelInterface.__getitem__


def __getitem__(self, grid):
    launcher = _getitem(self, grid)

    def launch(*args, **kwargs):
        out = launcher(*args, **kwargs)
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        snapshot(self, grid, args, kwargs)
        return out
    return launch


KernelInterface.__getitem__ = __getitem__
atexit.register(lambda: torch.save(launches, out_path))
sys.argv = [script]
sys.path.insert(0, os.path.dirname(script))
try:
    runpy.run_path(script, run_name="__main__")
finally:
    torch.save(launches, out_path)
"""

# (rtol, atol) per dtype: the compiled kernel uses FMA, fast math and tf32 dots where the interpreter
# computes in numpy, so floats agree to a few ulps of their precision (more for tf32 dots), integers exactly.
TOLERANCE = {
    "torch.float64": (1e-9, 1e-9),
    "torch.float32": (2e-3, 2e-3),  # tf32 dots (the default input_precision for fp32 tl.dot)
    "torch.float16": (2e-3, 2e-3),
    "torch.bfloat16": (1.6e-2, 1.6e-2),
}
FP8 = ("torch.float8_e4m3fn", "torch.float8_e5m2", "torch.float8_e4m3fnuz", "torch.float8_e5m2fnuz")


@dataclass
class Comparison:
    launches_gpu: int = 0
    launches_tool: int = 0
    same_launches: bool = True
    tensors: int = 0
    differing: list[str] = field(default_factory=list)
    worst: float = 0.0  # largest |gpu - tool| / (atol + rtol |gpu|) over compared elements

    @property
    def equal(self) -> bool:
        return self.same_launches and not self.differing


def compare_tensors(a, b) -> tuple[bool, float]:
    import torch

    if a.shape != b.shape or a.dtype != b.dtype:
        return False, float("inf")
    dt = str(a.dtype)
    if dt in FP8 or not (a.is_floating_point() or a.is_complex()):
        if dt in FP8:
            a, b = a.view(torch.uint8), b.view(torch.uint8)
        same = torch.equal(a, b)
        return same, 0.0 if same else float("inf")
    rtol, atol = TOLERANCE.get(dt, (2e-3, 2e-3))
    a64, b64 = a.double(), b.double()
    nan_same = torch.equal(torch.isnan(a64), torch.isnan(b64))
    a64, b64 = torch.nan_to_num(a64, nan=0.0), torch.nan_to_num(b64, nan=0.0)
    if a64.numel() == 0:
        return nan_same, 0.0
    ratio = ((a64 - b64).abs() / (atol + rtol * a64.abs())).max().item()
    return nan_same and ratio <= 1.0, ratio


def compare(gpu: list[dict], tool: list[dict]) -> Comparison:
    c = Comparison(launches_gpu=len(gpu), launches_tool=len(tool))
    c.same_launches = [(L["kernel"], L["grid"]) for L in gpu] == [(L["kernel"], L["grid"]) for L in tool]
    for i, (g, t) in enumerate(zip(gpu, tool)):
        for name, ga in g["tensors"].items():
            ta = t["tensors"].get(name)
            c.tensors += 1
            if ta is None:
                c.differing.append(f"launch {i} {g['kernel']}.{name}: missing under the tool")
                continue
            same, ratio = compare_tensors(ga, ta)
            c.worst = max(c.worst, ratio)
            if not same:
                c.differing.append(f"launch {i} {g['kernel']}.{name} ({ga.dtype}): off by {ratio:.3g}x the tolerance")
    return c


@dataclass
class Row:
    name: str
    gpu_status: str
    tool_status: str
    findings: list[str]
    comparison: Comparison | None
    gpu_error: str = ""
    tool_error: str = ""

    @property
    def verdict(self) -> str:
        c = self.comparison
        if c is None:
            return "NOT RUN"
        # "no-launch" is the tool's word for a clean run that launched nothing; the plain run just ends "ok"
        same_status = self.gpu_status == self.tool_status or (self.gpu_status, self.tool_status) == ("ok", "no-launch")
        if c.equal and same_status:
            return "equal"
        if self.findings:
            return "differs (finding)"  # out-of-bounds, races, uninitialised reads: outputs may differ
        return "DIFFERENT"


def write_wrapper(directory: Path) -> Path:
    path = directory / "capture_launches.py"
    path.write_text(CAPTURE)
    return path


def gpu_run(
    script: Path, wrapper: Path, out: Path, timeout: float, device: str = "cuda", interpret: bool = False
) -> tuple[str, str]:
    """The compiled run (`interpret`: the bare interpreter instead, for testing this script without a GPU)."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    try:
        p = subprocess.run(
            [sys.executable, str(wrapper), str(out), str(script), device],
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=str(script.parent),
        )
    except subprocess.TimeoutExpired:
        return "timeout", ""
    tail = (p.stderr.strip().splitlines() or [""])[-1][:160]
    return ("ok", "") if p.returncode == 0 else ("exception", tail)


def tool_run(script: Path, wrapper: Path, out: Path, timeout: float, device: str = "cuda"):
    from triton_lens.analysis import analyze
    from triton_lens.trace_engine.process.runner import RunRequest, run

    r = run(
        RunRequest(
            path=str(script),
            command=[sys.executable, str(wrapper), str(out), str(script), device],
            cwd=str(script.parent),
            timeout_s=timeout,
        )
    )
    return analyze(r)


def load(out: Path) -> list[dict]:
    import torch

    return torch.load(out, weights_only=False) if out.exists() else []


def run_one(script: Path, work: Path, timeout: float, device: str = "cuda", interpret: bool = False) -> Row:
    g_out, t_out = work / f"{script.stem}.gpu.pt", work / f"{script.stem}.tool.pt"
    wrapper = write_wrapper(work)
    gpu_status, gpu_error = gpu_run(script, wrapper, g_out, timeout, device, interpret)
    a = tool_run(script, wrapper, t_out, timeout, device)
    findings = [f"{f.kind}@{f.line}" for f in a.findings if f.severity in ("warning", "error")]
    # "no-launch" is the tool's word for a script that ran to the end without launching a kernel
    tool_status = "ok" if a.result.status == "no-launch" else a.result.status
    tool_error = f"{a.result.error.type}: {a.result.error.message}"[:160] if a.result.error else ""
    return Row(script.name, gpu_status, tool_status, findings, compare(load(g_out), load(t_out)), gpu_error, tool_error)


def table(rows: list[Row]) -> str:
    lines = [f"{'script':30} {'gpu':10} {'tool':10} {'launches':>9} {'tensors':>8} {'worst':>8}  verdict / findings"]
    for r in rows:
        c = r.comparison
        launches = f"{c.launches_gpu}/{c.launches_tool}" if c else "-"
        extra = (", ".join(r.findings[:4]) + ("..." if len(r.findings) > 4 else "")) if r.findings else ""
        lines.append(
            f"{r.name:30} {r.gpu_status:10} {r.tool_status:10} {launches:>9} {c.tensors if c else 0:>8} "
            f"{(c.worst if c else 0):8.3g}  {r.verdict}{'  ' + extra if extra else ''}"
        )
        if r.gpu_error:
            lines.append(f"{'':32}gpu: {r.gpu_error}")
        if r.tool_error and r.tool_error != r.gpu_error:
            lines.append(f"{'':32}tool: {r.tool_error}")
        if c and not c.equal:
            for d in c.differing[:3]:
                lines.append(f"{'':32}{d}")
            if not c.same_launches:
                lines.append(f"{'':32}launches differ: gpu {c.launches_gpu}, tool {c.launches_tool}")
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.verdict] = counts.get(r.verdict, 0) + 1
    lines.append("summary: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())) + f" of {len(rows)} scripts")
    return "\n".join(lines)


def scripts(only: list[str], realworld: bool) -> list[Path]:
    import triton
    from markers import CORPUS, parse

    out = [p for p in sorted(CORPUS.glob("*.py")) if parse(p).applies_to(triton.__version__)]
    if realworld:
        out += sorted(p for p in (TESTS / "realworld").glob("*.py") if not p.name.startswith(("test_", "conftest")))
    # the timeout file sleeps forever by design: nothing to compare
    out = [p for p in out if p.stem != "hangs_after_launch"]
    # --only takes names (corpus and real-world stems) and paths of other scripts (tests/engine/scripts/...)
    names = [o for o in only if not o.endswith(".py")]
    files = [Path(o).resolve() for o in only if o.endswith(".py")]
    return [p for p in out if not only or p.stem in names] + files


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--out")
    ap.add_argument("--skip-realworld", action="store_true")
    ap.add_argument("--timeout", type=float, default=300.0)
    args = ap.parse_args(argv)
    import numpy
    import torch
    import triton

    assert torch.cuda.is_available(), "no CUDA device: this script compares compiled GPU runs with the tool's"
    head = (
        f"triton {triton.__version__}, torch {torch.__version__}, numpy {numpy.__version__}, "
        f"{torch.cuda.get_device_name(0)}"
    )
    print(head, flush=True)
    work = Path(tempfile.mkdtemp(prefix="compare_gpu_"))
    rows = []
    for s in scripts(args.only, not args.skip_realworld):
        rows.append(run_one(s, work, args.timeout))
        print(table(rows[-1:]).splitlines()[1], flush=True)
        if args.out:  # kept current, so a run stopped early still leaves its rows
            Path(args.out).write_text(head + "\n" + table(rows) + "\n")
    text = head + "\n" + table(rows)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return 1 if any(r.verdict in ("DIFFERENT", "NOT RUN") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
