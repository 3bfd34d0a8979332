"""`triton-lens check` of a test file whose kernel lives outside the workspace (an installed library):
its run comment makes it runnable, named or found in a folder, and the kernel's bug is reported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

LIB = """import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs), mask=offs < n)


def copy(x, out):
    copy_kernel[(triton.cdiv(x.numel(), 128),)](x, out, x.numel(), BLOCK=128)
"""

TEST = """# triton-lens: run pytest -q -p no:cacheprovider ${file}
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "outside"))
import torch
from mylib import copy


def test_copy():
    x, out = torch.randn(1000), torch.empty(1000)
    copy(x, out)
    torch.testing.assert_close(out, x)
"""


def test_a_run_comment_runs_a_file_whose_kernel_is_outside_it_named_or_in_a_folder(tmp_path: Path):
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "mylib.py").write_text(LIB)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "test_copy.py").write_text(TEST)
    for target in ("test_copy.py", "."):
        p = subprocess.run(
            [sys.executable, "-m", "triton_lens", "check", target],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=ws,
        )
        assert p.returncode == 1, (target, p.stdout + p.stderr)
        assert "error: x_ptr: 24 lanes of program (7,) would read past the end" in p.stdout, p.stdout
