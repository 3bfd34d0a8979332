"""`triton-lens view FILE`: run a script like `triton-lens check` does (in a worker process, through
the engine's runner) and serve the access-map viewer for its launches.

    triton-lens view FILE [--port N] [--share] [--open] [--timeout S] [--memory MB] [--python PY] [--workers N] [-- ARGS...]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from ..cli_options import Parser, add_run_limits
from ..model.remedies import COMMAND_LINE


def _parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="triton-lens view",
        description="Run a script under the interpreter and show its memory accesses "
        "in a browser (the access-map viewer).",
    )
    p.add_argument("file", help="the script to run (its kernel launches are recorded)")
    p.add_argument(
        "--port",
        type=int,
        default=None,
        help="port on 127.0.0.1 (default 5001, or 8000 with --share; 0: any free port)",
    )
    p.add_argument(
        "--share",
        action="store_true",
        help="also open a public https://….trycloudflare.com link (needs `cloudflared` on PATH)",
    )
    p.add_argument("--open", action="store_true", help="open the viewer in the default browser")
    add_run_limits(p)
    p.add_argument("--no-block", action="store_true", help=argparse.SUPPRESS)  # tests: return once serving
    return p


def _progress():
    if not sys.stderr.isatty():
        return None
    last = [0.0]

    def show(p):
        now = time.monotonic()
        if now - last[0] < 0.1:
            return
        last[0] = now
        sys.stderr.write(
            f"\r{p.kernel}: launch {p.launch + 1}, {p.programs_done}/{p.programs_total} programs "
            f"({p.seconds:.1f} s)\x1b[K"
        )
        sys.stderr.flush()

    return show


def run_script(
    path: str,
    timeout_s: float = 60.0,
    memory_mb: int = 8192,
    python: str | None = None,
    argv: list[str] | None = None,
    on_progress=None,
    workers: int = 0,
):
    """Run `path` the way its run plan says (its `# triton-lens: run` comment, else the file itself)."""
    from ..source.plan import plan
    from ..trace_engine import RunRequest, run

    env = dict(os.environ)
    env["TRITON_LENS_WORKER"] = "1"  # the script's own triton_viz.launch() must not serve (we do)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            p = plan(path, f.read(), {}, [os.getcwd()])
    except OSError:
        p = None
    command = list(p.command) + list(argv or []) if p is not None and p.command else None
    req = RunRequest(
        path=path,
        command=command,
        cwd=p.cwd if p is not None and command else None,
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        python=python or sys.executable,
        argv=[] if command else list(argv or []),
        env=env,
        workers=workers or 0,  # 0: the runner's default
    )
    return run(req, on_progress=on_progress)


def summary(result) -> str:
    from ..analysis import analyze

    a = analyze(result, COMMAND_LINE)
    n_err = sum(f.severity == "error" for f in a.findings)
    n_warn = sum(f.severity == "warning" for f in a.findings)
    n = len(result.launches)
    lines = [
        f"{result.file}: {result.status}, {n} launch{'es' if n != 1 else ''}, {n_err} error"
        f"{'s' if n_err != 1 else ''}, {n_warn} warning{'s' if n_warn != 1 else ''} ({result.seconds:.1f} s)"
    ]
    if result.cuda_standin is not None:
        from ..analysis.standin import standin_notice

        lines.append("  " + standin_notice(result.cuda_standin))
    if result.error is not None:
        where = f" at line {result.error.line}" if result.error.line else ""
        lines.append(f"  the script stopped{where}: {result.error.type}: {result.error.text(COMMAND_LINE)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    script_args: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, script_args = argv[:cut], argv[cut + 1 :]
    args = _parser().parse_args(argv)
    if args.no_block:  # in-process (tests): the caller's streams stay as they are
        return _view(args, script_args)
    from .dropping_io import never_blocking_stdio

    # Until Ctrl-C: a stdout or stderr that nobody reads (a full pipe) drops lines instead of
    # blocking a write, which Ctrl-C could not end (dropping_io.py).
    with never_blocking_stdio():
        return _view(args, script_args)


def _view(args: argparse.Namespace, script_args: list[str]) -> int:
    path = os.path.abspath(args.file)
    if not os.path.isfile(path):
        print(f"triton-lens: no such file: {args.file}", file=sys.stderr)
        return 2
    try:
        import flask  # noqa: F401
    except ImportError:
        print("triton-lens view needs Flask: python -m pip install 'triton-lens[viewer]' (or flask)", file=sys.stderr)
        return 2
    from ..analysis.viewer_service import ViewerService
    from .server import ViewerError, ViewerServer
    from .tunnel import INSTALL_HINT, TunnelError, find_cloudflared

    if args.share and find_cloudflared() is None:
        print(f"triton-lens: {INSTALL_HINT}", file=sys.stderr)
        return 2

    progress = _progress()
    try:
        result = run_script(path, args.timeout, args.memory, args.python, script_args, progress, args.workers)
    except KeyboardInterrupt:
        return 2
    if progress is not None:
        sys.stderr.write("\r\x1b[K")
    print(summary(result), flush=True)
    if result.status == "error":
        return 2

    port = args.port if args.port is not None else (8000 if args.share else 5001)
    data = ViewerService.from_result(result)
    try:
        server = ViewerServer(data, port=port, title=f"Triton Lens: {os.path.basename(path)}", warm=False)
    except ViewerError as e:
        print(f"triton-lens: {e}", file=sys.stderr)
        return 2
    try:
        data.warm()  # the maps the page opens first, computed before the address is shown
        url = server.url
        if args.share:
            try:
                url = server.share()
            except TunnelError as e:
                server.stop()
                print(f"triton-lens: {e}", file=sys.stderr)
                return 2
            print(f"triton-lens viewer: {url}  (public link; local: {server.url})", flush=True)
            print(
                "triton-lens: warning: anyone with this link sees the kernel's source, access maps and tensor "
                "values until the viewer stops",
                file=sys.stderr,
                flush=True,
            )
        else:
            print(f"triton-lens viewer: {url}", flush=True)
        if args.open:
            import webbrowser

            webbrowser.open(server.url)
        if args.no_block:
            _last_server[:] = [server]
            return 0
        print("Press Ctrl-C to stop.", flush=True)
        server.wait()  # until Ctrl-C: stops the server and says so
    except KeyboardInterrupt:
        # Ctrl-C before wait() took it over: while the maps warmed, or in the instant between the address
        # shown and wait() (a loaded machine runs the server's threads there): the same end as in wait().
        from .dropping_io import say

        server.stop()
        say("\ntriton-lens: viewer stopped")
    return 0


_last_server: list = []  # the server of the last `main([... "--no-block"])` (tests stop it)


if __name__ == "__main__":
    sys.exit(main())
