"""`triton-lens check -o FILE`: the report never replaces one of the scripts (like gcc, which refuses
an output file that is an input), and FILE changes only when the report is complete."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from markers import CORPUS


def check(*args: str, cwd: Path):
    return subprocess.run(
        [sys.executable, "-m", "triton_lens", "check", *args], capture_output=True, text=True, timeout=300, cwd=cwd
    )


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "kernels").mkdir()
    shutil.copy(CORPUS / "vector_add.py", tmp_path / "kernels" / "a.py")
    shutil.copy(CORPUS / "oob_missing_mask.py", tmp_path / "kernels" / "b.py")
    (tmp_path / "kernels" / "helper.py").write_text("import triton\n\n@triton.jit\ndef k(x):\n    pass\n")
    return tmp_path


def _refused(p, name: str) -> None:
    assert p.returncode == 2, (p.returncode, p.stderr)
    (line,) = p.stderr.splitlines()
    assert name in line and "Pass -o a file that is not one of the scripts" in line
    assert "Traceback" not in p.stderr and p.stdout == ""


@pytest.mark.parametrize(
    "args",
    [
        ("kernels/a.py", "-o", "kernels/a.py"),  # the file named
        ("kernels", "-o", "kernels/a.py"),  # a folder that contains it
        ("kernels/*.py", "-o", "kernels/b.py"),  # a glob (quoted: triton-lens expands it) that matched it
        ("kernels", "-o", "kernels/helper.py"),  # matched but not run (it launches nothing): still an input
        ("-o", "kernels/a.py", "kernels/b.py"),  # `check -o kernels/*.py` after the shell expanded it
    ],
)
def test_an_output_that_is_an_input_is_refused_and_left_alone(project, args):
    before = {f.name: f.read_bytes() for f in (project / "kernels").iterdir()}
    p = check(*args, cwd=project)
    _refused(p, args[args.index("-o") + 1])
    assert {f.name: f.read_bytes() for f in (project / "kernels").iterdir()} == before


def test_an_input_under_another_name_is_refused(project):
    os.link(project / "kernels" / "a.py", project / "a-report.txt")  # one file, two names
    before = (project / "kernels" / "a.py").read_bytes()
    p = check("kernels/a.py", "-o", "a-report.txt", cwd=project)
    _refused(p, "a-report.txt")
    assert (project / "kernels" / "a.py").read_bytes() == before


def test_the_report_replaces_the_output_file(project):
    out = project / "report.json"
    out.write_text("an old report that is much longer than the new one will be " * 1000)
    p = check("kernels/b.py", "--json", "-o", "report.json", cwd=project)
    assert p.returncode == 1, p.stderr
    assert out.read_text().startswith("{") and '"oob"' in out.read_text() and "old report" not in out.read_text()
    assert sorted(f.name for f in project.iterdir()) == ["kernels", "report.json"]  # no temporary file left


def test_an_interrupted_run_leaves_the_output_file_as_it_was(project):
    (project / "kernels" / "hangs.py").write_text(
        (CORPUS / "vector_add.py").read_text()
        + "\nimport pathlib, time\npathlib.Path(__file__).with_name('started').write_text('')\ntime.sleep(600)\n"
    )
    out = project / "report.txt"
    out.write_text("the previous report\n")
    cli = subprocess.Popen(
        [sys.executable, "-m", "triton_lens", "check", "kernels/hangs.py", "-o", "report.txt"],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # Ctrl-C as a terminal's, also when pytest runs in the background (where SIGINT is ignored,
        # and its children would inherit that)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        started = project / "kernels" / "started"
        while not started.exists() and cli.poll() is None:
            time.sleep(0.1)
        assert cli.poll() is None, cli.communicate()
        cli.send_signal(signal.SIGINT)  # Ctrl-C
        cli.communicate(timeout=120)
    finally:
        if cli.poll() is None:
            cli.kill()
            cli.wait()
    assert cli.returncode == 2
    assert out.read_text() == "the previous report\n"
    assert sorted(f.name for f in project.iterdir()) == ["kernels", "report.txt"]


def test_sarif_uris_are_valid_uris_for_any_file_name(tmp_path):
    # Spaces, "%", ":" (a relative "a:b.py" reads as scheme "a"), "#", "?" and non-ASCII: percent-encoded,
    # as RFC 3986 (and code scanning) wants; decoding gives the path back.
    inside, outside = tmp_path / "work", tmp_path / "else where"
    inside.mkdir()
    outside.mkdir()
    names = [inside / "a b%20:c#d?é.py", outside / "k 100%.py"]
    for p in names:
        shutil.copy(CORPUS / "oob_missing_mask.py", p)
    p = check(*map(str, names), "--format", "sarif", cwd=inside)
    assert p.returncode == 1, p.stderr
    log = json.loads(p.stdout)
    from urllib.parse import unquote, urlsplit

    base = log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    got = set()
    for r in log["runs"][0]["results"]:
        loc = r["locations"][0]["physicalLocation"]["artifactLocation"]
        uri = loc["uri"]
        assert uri.isascii(), uri
        assert not any(c in uri for c in ' #?"<>'), uri
        parts = urlsplit(uri)
        if loc.get("uriBaseId") == "%SRCROOT%":
            assert parts.scheme == "" and ":" not in uri.split("/")[0], uri
            got.add(unquote(urlsplit(base).path) + unquote(uri))
        else:
            assert parts.scheme == "file", uri
            got.add(unquote(parts.path))
    assert got == {str(n) for n in names}
