"""The "Debug this kernel" launcher (server/triton_lens/debug_launcher.py): it runs scripts and modules like
python does, under TRITON_INTERPRET=1, and with TRITON_LENS_STOP_PROGRAM it turns the debugger's tracing on
only for the chosen program of each launch. The real debugger stopping at a kernel breakpoint is checked by
the VS Code end-to-end test; here the tracing switch is observed directly."""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = REPO / "server" / "triton_lens" / "debug_launcher.py"
# loaded from its file, as debugpy runs it (and without putting server/triton_lens/ on sys.path, where its
# subpackages would shadow stdlib modules such as `trace` for the rest of the session)
_spec = importlib.util.spec_from_file_location("tl_debug_launcher", LAUNCHER)
debug_launcher = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(debug_launcher)


def test_parse_program():
    assert debug_launcher.parse_program("") is None
    assert debug_launcher.parse_program(None) is None
    assert debug_launcher.parse_program("3") == (3, 0, 0)
    assert debug_launcher.parse_program("3,1") == (3, 1, 0)
    assert debug_launcher.parse_program("(1, 2, 3)") == (1, 2, 3)
    with pytest.raises(ValueError):
        debug_launcher.parse_program("1,2,3,4")
    with pytest.raises(ValueError):
        debug_launcher.parse_program("-1")


KERNEL = textwrap.dedent(
    """
    import json, os, sys
    import torch, triton, triton.language as tl

    @triton.jit
    def add_one(x_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)

    if __name__ == "__main__":
        x = torch.zeros(64)
        add_one[(4,)](x, 64, BLOCK=16)
        add_one[(2,)](x, 32, BLOCK=16)
        print(json.dumps({"argv": sys.argv, "interpret": os.environ.get("TRITON_INTERPRET"),
                          "sum": float(x.sum()), "name": __name__}))
    """
)

RECORDER = textwrap.dedent(
    """
    # stands in for debugpy: records every trace_this_thread(on) call
    import atexit, json, os
    calls = []
    def trace_this_thread(on):
        calls.append(bool(on))
    atexit.register(lambda: open(os.environ["CALLS_OUT"], "w").write(json.dumps(calls)))
    """
)


def run_launcher(tmp_path, args, stop=None):
    (tmp_path / "kernel.py").write_text(KERNEL)
    fake = tmp_path / "fake"
    fake.mkdir(exist_ok=True)
    (fake / "debugpy.py").write_text(RECORDER)
    env = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", debug_launcher.STOP_ENV)}
    env["PYTHONPATH"] = str(fake)
    env["CALLS_OUT"] = str(tmp_path / "calls.json")
    if stop is not None:
        env[debug_launcher.STOP_ENV] = stop
    p = subprocess.run(
        [sys.executable, str(LAUNCHER), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240
    )
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    calls_file = tmp_path / "calls.json"
    calls = json.loads(calls_file.read_text()) if calls_file.exists() else None
    return out, calls, p.stderr


def test_runs_a_script_like_python_with_the_interpreter_on(tmp_path):
    out, calls, _ = run_launcher(tmp_path, ["kernel.py", "--flag", "v"])
    assert out == {"argv": ["kernel.py", "--flag", "v"], "interpret": "1", "sum": 96.0, "name": "__main__"}
    assert calls in (None, [])  # no stop program: tracing is never touched


def test_traces_kernel_bodies_only_in_the_chosen_program(tmp_path):
    out, calls, err = run_launcher(tmp_path, ["kernel.py"], stop="2")
    assert out["sum"] == 96.0  # the kernel still ran for every program
    assert "only in program (2, 0, 0)" in err
    # launch 1, grid 4: program 0 off, 1 (still off), 2 on, 3 off, end of launch on;
    # launch 2, grid 2: program 0 off, 1 (still off), end of launch on
    assert calls == [False, True, False, True, False, True]


def test_runs_a_module_with_dash_m(tmp_path):
    (tmp_path / "pkgmod.py").write_text(KERNEL)
    out, _, _ = run_launcher(tmp_path, ["-m", "pkgmod", "a"])
    # like `python -m pkgmod a`: argv[0] is the module's file
    assert out["argv"] == [str(tmp_path / "pkgmod.py"), "a"]
    assert out["name"] == "__main__" and out["sum"] == 96.0
