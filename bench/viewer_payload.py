"""What the browser viewer sends for a 1M-element vector add, and how long the data takes.

Records `add_kernel` on 2^20 float32 elements (1024 programs of 1024) with `@triton_viz.trace`, serves
it with `triton_viz.launch(share=False, block=False)`, then loads what the page loads (kernels
overview + one access map per tensor):
  - from Python, as the page asks (POST, Accept-Encoding: gzip): bytes on the wire and unpacked, and
    the time from the first request to the last answer, cold (maps computed on demand) and as
    launch() serves them (computed once, in the background, right after it starts);
  - in headless Chromium (tests/viz/browse.mjs, if node, playwright-core and chromium are there):
    bytes of every api/ answer and the time from the first to the last data request.
Triton-Viz 3.0 on the same workload: 20.6 MB of JSON, 0.9 s (shared/notes/competitors.md).
Targets: <= 256 KB and <= 100 ms for the data.

    python bench/viewer_payload.py [--out FILE] [--no-browser] [--reps N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import shutil
import subprocess
import sys
import time
import urllib.request
from datetime import date

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "server"))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import triton_lens as triton_viz  # noqa: E402

N = 1 << 20
BLOCK = 1024


@triton_viz.trace("tracer")
@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N, B: tl.constexpr):
    pid = tl.program_id(0)
    offsets = tl.arange(0, B) + pid * B
    mask = offsets < N
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    z = x + y
    tl.store(z_ptr + offsets, z, mask=mask)


def post(url: str, body: dict) -> tuple[int, int, dict]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json", "Accept-Encoding": "gzip"}
    )
    with urllib.request.urlopen(req, timeout=60) as r:
        wire = r.read()
        raw = gzip.decompress(wire) if r.headers.get("Content-Encoding") == "gzip" else wire
    return len(wire), len(raw), json.loads(raw)


def page_data(base: str) -> dict:
    """The requests the page makes on load, in its order (overview, then the maps in parallel: here serial)."""
    t0 = time.perf_counter()
    wire, raw, ov = post(base + "api/kernels", {})
    li = ov["kernels"][0]["launches"][0]
    total_wire, total_raw = wire, raw
    for t in li["tensors"]:
        w, r, m = post(base + "api/accessMap", {"launch": li["index"], "tensor": t["index"]})
        assert len(m["accesses"]) == N // BLOCK
        total_wire += w
        total_raw += r
    return {"wire": total_wire, "raw": total_raw, "ms": (time.perf_counter() - t0) * 1e3, "maps": len(li["tensors"])}


@triton_viz.trace("tracer")
@triton.jit
def add_loop_kernel(x_ptr, y_ptr, z_ptr, N, B: tl.constexpr, STEPS: tl.constexpr):
    # the same vector add, each program walking its 1024 elements in STEPS loop iterations
    for i in range(STEPS):
        offs = (tl.program_id(0) * STEPS + i) * B + tl.arange(0, B)
        m = offs < N
        tl.store(z_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def page_data_full(base: str) -> dict:
    """What the page loads with Values on and loop steps in the maps: overview, maps (with steps),
    performance, tl.dot executions, and one value map per tensor."""
    t0 = time.perf_counter()
    wire, raw, ov = post(base + "api/kernels", {})
    li = ov["kernels"][0]["launches"][0]
    total_wire, total_raw, steps = wire, raw, 0
    for method in ("performance", "dots"):
        w, r, _ = post(base + f"api/{method}", {"launch": li["index"]})
        total_wire += w
        total_raw += r
    for t in li["tensors"]:
        w, r, m = post(base + "api/accessMap", {"launch": li["index"], "tensor": t["index"]})
        steps += sum(len(a.get("steps") or []) for a in m["accesses"])
        total_wire += w
        total_raw += r
        w, r, v = post(base + "api/valueMap", {"launch": li["index"], "tensor": t["index"], "when": "after"})
        total_wire += w
        total_raw += r
    return {
        "wire": total_wire,
        "raw": total_raw,
        "ms": (time.perf_counter() - t0) * 1e3,
        "requests": 3 + 2 * len(li["tensors"]),
        "steps": steps,
        "block": v["block"],
    }


def browser(url: str, reps: int) -> dict | None:
    node = shutil.which("node")
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium")
    script = os.path.join(REPO, "tests", "viz", "browse.mjs")
    if not (node and chromium and os.path.isdir(os.path.join(REPO, "tests", "viz", "node_modules", "playwright-core"))):
        return None
    runs = []
    for _ in range(reps):  # a fresh browser each time: nothing cached
        p = subprocess.run(
            [node, script, json.dumps({"url": url, "chromium": chromium})],
            cwd=os.path.dirname(script),
            capture_output=True,
            text=True,
            timeout=300,
        )
        if p.returncode != 0:
            print(p.stderr[-2000:], file=sys.stderr)
            return None
        out = json.loads(p.stdout)
        # the access-map page's own data requests, from its Resource Timing (the host page beside it
        # asks for the overview too); Server-Timing carries the server's own time per answer
        data = [r for r in out["resources"] if r["path"] in ("/api/kernels", "/api/accessMap")]
        first_map = min(r["start"] for r in data if r["path"] == "/api/accessMap")
        kernels_end = max(r["end"] for r in data if r["path"] == "/api/kernels")
        runs.append(
            {
                "wire": sum(r["transfer"] for r in data),
                "body": sum(r["encoded"] for r in data),
                "ms": max(r["end"] for r in data) - min(r["start"] for r in data),
                "page_js": max(0.0, first_map - kernels_end),
                "server": sum(r["server"] for r in data),
                "requests": len(data),
                "page_ms": out["loadMs"],
                "errors": out["errors"],
            }
        )
    return {
        "wire": runs[0]["wire"],
        "body": runs[0]["body"],
        "requests": runs[0]["requests"],
        "ms": [r["ms"] for r in runs],
        "page_js": [r["page_js"] for r in runs],
        "server": [r["server"] for r in runs],
        "page_ms": [r["page_ms"] for r in runs],
        "errors": sum((r["errors"] for r in runs), []),
    }


def _stats(ms: list, digits: int = 0) -> str:
    v = sorted(ms)
    return f"median {v[len(v) // 2]:.{digits}f} ms (min {v[0]:.{digits}f}, max {v[-1]:.{digits}f}, {len(v)} runs)"


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", help="also write the report to this file")
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--reps", type=int, default=5, help="repetitions of the served-data timings (median)")
    args = ap.parse_args()

    load0 = " ".join(f"{v:.1f}" for v in os.getloadavg())
    x, y, z = torch.rand(N), torch.rand(N), torch.empty(N)
    t0 = time.perf_counter()
    add_kernel[(triton.cdiv(N, BLOCK),)](x, y, z, N, BLOCK)
    run_s = time.perf_counter() - t0
    assert torch.equal(z, x + y)

    from triton_lens.viz.server import ViewerServer
    from triton_lens.viz.viewdata import in_process_data

    # cold: every map computed when the page asks for it
    cold_server = ViewerServer(in_process_data(), port=0, warm=False)
    cold = page_data(cold_server.url)
    cold_server.stop()

    # as launch() serves: maps computed once in the background as soon as it starts
    url = triton_viz.launch(share=False, port=0, block=False)
    first = page_data(url)  # asked at once, while the maps may still be in the making
    again = [page_data(url)["ms"] for _ in range(args.reps)]
    chrome = None if args.no_browser else browser(url, args.reps)
    triton_viz.stop()

    # values and iterations on: the looped kernel (4 steps per access), every extra request
    triton_viz.clear()
    add_loop_kernel[(triton.cdiv(N, BLOCK),)](x, y, z, N, BLOCK // 4, 4)
    assert torch.equal(z, x + y)
    url = triton_viz.launch(share=False, port=0, block=False)
    full = page_data_full(url)
    full_again = [page_data_full(url)["ms"] for _ in range(args.reps)]
    triton_viz.stop()

    lines = [
        f"# bench/viewer_payload.py, {date.today().isoformat()}",
        f"machine: {platform.node() or '?'}, {os.cpu_count()} CPUs ({cpu_model()}), {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}, triton {triton.__version__}, "
        f"torch {torch.__version__}; load average at start {load0}, at end "
        f"{' '.join(f'{v:.1f}' for v in os.getloadavg())} (other work shares this machine)",
        f"workload: vector add, {N:,} float32 elements, {N // BLOCK} programs of {BLOCK}, 3 accesses "
        f"(traced run {run_s:.2f} s)",
        "",
        "data the page loads (kernels overview + one access map per tensor):",
        f"  size: {cold['wire'] / 1024:.1f} KB on the wire (gzip), {cold['raw'] / 1024:.1f} KB unpacked, "
        f"{1 + cold['maps']} requests          (target <= 256 KB; Triton-Viz: 20.6 MB)",
        f"  time, page opened right after launch(): {first['ms']:.0f} ms   (target <= 100 ms; Triton-Viz: 0.9 s)",
        f"  time, maps already computed:             {_stats(again)}",
        f"  time, cold (maps computed on request):   {cold['ms']:.0f} ms",
    ]
    lines += [
        f"with Values on and loop steps (the same add, each program in 4 loop steps of {BLOCK // 4}: "
        f"{full['steps']:,} per-step sets in the maps; value maps of {N // full['block']:,} colours, "
        f"{full['block']} elements each):",
        f"  size: {full['wire'] / 1024:.1f} KB on the wire (gzip), {full['raw'] / 1024:.1f} KB unpacked, "
        f"{full['requests']} requests (overview, performance, dots, 3 maps, 3 value maps)   (target <= 256 KB)",
        f"  time, first load (maps computed in the background): {full['ms']:.0f} ms; again: {_stats(full_again)}",
    ]
    if chrome is not None:
        lines += [
            "headless Chromium (tests/viz/browse.mjs), page opened after the maps were computed:",
            f"  the page's data: {chrome['body'] / 1024:.1f} KB of bodies ({chrome['wire'] / 1024:.1f} KB with "
            f"headers) in {chrome['requests']} responses",
            f"  from its first request to its last answer: {_stats(chrome['ms'])}",
            f"    of which the page's own work between the overview and the maps: {_stats(chrome['page_js'])}",
            f"    and the server's time answering (Server-Timing, summed): {_stats(chrome['server'], 2)}",
            f"  page drawn after navigation: {_stats(chrome['page_ms'])}"
            + (f"; page errors: {chrome['errors']}" if chrome["errors"] else ""),
        ]
    else:
        lines.append(
            "headless Chromium: not measured ("
            + ("--no-browser" if args.no_browser else "node, playwright-core in tests/viz or chromium missing")
            + ")"
        )
    report = "\n".join(lines)
    print(report)
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(report + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
