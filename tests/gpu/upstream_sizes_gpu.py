"""On a machine with an NVIDIA GPU: does the compiled kernel fail at the size the size check names, and not
just below it? For each size finding (`wrap`, `oob-sizes`, `overrun`) the tool reports on the upstream bug
set (tests/upstream_sizes/kernels/, bug versions and the leftovers of fixed versions), this launches the
compiled kernel (a) at the smallest failing size the finding names and (b) at that size minus one, with its
tensors allocated at that size on the GPU, and each fixed version at its bug's size as a control. Each
launch runs in its own process (an illegal address kills the CUDA context) and reports one of:

    CLEAN    it ran, and the last programs' region holds what a torch reference computes for it
    WRONG    it ran, and some check of that region failed (a sentinel left unwritten, values off)
    FAULT    a CUDA error (an illegal memory access) at or after the launch
    REFUSED  the launch itself raised (a grid CUDA or the launcher does not take)
    SKIP     the tensors need more memory than the GPU has free
    ERROR    anything else (printed)

Outputs are filled with a sentinel (NaN, 127 for int8, ones where the kernel stores zeros) and only the last
few rows (the last programs' region, where an int32 offset wraps first) are read back and compared with a
reference computed for just those rows. Each tensor a finding names is judged by its own checks (a store's
region left unwritten; a load's values through what is stored from them), so that a size where one tensor
wraps and another does not yet shows each as it is.

    python tests/gpu/upstream_sizes_gpu.py [--out RESULT.txt] [--tool-json A.json B.json ...] [--kernels DIR]
    python tests/gpu/upstream_sizes_gpu.py --dry           # the cases, sizes and memory; no torch needed
    TRITON_INTERPRET=1 python tests/gpu/upstream_sizes_gpu.py --small --device cpu   # the launch code at
                                                           # the scripts' own small sizes (all CLEAN)

The findings are hard-coded below (FINDINGS: the tool's output of 2026-12-04); `--tool-json` reads them from
`python -m triton_lens check --json tests/upstream_sizes/kernels/X.py` output instead. Not collected by
pytest (CI has no GPU).
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

KERNELS = Path(__file__).resolve().parents[1] / "upstream_sizes" / "kernels"
SIZE_KINDS = ("wrap", "oob-sizes", "overrun")
K = 4  # rows (batches, prefix rows) read back at the end

# (file, arg, witness.size_value, line): every size finding of
# `PYTHONPATH=server python -m triton_lens check --json tests/upstream_sizes/kernels/X.py` for the 16 files,
# the tool's output of 2026-12-04 (main at e49dbc9). The other files have none.
FINDINGS = [
    ("flaggems_6087_bug.py", "input_ptr", 1398103, 43),
    ("flaggems_6087_bug.py", "out_ptr", 6710887, 44),
    ("liger_803_bug.py", "X_ptr", 3579141, 42),
    ("liger_803_bug.py", "Y_ptr", 3579141, 51),
    ("liger_803_fixed.py", "X_ptr", 22369623, 79),
    ("liger_803_fixed.py", "Y_ptr", 22369623, 92),
    ("mamba_1015_bug.py", "dt_ptr", 1677722, 50),
    ("mamba_1015_bug.py", "dt_out_ptr", 1677723, 53),
    ("mamba_1015_bug.py", "dA_cumsum_ptr", 1677723, 57),
    ("megablocks_185_bug.py", "b", 11184812, 62),
    ("triton_6748_bug.py", "pointer", 10791376, 36),
]

# Which checks of a launch show a tensor's wrap: a store's region unwritten, a load's values (through what
# the kernel stores from them). (file stem, arg) -> check names; the launchers below make the checks.
TENSOR_CHECKS = {
    ("liger_803", "X_ptr"): ["Y:values", "RSTD:values"],
    ("liger_803", "Y_ptr"): ["Y:written"],
    ("mamba_1015", "dt_ptr"): ["dt_out:values", "dA_cumsum:values"],
    ("mamba_1015", "dt_out_ptr"): ["dt_out:written"],
    ("mamba_1015", "dA_cumsum_ptr"): ["dA_cumsum:written"],
    ("flaggems_6087", "input_ptr"): ["out:values"],
    ("flaggems_6087", "out_ptr"): ["out:written"],
    ("triton_6748", "pointer"): ["pointer:written"],
    ("megablocks_185", "b"): ["b:written"],
    ("megablocks_185", "a"): ["b:values"],
}


def stem(file: str) -> str:
    return file.removesuffix(".py").removesuffix("_bug").removesuffix("_fixed")


def kernel_at(path: Path, line: int) -> str:
    """The name of the function of `path` whose body holds `line` (the finding's kernel)."""
    best = ""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef) and node.lineno <= line <= (node.end_lineno or node.lineno):
            best = node.name
    return best


# --------------------------------------------------------------------------------------------------------
# Launchers: stem -> (bytes needed at a size, run). run(mod, kernel, size, dev, variant) allocates, launches
# through `launch` (so that a refused launch is told from a fault) and returns {check: ok}. Each follows the
# host code of its file's __main__ (dtypes, strides, grid, blocks), on `dev`.


# bfloat16 as the files launch; the smoke test on CPU under TRITON_INTERPRET=1 sets float16 through
# UPSTREAM_SIZES_LIGER_DTYPE, since the stock interpreter (triton 3.9 here) stores these bf16 rows wrongly
# (the files' own __main__ fails there too).
LIGER_DTYPE = os.environ.get("UPSTREAM_SIZES_LIGER_DTYPE", "bfloat16")


def _liger_cols(kernel: str) -> int:
    return 600 if kernel == "_rms_norm_forward_kernel" else 96  # the row path's rows / the block path's


def _need_liger(kernel: str, n: int) -> int:
    return 2 * n * _liger_cols(kernel) * 2 + 4 * n


def _run_liger(mod, kernel, n, dev, variant, launch):
    import torch
    import triton

    cols = _liger_cols(kernel)
    dtype = getattr(torch, LIGER_DTYPE)
    X = torch.randn(n, cols, dtype=dtype, device=dev)
    W = torch.randn(cols, dtype=dtype, device=dev)
    Y = torch.full_like(X, float("nan"))
    RSTD = torch.full((n,), float("nan"), dtype=torch.float32, device=dev)
    last = X[-K:].clone()
    fn = getattr(mod, kernel)
    if kernel == "_rms_norm_forward_kernel":
        args = (Y, Y.stride(0), X, X.stride(0), W, W.stride(0), RSTD, RSTD.stride(0), cols, 1e-6, 0.0)
        launch(lambda: fn[(n,)](*args, BLOCK_SIZE=triton.next_power_of_2(cols)))
    else:
        args = (Y, Y.stride(0), X, X.stride(0), W, W.stride(0), RSTD, RSTD.stride(0), n, cols, 1e-6, 0.0)
        grid = (triton.cdiv(n, 16),)
        launch(lambda: fn[grid](*args, BLOCK_SIZE=triton.next_power_of_2(cols), BLOCK_ROW=16))
    x = last.float()
    rstd = torch.rsqrt((x * x).mean(dim=1) + 1e-6)
    y = (x * rstd[:, None]).to(dtype).float() * W.float()
    got_y, got_r = Y[-K:].float(), RSTD[-K:]
    return {
        "Y:written": not bool(torch.isnan(got_y).any()),
        "Y:values": bool(torch.allclose(got_y, y, rtol=2e-2, atol=2e-2)),
        "RSTD:values": bool(torch.allclose(got_r, rstd, rtol=1e-3)),
    }


MAMBA = dict(seqlen=160, nheads=8, chunk=32)  # mamba_1015_*.py's launch; the size is the batch


def _need_mamba(kernel: str, b: int) -> int:
    return 3 * 4 * b * MAMBA["seqlen"] * MAMBA["nheads"]  # dt, dt_out, dA_cumsum (float32, 5 chunks of 32)


def _run_mamba(mod, kernel, b, dev, variant, launch):
    import torch
    import triton

    seqlen, nheads, chunk = MAMBA["seqlen"], MAMBA["nheads"], MAMBA["chunk"]
    nchunks = math.ceil(seqlen / chunk)
    dt = torch.rand(b, seqlen, nheads, device=dev)
    A = -torch.rand(nheads, device=dev)
    dt_out = torch.full((b, nheads, nchunks, chunk), float("nan"), device=dev)
    dA = torch.full((b, nheads, nchunks, chunk), float("nan"), device=dev)
    grid = (b, nchunks, triton.cdiv(nheads, 4))
    fn = getattr(mod, kernel)
    launch(
        lambda: fn[grid](
            dt, A, dt_out, dA,
            b, seqlen, nheads, chunk,
            0.0, float("inf"),
            dt.stride(0), dt.stride(1), dt.stride(2),
            A.stride(0),
            dt_out.stride(0), dt_out.stride(2), dt_out.stride(1), dt_out.stride(3),
            dA.stride(0), dA.stride(2), dA.stride(1), dA.stride(3),
            BLOCK_SIZE_H=4, BLOCK_SIZE_CHUNK=triton.next_power_of_2(chunk),
        )
    )  # fmt: skip
    k = min(K, b)
    ref_dt = dt[-k:].reshape(k, nchunks, chunk, nheads).permute(0, 3, 1, 2)
    ref_dA = torch.cumsum(ref_dt * A[None, :, None, None], dim=-1)
    got_dt, got_dA = dt_out[-k:], dA[-k:]
    return {
        "dt_out:written": not bool(torch.isnan(got_dt).any()),
        "dt_out:values": bool(torch.allclose(got_dt, ref_dt)),
        "dA_cumsum:written": not bool(torch.isnan(got_dA).any()),
        "dA_cumsum:values": bool(torch.allclose(got_dA, ref_dA, atol=1e-5)),
    }


# The indices: the tool reads loaded values as zeros, so its witness holds for small index values; 0..4
# reach the same smallest size as zeros do. The file's own [3, 0, 23, -1, 5] (variant "script-indices")
# reach one prefix row further per row: index 23 wraps a row earlier.
FLAGGEMS_IDX = {"": [0, 1, 2, 3, 4], "script-indices": [3, 0, 23, -1, 5]}


def _need_flaggems(kernel: str, p: int) -> int:
    return p * 24 * 64 + p * 5 * 64  # int8 input (P, 24, 64) and out (P, 5, 64)


def _run_flaggems(mod, kernel, p, dev, variant, launch):
    import torch
    import triton

    idx = torch.tensor(FLAGGEMS_IDX[variant], dtype=torch.int32, device=dev)
    inp = torch.randint(-100, 100, (p, 24, 64), dtype=torch.int8, device=dev)
    out = torch.full((p, idx.numel(), 64), 127, dtype=torch.int8, device=dev)  # 127: never an input value
    M, N = idx.numel(), 64
    grid = (p, triton.cdiv(M, 4), triton.cdiv(N, 64))
    fn = getattr(mod, kernel)
    launch(lambda: fn[grid](inp, idx, out, M, N, BLOCK_SIZE0=4, BLOCK_SIZE1=64))
    ref = inp[-K:][:, idx.long()]
    got = out[-K:]
    return {"out:written": bool((got != 127).all()), "out:values": bool(torch.equal(got, ref))}


TRITON_ROWS = 200  # triton_6748_*.py's rows; the size is the columns (= the row stride)


def _need_triton(kernel: str, c: int) -> int:
    return 4 * TRITON_ROWS * c


def _run_triton(mod, kernel, c, dev, variant, launch):
    import torch
    import triton

    x = torch.ones(TRITON_ROWS, c, device=dev)  # the kernel stores zeros everywhere: ones are the sentinel
    fn = getattr(mod, kernel)

    def grid(META):
        return (triton.cdiv(TRITON_ROWS, META["BLOCK_SIZE_M"]) * triton.cdiv(c, META["BLOCK_SIZE_N"]),)

    launch(lambda: fn[grid](x, x.stride(0), x.stride(1), TRITON_ROWS, c))
    return {"pointer:written": bool((x[-K:] == 0).all()), "pointer:first rows": bool((x[:K] == 0).all())}


MEGA = dict(top_k=2, cols=96)  # megablocks_185_*.py's launch; the size is the tokens (a's rows)


def _need_mega(kernel: str, t: int) -> int:
    rows = MEGA["top_k"] * t
    padded = -(-rows // 8) * 8
    return 4 * t * MEGA["cols"] + 4 * padded * MEGA["cols"] + 2 * 4 * rows


def _run_mega(mod, kernel, t, dev, variant, launch):
    import torch

    top_k, cols = MEGA["top_k"], MEGA["cols"]
    rows = top_k * t
    padded = -(-rows // 8) * 8
    # One expert: every loaded bin bound is then 0 (bin_ids 0), as the size check reads them, so index_b is
    # the program id (with more experts, padding lifts index_b above it and the wrap comes sooner).
    x = torch.randn(t, cols, device=dev)
    indices = torch.arange(rows, dtype=torch.int32, device=dev)  # the stable sort of one expert's choices
    bin_ids = torch.zeros(rows, dtype=torch.int32, device=dev)
    bins = torch.tensor([rows], dtype=torch.int32, device=dev)
    padded_bins = torch.tensor([padded], dtype=torch.int32, device=dev)
    out = torch.full((padded, cols), float("nan"), device=dev)
    fn = getattr(mod, kernel)
    launch(
        lambda: fn[(rows,)](
            x, out, indices, bin_ids, None, bins, padded_bins,
            NUM_COLUMNS=cols, A_TO_B=True, TOP_K=top_k, SCALE=False, BLOCK_X=64,
        )
    )  # fmt: skip
    p = torch.arange(rows - K, rows, device=dev)
    got = out[rows - K : rows]
    return {"b:written": not bool(torch.isnan(got).any()), "b:values": bool(torch.equal(got, x[p // top_k]))}


LAUNCHERS = {
    "liger_803": (_need_liger, _run_liger),
    "mamba_1015": (_need_mamba, _run_mamba),
    "flaggems_6087": (_need_flaggems, _run_flaggems),
    "triton_6748": (_need_triton, _run_triton),
    "megablocks_185": (_need_mega, _run_mega),
}

# The files' own small sizes (their __main__), for --small: every case there must run CLEAN.
SMALL = {
    ("liger_803", "_rms_norm_forward_kernel"): 48,
    ("liger_803", "_block_rms_norm_forward_kernel"): 40,
    ("mamba_1015", "_chunk_cumsum_fwd_kernel"): 3,
    ("flaggems_6087", "index_linearized_kernel"): 7,
    ("triton_6748", "kernel_1"): 300,
    ("megablocks_185", "_padded_copy"): 10,
}


# --------------------------------------------------------------------------------------------------------
# The child: one launch, one JSON line.


def child(spec: dict, kernels: Path, dev: str) -> None:
    import torch

    res: dict = {"outcome": "", "checks": {}, "detail": ""}
    need_fn, run_fn = LAUNCHERS[stem(spec["file"])]
    need = need_fn(spec["kernel"], spec["size"])
    res["need_gib"] = round(need / 2**30, 2)
    if dev == "cuda":
        free, total = torch.cuda.mem_get_info()
        res["free_gib"] = round(free / 2**30, 1)
        if need > 0.95 * free:
            res["outcome"] = "SKIP"
            res["detail"] = f"needs {need / 2**30:.1f} GiB, {free / 2**30:.1f} GiB free of {total / 2**30:.1f}"
            print("RESULT " + json.dumps(res), flush=True)
            return
    m = importlib.util.spec_from_file_location(Path(spec["file"]).stem, kernels / spec["file"])
    assert m is not None and m.loader is not None
    mod = importlib.util.module_from_spec(m)
    m.loader.exec_module(mod)
    state = {"launched": False}

    def launch(go):
        try:
            go()
        except Exception as e:  # the launch call itself raised
            msg = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            refused = isinstance(e, OverflowError) or "invalid argument" in msg or "too many resources" in msg
            if refused:
                raise _Refused(msg) from e
            raise
        state["launched"] = True
        if dev == "cuda":
            torch.cuda.synchronize()

    t0 = time.time()
    try:
        res["checks"] = run_fn(mod, spec["kernel"], spec["size"], dev, spec.get("variant", ""), launch)
        if dev == "cuda":
            torch.cuda.synchronize()
        res["outcome"] = "CLEAN" if all(res["checks"].values()) else "WRONG"
    except _Refused as e:
        res["outcome"], res["detail"] = "REFUSED", str(e)
    except torch.OutOfMemoryError as e:
        res["outcome"], res["detail"] = "SKIP", "out of memory: " + str(e).splitlines()[0][:200]
    except Exception as e:
        msg = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:300]
        cuda = "CUDA" in msg or "illegal" in msg or "cuda" in msg
        res["outcome"] = "FAULT" if (cuda and state["launched"]) else "ERROR"
        res["detail"] = msg
    res["seconds"] = round(time.time() - t0, 2)
    print("RESULT " + json.dumps(res), flush=True)


class _Refused(Exception):
    pass


# --------------------------------------------------------------------------------------------------------
# The parent: the cases, one process each.


def load_findings(jsons: list[str]) -> list[tuple[str, str, int, int]]:
    if not jsons:
        return list(FINDINGS)
    got = []
    for j in jsons:
        d = json.loads(Path(j).read_text())
        for f in d.get("findings", []):
            if f["kind"] in SIZE_KINDS and (f.get("witness") or {}).get("size_value"):
                got.append((Path(f["file"]).name, f["arg"], int(f["witness"]["size_value"]), int(f["line"])))
    return sorted(set(got))


def make_cases(findings, kernels: Path) -> list[dict]:
    """One case per (file, kernel, size, variant): the findings' sizes (the tensors named there must show the
    bug), each size minus one (they must not), and each bug finding's size on the fixed file (must be clean
    unless the tool reports the fixed file there too)."""
    cases: dict[tuple, dict] = {}

    def case(file, kernel, size, variant=""):
        key = (file, kernel, size, variant)
        if key not in cases:
            cases[key] = dict(file=file, kernel=kernel, size=size, variant=variant, expect={}, roles=[])
        return cases[key]

    named = {(f, kernel_at(kernels / f, line), size) for f, _, size, line in findings}
    for f, arg, size, line in findings:
        kern = kernel_at(kernels / f, line)
        c = case(f, kern, size)
        c["expect"][arg] = "shows"
        c["roles"].append(f"named:{arg}")
        c = case(f, kern, size - 1)
        c["expect"].setdefault(arg, "clean")
        c["roles"].append(f"below:{arg}")
        if f.endswith("_bug.py"):
            fixed = f.replace("_bug.py", "_fixed.py")
            if (kernels / fixed).exists() and (fixed, kern, size) not in named:
                c = case(fixed, kern, size)
                c["roles"].append(f"control:{arg}")
                c["expect"].setdefault("*", "clean")
    # The data-dependence of FlagGems' smallest size: the file's own index values at the size below.
    for f, arg, size, line in findings:
        if f == "flaggems_6087_bug.py" and arg == "input_ptr":
            c = case(f, kernel_at(kernels / f, line), size - 1, "script-indices")
            c["roles"].append(f"data:{arg}")
            c["expect"][arg] = "note"
    return sorted(cases.values(), key=lambda c: (stem(c["file"]), c["file"], c["kernel"], c["size"], c["variant"]))


def verdicts(c: dict, res: dict) -> dict:
    """Per tensor the case names: shows / clean / the outcome when the kernel did not run to the checks."""
    out = {}
    for arg in c["expect"]:
        if res["outcome"] == "FAULT":
            out[arg] = "shows"
        elif res["outcome"] not in ("CLEAN", "WRONG"):
            out[arg] = res["outcome"]
        elif arg == "*":
            out[arg] = "clean" if res["outcome"] == "CLEAN" else "shows"
        else:
            names = TENSOR_CHECKS.get((stem(c["file"]), arg), list(res["checks"]))
            out[arg] = "clean" if all(res["checks"].get(n, True) for n in names) else "shows"
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="")
    ap.add_argument("--tool-json", nargs="*", default=[])
    ap.add_argument("--kernels", default=str(KERNELS))
    ap.add_argument("--dry", action="store_true", help="print the cases, sizes and memory; launch nothing")
    ap.add_argument("--small", action="store_true", help="each case at its file's own small size (smoke test)")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--only", default="", help="run only cases whose file contains this")
    ap.add_argument("--child", default="")
    args = ap.parse_args()
    kernels = Path(args.kernels).resolve()
    if args.child:
        child(json.loads(args.child), kernels, args.device)
        return
    findings = load_findings(args.tool_json)
    cases = [c for c in make_cases(findings, kernels) if args.only in c["file"]]
    lines = []
    if not args.dry and args.device == "cuda":
        import torch
        import triton

        lines.append(
            f"# python tests/gpu/upstream_sizes_gpu.py ({time.strftime('%Y-%m-%d', time.gmtime())}, "
            f"{torch.cuda.get_device_name()}, triton {triton.__version__}, torch {torch.__version__}, "
            f"{torch.cuda.mem_get_info()[1] / 2**30:.0f} GiB)"
        )
    src = ", ".join(args.tool_json) if args.tool_json else "FINDINGS (the tool's output of 2026-12-04)"
    lines.append(f"# findings from {src}: {len(findings)}; cases: {len(cases)}")
    lines.append("# file kernel size [variant]: roles | outcome | per tensor: verdict (expected) | checks | detail")
    for ln in lines:
        print(ln, flush=True)
    bad = []
    for c in cases:
        size = c["size"]
        if args.small:
            small = SMALL[(stem(c["file"]), c["kernel"])]
            below = all(r.startswith("below") for r in c["roles"])
            size = small - 1 if below else small
        need = LAUNCHERS[stem(c["file"])][0](c["kernel"], size)
        head = f"{c['file']} {c['kernel']} {size}{' ' + c['variant'] if c['variant'] else ''}: {','.join(c['roles'])}"
        if args.dry:
            lines.append(f"{head} | needs {need / 2**30:.2f} GiB | expect {c['expect']}")
            print(lines[-1], flush=True)
            continue
        spec = dict(file=c["file"], kernel=c["kernel"], size=size, variant=c["variant"])
        cmd = [sys.executable, __file__, "--child", json.dumps(spec), "--kernels", str(kernels)]
        cmd += ["--device", args.device]
        t0 = time.time()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
            rc, stdout, stderr = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            rc, stdout, stderr = -1, (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else "", "timeout"
        got = [ln for ln in stdout.splitlines() if ln.startswith("RESULT ")]
        if got:
            res = json.loads(got[-1][len("RESULT ") :])
        else:
            err = stderr.strip().splitlines()
            tail = err[-1][:300] if err else f"rc {rc}"
            res = {"outcome": "FAULT" if "illegal" in stderr else "ERROR", "checks": {}, "detail": tail}
        v = verdicts(c, res)
        per = " ".join(f"{a}={v[a]}({e})" for a, e in c["expect"].items())
        checks = " ".join(f"{k}={'ok' if ok else 'FAIL'}" for k, ok in res["checks"].items())
        lines.append(
            f"{head} | {res['outcome']} | {per} | {checks} | {res.get('detail', '')} "
            f"[{res.get('need_gib', '?')} GiB, {time.time() - t0:.1f} s, rc {rc}]"
        )
        print(lines[-1], flush=True)
        for a, e in c["expect"].items():
            if e != "note" and v[a] != e:
                bad.append(f"{c['file']} {c['kernel']} {size} {a}: {v[a]}, expected {e}")
    if not args.dry:
        lines.append(f"# {len(cases)} cases; not as expected: {len(bad)}")
        lines += [f"# NOT AS EXPECTED: {b}" for b in bad]
        for ln in lines[-len(bad) - 1 :]:
            print(ln, flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
