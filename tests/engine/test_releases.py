"""`triton-lens --triton-version` names the supported releases when the Python has another one."""

from __future__ import annotations

import os
import subprocess
import sys

from triton_lens.trace_engine.interpreter.releases import TESTED, unsupported_note


def test_supported_releases_have_no_note():
    for v in TESTED + ("3.6.1", "3.9.0+git1234"):
        assert unsupported_note(v) is None, v


def test_unsupported_release_names_the_supported_ones():
    for v in ("3.1.0", "2.3.1", "3.10.0", "4.0.0"):
        note = unsupported_note(v)
        assert note and v in note and "3.2" in note and "3.9" in note and "pip install triton==" in note


def test_cli_on_an_unsupported_release(tmp_path):
    fake = tmp_path / "triton"
    fake.mkdir()
    (fake / "__init__.py").write_text('__version__ = "3.1.0"\n')
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run(
        [sys.executable, "-m", "triton_lens", "--triton-version"], capture_output=True, text=True, env=env, timeout=120
    )
    assert p.returncode == 1
    assert p.stdout.strip() == "3.1.0"
    assert "not supported" in p.stderr and "3.2.0" in p.stderr and "3.9.0" in p.stderr
