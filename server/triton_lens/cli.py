"""`triton-lens`: check a kernel script like a compiler would, serve the language server, or open the viewer.

    triton-lens check FILE [--json] [--timeout S] [--memory MB] [--python PY] [--cpu] [--gpu NAME] [-- ARGS...]
    triton-lens lsp
    triton-lens view FILE
    triton-lens --triton-version

Exit codes of `check`: 0 clean, 1 findings of warning or error severity, 2 tool error.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

from . import __version__


def _rel(path: str) -> str:
    try:
        rel = os.path.relpath(path)
        return rel if not rel.startswith("..") else path
    except ValueError:
        return path


def _print_human(analysis, out) -> None:
    from .analysis.standin import standin_notice
    from .analysis.stats import format_bytes

    r = analysis.result
    if r.cuda_standin is not None:
        print(standin_notice(r.cuda_standin), file=out)
    for f in analysis.findings:
        col = f.col + 1 if f.col >= 0 else 1
        print(f"{_rel(f.file)}:{f.line}:{col}: {f.severity}: {f.message} [{f.kind}]", file=out)
        for rel in f.related:
            rcol = rel.col + 1 if rel.col >= 0 else 1
            print(f"{_rel(rel.file)}:{rel.line}:{rcol}: note: {rel.message}", file=out)
        if f.detail and f.kind in ("exception", "crashed", "timeout"):
            for line in f.detail.rstrip().splitlines()[-12:]:
                print(f"    {line}", file=out)
    if analysis.accesses:
        print(file=out)
        header = f"{'line':>5}  {'kind':<6} {'arg':<12} {'launches':>8} {'programs':>8} {'lanes':>10} " \
                 f"{'active':>10} {'unique':>10} {'oob':>6} {'bytes':>9}  elements"
        print(header, file=out)
        for a in analysis.accesses:
            where = f"{a.line}" if os.path.abspath(a.file) == os.path.abspath(r.file) else f"{os.path.basename(a.file)}:{a.line}"
            print(f"{where:>5}  {a.kind:<6} {a.arg:<12} {a.launches:>8} {a.programs:>8} {a.lanes:>10} {a.active:>10} "
                  f"{a.unique:>10} {a.oob:>6} {format_bytes(a.bytes):>9}  {a.extent}", file=out)
    n_err = sum(f.severity == "error" for f in analysis.findings)
    n_warn = sum(f.severity == "warning" for f in analysis.findings)
    launches = len(r.launches)
    print(f"\n{_rel(r.file)}: {r.status}, {launches} launch{'es' if launches != 1 else ''}, "
          f"{n_err} error{'s' if n_err != 1 else ''}, {n_warn} warning{'s' if n_warn != 1 else ''} "
          f"({r.seconds:.1f} s, triton {r.triton_version or '?'}"
          f"{', CPU stand-in for CUDA' if r.cuda_standin is not None else ''})", file=out)


def _progress_printer():
    if not sys.stderr.isatty():
        return None
    state = {"last": 0.0}

    def show(p):
        now = time.monotonic()
        if now - state["last"] < 0.1:
            return
        state["last"] = now
        sys.stderr.write(f"\r{p.kernel}: launch {p.launch + 1}, {p.programs_done}/{p.programs_total} programs "
                         f"({p.seconds:.1f} s)\x1b[K")
        sys.stderr.flush()
    return show


def _gpu_name(text: str) -> str:
    from .trace.gpu_profiles import profile
    try:
        return profile(text).key
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def cmd_check(args) -> int:
    from .analysis import analyze
    from .trace.runner import RunRequest, run

    path = os.path.abspath(args.file)
    if not os.path.isfile(path):
        print(f"triton-lens: no such file: {args.file}", file=sys.stderr)
        return 2
    progress = _progress_printer()
    req = RunRequest(path=path, timeout_s=args.timeout, memory_mb=args.memory, python=args.python or sys.executable,
                     argv=list(args.script_args or []), device="cpu" if args.cpu else "auto", gpu=args.gpu)
    result = run(req, on_progress=progress)
    if progress is not None:
        sys.stderr.write("\r\x1b[K")
    analysis = analyze(result)
    if args.json:
        json.dump(analysis.to_json(), sys.stdout)
        sys.stdout.write("\n")
    else:
        _print_human(analysis, sys.stdout)
    if result.status == "error":
        if not args.json and result.error:
            print(f"triton-lens: {result.error.message}", file=sys.stderr)
        return 2
    bad = any(f.severity in ("error", "warning") for f in analysis.findings)
    return 1 if bad else 0


def cmd_lsp(args) -> int:
    from .lsp.server import main as lsp_main
    lsp_main()
    return 0


def cmd_view(args, rest) -> int:
    from .viz.cli_view import main as view_main
    return int(view_main(rest) or 0)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="triton-lens",
                                     description="See what every tl.load and tl.store of a Triton kernel did.")
    parser.add_argument("--version", action="version", version=f"triton-lens {__version__}")
    parser.add_argument("--triton-version", action="store_true", help="print the triton release the engine runs with")
    sub = parser.add_subparsers(dest="command")
    check = sub.add_parser("check", help="run a script under the interpreter and report its memory accesses")
    check.add_argument("file")
    check.add_argument("--json", action="store_true", help="print one JSON object to stdout")
    check.add_argument("--timeout", type=float, default=60.0, metavar="S", help="time limit in seconds (default 60)")
    check.add_argument("--memory", type=int, default=8192, metavar="MB", help="memory limit in MB (default 8192)")
    check.add_argument("--python", default=None, help="Python interpreter to run the script with (default: this one)")
    check.add_argument("--cpu", action="store_true",
                       help="stand in CPU tensors for CUDA ones even where a GPU is present (without one, "
                            "that happens anyway)")
    check.add_argument("--gpu", default="H100", type=_gpu_name, metavar="NAME",
                       help="the GPU the CPU stand-in for CUDA reports to the script: H100 (default), A100, RTX4090")
    sub.add_parser("lsp", help="serve the language server over stdio")
    sub.add_parser("view", help="run a script and open the access-map viewer in a browser", add_help=False)

    if argv and argv[0] == "view":
        return cmd_view(None, argv[1:])
    script_args: list[str] = []
    if "--" in argv:  # everything after -- goes to the script's own sys.argv
        cut = argv.index("--")
        argv, script_args = argv[:cut], argv[cut + 1:]
    args = parser.parse_args(argv)
    args.script_args = script_args
    if args.triton_version:
        try:
            import triton
        except ImportError:
            print("triton is not installed in this Python: run `python -m pip install triton`", file=sys.stderr)
            return 2
        print(triton.__version__)
        return 0
    if args.command == "check":
        try:
            return cmd_check(args)
        except KeyboardInterrupt:
            return 2
    if args.command == "lsp":
        return cmd_lsp(args)
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
