""" "Debug this kernel" on a machine without a GPU: the launcher runs a script written for CUDA with CPU
tensors standing in for CUDA ones, as the traced runs do, and says so on stderr."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = REPO / "server" / "triton_lens" / "debug_launcher.py"

ON_CUDA = textwrap.dedent(
    """
    import json
    import torch, triton, triton.language as tl

    @triton.jit
    def add_one(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

    if __name__ == "__main__":
        x = torch.zeros(64, device="cuda")
        add_one[(4,)](x, 64, BLOCK=16)
        torch.cuda.synchronize()
        print(json.dumps({"sum": float(x.sum()), "is_cuda": x.is_cuda, "gpu": torch.cuda.get_device_name()}))
    """
)


def run(tmp_path, **extra):
    (tmp_path / "on_cuda.py").write_text(ON_CUDA)
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "PYTHONPATH")}
    env.update(extra)
    return subprocess.run(
        [sys.executable, str(LAUNCHER), "on_cuda.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


def test_a_cuda_script_runs_under_the_launcher_with_the_stand_in(tmp_path):
    p = run(tmp_path, TRITON_LENS_DEVICE="cpu", TRITON_LENS_STAND_IN_GPU="A100")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    assert out == {"sum": 64.0, "is_cuda": True, "gpu": "NVIDIA A100-SXM4-80GB"}
    assert "[triton-lens] CPU stand-in for CUDA (asked for" in p.stderr


def test_a_cpu_script_gets_no_notice(tmp_path):
    (tmp_path / "on_cpu.py").write_text(
        ON_CUDA.replace('device="cuda"', 'device="cpu"')
        .replace("torch.cuda.synchronize()", "pass")
        .replace("torch.cuda.get_device_name()", "None")
    )
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", "PYTHONPATH")}
    p = subprocess.run(
        [sys.executable, str(LAUNCHER), "on_cpu.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240
    )
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout.strip().splitlines()[-1])["is_cuda"] is False
    assert "stand-in" not in p.stderr
