"""A library's own test file, run unchanged by `pytest --triton-lens` on a machine without a GPU:
flash-attn's tests/test_rotary.py, taken at test time from the flash-attn sdist that `make setup` installs
from and keeps in .venv/sdists (nothing of it is in this repository). It is written for CUDA: collection
calls `torch.cuda.get_device_capability("cuda")`, the tests make `device="cuda"` tensors and run the
rotary kernel forward and backward against flash-attn's torch reference. The one file added next to it is
a conftest.py that imports flash-attn's kernel modules without its package __init__ (which imports the
flash_attn_2_cuda extension that the sdist, built with FLASH_ATTENTION_SKIP_CUDA_BUILD, does not have)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import triton_lens

HERE = Path(__file__).parent
SDIST = Path(sys.prefix) / "sdists" / "flash_attn-2.8.3.post2.tar.gz"
MEMBER = "flash_attn-2.8.3.post2/tests/test_rotary.py"
# One of its 217 cases, the plain one: each is the library's own size (batch 32 x seqlen 217 x 4 heads x
# 128), a launch forward and one backward, about 20 s here idle (a second case, interleaved with per-batch
# offsets, passed too but doubled the time on 2 loaded cores).
CASES = ["test_rotary.py::test_rotary_emb_func[False-False-1.0-0-dtype0]"]


def test_flash_attn_rotary_tests_run_unchanged_under_the_plugin(tmp_path):
    assert SDIST.is_file(), f"{SDIST} is missing: `make setup` downloads it"
    with tarfile.open(SDIST) as tar:
        source = tar.extractfile(MEMBER)
        assert source is not None
        (tmp_path / "test_rotary.py").write_bytes(source.read())
    (tmp_path / "conftest.py").write_text(
        f"import sys\nsys.path.insert(0, {str(HERE)!r})\n"
        "from _kernels_only import kernels_only\n\nkernels_only('flash_attn')\n"
    )
    server = str(Path(triton_lens.__file__).parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [server, os.environ.get("PYTHONPATH")]))}
    env.pop("TRITON_INTERPRET", None)
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--triton-lens", "-q", *CASES],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    assert re.search(r"\b1 passed\b", out) and not re.search(r"\b\d+ (failed|errors?)\b", out), out[-4000:]
    # The test recorded, its forward and backward launch, and no finding.
    assert "1 test recorded, 2 kernel launches, 0 with findings" in out, out[-4000:]
    assert "CPU stand-in for CUDA" in out and "1 test ran on it" in out, out[-4000:]
