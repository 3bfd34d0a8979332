"""`triton-lens view FILE`: runs the script in a worker (the engine's runner) and serves the viewer."""

import gzip
import json
import os
import subprocess
import sys
import time
import urllib.request

from viz_support import free_port

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))


def post(url, body):
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json", "Accept-Encoding": "gzip"}
    )
    with urllib.request.urlopen(req, timeout=30) as r:
        raw = r.read()
        if r.headers.get("Content-Encoding") == "gzip":
            raw = gzip.decompress(raw)
        return json.loads(raw)


def test_view_runs_a_triton_viz_script_and_serves_its_launches(port, capsys):
    from triton_lens.viz import cli_view

    script = os.path.join(HERE, "scripts", "vector_add_viz.py")
    assert cli_view.main([script, "--port", str(port), "--no-block"]) == 0
    server = cli_view._last_server.pop()
    try:
        out = capsys.readouterr().out
        assert f"{script}: ok, 1 launch, 0 errors, 0 warnings" in out
        assert f"triton-lens viewer: http://127.0.0.1:{port}/" in out
        assert server.httpd.socket.getsockname() == ("127.0.0.1", port)
        ov = post(server.url + "api/kernels", {})
        (k,) = ov["kernels"]
        assert (k["name"], k["file"], [li["grid"] for li in k["launches"]]) == ("add_kernel", script, [[2, 1, 1]])
        m = post(server.url + "api/accessMap", {"launch": 0, "tensor": 2})
        assert m["tensor"]["name"] == "z_ptr"
        assert [(a["program"], a["touched"]) for a in m["accesses"]] == [
            ([0, 0, 0], {"runs": [0, 64]}),
            ([1, 0, 0], {"runs": [64, 64]}),
        ]
        v = post(server.url + "api/values", {"launch": 0, "tensor": 2, "start": 60, "count": 4})
        assert v["values"] == [120.0, 122.0, 124.0, 126.0]  # z = x + y, after the launch
    finally:
        server.stop()


def test_view_through_the_cli_entry_point_and_its_errors(tmp_path):
    # the lead's `triton-lens` CLI hands `view ...` to viz.cli_view.main
    from triton_lens.viz import cli_view

    assert cli_view.main([str(tmp_path / "missing.py")]) == 2
    env = dict(os.environ, PATH=str(tmp_path), PYTHONPATH=os.path.join(REPO, "server"))
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "triton_lens.cli",
            "view",
            os.path.join(HERE, "scripts", "vector_add_viz.py"),
            "--share",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert p.returncode == 2 and "cloudflared" in p.stderr and "share=False" in p.stderr


def test_view_blocks_and_serves_until_interrupted(tmp_path):
    port = free_port()
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "server"))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "triton_lens.cli",
            "view",
            os.path.join(HERE, "scripts", "oob_missing_mask.py"),
            "--port",
            str(port),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        deadline = time.time() + 120
        line = ""
        while time.time() < deadline and "triton-lens viewer:" not in line:
            line = proc.stdout.readline()
            assert line or proc.poll() is None, proc.stderr.read()
        assert line.strip() == f"triton-lens viewer: http://127.0.0.1:{port}/"
        ov = post(f"http://127.0.0.1:{port}/api/kernels", {})
        assert ov["kernels"][0]["name"] == "add_kernel"
        m = post(f"http://127.0.0.1:{port}/api/accessMap", {"launch": 0, "tensor": 0})
        oob = [a["oob"] for a in m["accesses"] if a["oob"]]
        assert oob == [{"runs": [1000, 24]}]  # the 24 lanes of program 7 past x's end
    finally:
        proc.send_signal(2)  # Ctrl-C
        try:
            proc.wait(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0, proc.stderr.read()[-3000:]


def test_triton_viz_script_under_the_engine_is_recorded_once_and_launch_does_not_serve(tmp_path):
    # `triton-lens check`/`view` run the whole script under their own recorder: a @trace'd kernel is
    # recorded by it (out-of-bounds lanes seen once, not hidden by a second recorder), the script's
    # sanitizer does not abort the run, and its launch() returns at once instead of serving.
    from triton_lens.analysis import analyze
    from triton_lens.trace_engine.runner import RunRequest, run

    src = open(os.path.join(HERE, "scripts", "oob_missing_mask.py")).read()
    src = src.replace(
        "import triton.language as tl\n", "import triton.language as tl\nimport triton_lens as triton_viz\n"
    )
    src = src.replace("@triton.jit\n", '@triton_viz.trace("sanitizer")\n@triton_viz.trace("tracer")\n@triton.jit\n')
    src += "    triton_viz.launch(share=False)\n    print('after launch')\n"
    script = tmp_path / "viz_oob.py"
    script.write_text(src)
    env = {k: v for k, v in os.environ.items() if k != "TRITON_LENS_WORKER"}
    result = run(RunRequest(path=str(script), timeout_s=120, env=env))  # as `triton-lens check` runs it
    assert result.status == "ok", result.error
    assert len(result.launches) == 1 and int(result.launches[0].ex_oob.sum()) == 24
    assert "launch() skipped" in result.stderr and "after launch" in result.stdout
    oob = [f for f in analyze(result).findings if f.kind == "oob"]
    assert [(f.arg, f.lanes) for f in oob] == [("x_ptr", 24)]
