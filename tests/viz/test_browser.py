"""The seed's example, verbatim but for the import, and its viewer in real headless Chromium."""

import json
import os
import runpy
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "scripts", "vector_add_viz.py")


def line_of(path, needle):
    with open(path, encoding="utf-8") as f:
        return next(i for i, t in enumerate(f, 1) if needle in t)


def browse(env, **spec):
    spec.setdefault("chromium", env["chromium"])
    p = subprocess.run(
        [env["node"], os.path.join(HERE, "browse.mjs"), json.dumps(spec)],
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert p.returncode == 0, p.stderr[-4000:]
    return json.loads(p.stdout)


def test_seed_example_viewer_shows_each_access_per_program(viz, port, browser_env, monkeypatch, capsys):
    monkeypatch.setenv("PORT", str(port))
    runpy.run_path(SCRIPT, run_name="__main__")  # records the launch, serves the viewer in the background
    url = f"http://127.0.0.1:{port}/"
    assert f"triton-lens viewer: {url}" in capsys.readouterr().out
    lx, ly, lz = (
        line_of(SCRIPT, "x = tl.load(x_ptr"),
        line_of(SCRIPT, "y = tl.load(y_ptr"),
        line_of(SCRIPT, "tl.store(z_ptr"),
    )
    out = browse(
        browser_env,
        url=url,
        numel=128,
        follow=[lx, ly, lz],
        hover={"tensor": "x_ptr", "index": 5},
        clickCell={"tensor": "z_ptr", "index": 70},
        keepBodies=True,
    )
    assert out["errors"] == []
    assert out["state"]["kernel"] == "add_kernel" and out["state"]["launch"] == 0
    assert out["state"]["tensors"] == ["x_ptr", "y_ptr", "z_ptr"]
    assert out["kernelOptions"] == [f"add_kernel  (vector_add_viz.py:{line_of(SCRIPT, 'def add_kernel')})"]
    # the three accesses of add_kernel, and the line picker lists them
    assert out["lines"] == [
        f"line {lx}: tl.load(x_ptr …)",
        f"line {ly}: tl.load(y_ptr …)",
        f"line {lz}: tl.store(z_ptr …)",
    ]
    # following each access (clicked in the source panel): program 0 drew 0..63, program 1 64..127,
    # on that access's tensor only
    for line, tensor in ((lx, "x_ptr"), (ly, "y_ptr"), (lz, "z_ptr")):
        f = out["followed"][str(line)]
        assert f["follow"]["line"] == line and f["follow"]["file"] == SCRIPT
        assert f["cells"][tensor] == {"0": [[0, 63]], "1": [[64, 127]]}, (line, f["cells"])
        for other in {"x_ptr", "y_ptr", "z_ptr"} - {tensor}:
            assert f["cells"][other] == {"other": [[0, 127]]}  # touched by the other accesses
    # the source panel shows the script, with the three access lines marked
    assert out["source"]["lines"] == len(open(SCRIPT).read().splitlines())
    assert out["source"]["marked"] == [[lx, ["load"]], [ly, ["load"]], [lz, ["store"]]]
    # hover: the element, its value after the launch, which line and program touched it
    assert out["tooltip"][:3] == ["x_ptr[5]", "value: 5", f"line {lx} tl.load: program 0"]
    # clicking z[70] reveals the store's line in the source panel
    assert out["revealed"] == [lz]
    # compact data: element sets as runs, never a number per element
    maps = [json.loads(a["body"]) for a in out["api"] if a["path"] == "/api/accessMap"]
    assert sorted(m["tensor"]["name"] for m in maps) == ["x_ptr", "y_ptr", "z_ptr"]
    for m in maps:
        assert sorted((tuple(a["program"]), json.dumps(a["touched"])) for a in m["accesses"]) == [
            ((0, 0, 0), '{"runs": [0, 64]}'),
            ((1, 0, 0), '{"runs": [64, 64]}'),
        ]
    assert all(a["status"] == 200 for a in out["api"])
    assert sum(a["bytes"] for a in out["api"] if a["path"] == "/api/accessMap") < 3000


def test_view_command_shows_out_of_bounds_lanes(port, browser_env):
    from triton_lens.viz import cli_view

    script = os.path.join(HERE, "scripts", "oob_missing_mask.py")  # a copy of shared/corpus/oob_missing_mask.py
    assert cli_view.main([str(script), "--port", str(port), "--no-block"]) == 0
    server = cli_view._last_server.pop()
    try:
        lx = line_of(script, "x = tl.load(x_ptr + offs)")
        out = browse(
            browser_env,
            url=server.url,
            numel=1000,
            follow=[lx],
            probes=[{"tensor": "x_ptr", "index": {"offset": 1000}}, {"tensor": "x_ptr", "index": {"offset": 1023}}],
        )
        assert out["errors"] == []
        assert out["state"]["tensors"] == ["x_ptr", "y_ptr", "out_ptr"]
        f = out["followed"][str(lx)]
        # 8 programs of 128: program p drew 128p..128p+127, the last one up to 999
        assert f["cells"]["x_ptr"] == {str(p): [[128 * p, min(128 * p + 127, 999)]] for p in range(8)}
        # the 24 lanes of program 7 past the end are drawn as out of bounds, for the followed line
        for probe in f["probes"]:
            assert probe["oobFollowed"] and not probe["element"], probe
    finally:
        server.stop()
