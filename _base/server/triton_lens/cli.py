"""`triton-lens`: check a kernel script like a compiler would, serve the language server, or open the viewer.

    triton-lens check PATH... [--format text|json|sarif|github] [--json] [-o FILE] [--jobs N] [--show-output]
                      [--timeout S] [--memory MB] [--python PY] [--cpu] [--gpu NAME] [--workers N] [-- ARGS...]
    triton-lens lsp
    triton-lens view FILE
    triton-lens --triton-version

Exit codes of `check`, over all files: 0 clean, 1 findings of warning or error severity, 2 tool error
(a wrong option value too: cli_options.py checks each as it is parsed, before anything runs).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from . import __version__
from .cli_options import Parser, add_run_limits, count, output_file
from .report import FORMATS


def _progress_printer():
    if not sys.stderr.isatty():
        return None
    state = {"last": 0.0}

    def show(p):
        now = time.monotonic()
        if now - state["last"] < 0.1:
            return
        state["last"] = now
        sys.stderr.write(
            f"\r{p.kernel}: launch {p.launch + 1}, {p.programs_done}/{p.programs_total} programs "
            f"({p.seconds:.1f} s)\x1b[K"
        )
        sys.stderr.flush()

    return show


def _gpu_name(text: str) -> str:
    from .trace_engine import profile

    try:
        return profile(text).key
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _output_refusal(output: str, inputs: list[str]) -> str | None:
    """Why `-o output` would destroy a file the user has (None: it would not)."""
    from .check.output import same_file

    fix = "Pass -o a file that is not one of the scripts, e.g. -o triton-lens-report.txt."
    clash = next((p for p in inputs if same_file(p, output)), None)
    if clash is not None:
        return (
            f"the output file {output} is the input file {os.path.relpath(clash)}: the report would replace it. {fix}"
        )
    if output.endswith(".py") and os.path.isfile(output):
        # `check -o *.py`: the shell makes the first script the output (-o a.py b.py c.py)
        return (
            f"the output file {output} is an existing Python file: the report would replace it "
            f"(a shell expands `check -o *.py` to `-o {os.path.basename(output)} ...`). {fix}"
        )
    return None


def cmd_check(args) -> int:
    from .check.output import LiveOutput, ReportFile
    from .check.run_all import Options, check_all, exit_code
    from .check.targets import find_targets
    from .model.remedies import COMMAND_LINE
    from .report import github, json_report, sarif, text
    from .trace_engine import default_workers

    fmt = "json" if args.json else args.format
    targets = find_targets(args.paths, roots=[os.getcwd()], filter_named_files=args.kernel_files_only)
    if args.output:  # like gcc: the report never replaces one of the files it is about
        refusal = _output_refusal(args.output, targets.inputs)
        if refusal:
            print(f"triton-lens: {refusal}", file=sys.stderr)
            return 2
    problems = list(targets.problems)
    if not targets.files and not problems and args.kernel_files_only:
        return 0  # e.g. a commit that changes no kernel file
    if not targets.files and not problems:
        problems.append(
            f"no kernel file found in {' '.join(args.paths)}: a folder contributes the .py files "
            "that define a @triton.jit kernel and launch it, or have a `# triton-lens: run` comment"
        )
    many = not (len(args.paths) == 1 and os.path.isfile(args.paths[0]))
    opts = Options(
        timeout_s=args.timeout,
        memory_mb=args.memory,
        python=args.python or sys.executable,
        script_args=tuple(args.script_args or ()),
        jobs=args.jobs,
        device="cpu" if args.cpu else "auto",
        gpu=args.gpu,
        # files already run side by side: by default each gets an equal share of the cores
        workers=args.workers  # 0: the runner's default
        if args.workers or len(targets.files) <= 1
        else max(1, default_workers() // min(len(targets.files), args.jobs or len(targets.files))),
    )
    try:
        report = ReportFile(args.output) if args.output else None  # replaces the file once complete
    except OSError as e:  # a folder without write permission, a read-only file system
        print(
            f"triton-lens: cannot write the report to {args.output}: {e.strerror or e}. "
            "Pass -o a file in a folder you can write to.",
            file=sys.stderr,
        )
        return 2
    out = report.file if report is not None else sys.stdout
    # The scripts' own output goes where it cannot break a machine-readable report.
    live = LiveOutput(sys.stdout if fmt == "text" else sys.stderr, prefix=many) if args.show_output else None
    progress = _progress_printer() if not many else None

    def done(c) -> None:  # text: each file as it finishes, so a long CI log shows progress
        if progress is not None:
            sys.stderr.write("\r\x1b[K")
        if live is not None:
            live.flush()
        if fmt == "text":
            text.write_file(c, out, show_output_tail=live is None)
            out.flush()

    try:
        checked = check_all(targets.files, opts, on_output=live, on_done=done, on_progress=progress)
        code = exit_code(checked, problems)
        for p in problems:
            print(f"triton-lens: {p}", file=sys.stderr)
        if fmt == "text":
            if many:
                text.write_total(checked, out)
        elif fmt == "json":
            if checked or many:
                json_report.write(checked, out, many=many, exit_code=code, problems=problems)
        elif fmt == "sarif":
            sarif.write(checked, out, problems)
        elif fmt == "github":
            github.write(checked, out, problems)
        for c in checked:  # a tool error says what to do, on stderr whatever the format
            if c.tool_error and c.result.error is not None:
                print(f"triton-lens: {c.result.error.text(COMMAND_LINE)}", file=sys.stderr)
        if report is not None:
            report.commit()
    finally:
        if report is not None:
            report.discard()  # not committed (an exception, Ctrl-C): the file is left as it was
    return code


def cmd_lsp(args) -> int:
    from .lsp.server import main as lsp_main

    lsp_main()
    return 0


def cmd_view(args, rest) -> int:
    from .viz.cli_view import main as view_main

    return int(view_main(rest) or 0)


def _dash_names_as_paths(argv: list[str], parser) -> list[str]:
    """A script named `-x.py` is that file, not an unknown option -x (argparse refused it, and `--`
    already starts the script's own arguments): a word that starts with "-", is no option of
    `check` and names an existing .py file is passed on as ./-x.py, the spelling `rm` recommends.
    An option's value is never such a word (argparse would refuse the option without its value)."""
    options = set(parser._option_string_actions)
    return [
        "./" + a if a.startswith("-") and a not in options and a.endswith(".py") and os.path.isfile(a) else a
        for a in argv
    ]


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = Parser(prog="triton-lens", description="See what every tl.load and tl.store of a Triton kernel did.")
    parser.add_argument("--version", action="version", version=f"triton-lens {__version__}")
    parser.add_argument("--triton-version", action="store_true", help="print the triton release the engine runs with")
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    check = sub.add_parser("check", help="run kernel scripts under the interpreter and report their memory accesses")
    check.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="files, folders (their .py files that launch a @triton.jit kernel or have a "
        "`# triton-lens: run` comment) or globs",
    )
    check.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="text (default), json, sarif (2.1.0, for code scanning) or github (workflow annotations)",
    )
    check.add_argument("--json", action="store_true", help="same as --format json")
    check.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        type=output_file,
        help="write the report to FILE instead of stdout (once complete; never over one of the scripts)",
    )
    check.add_argument(
        "--jobs",
        "-j",
        type=count("--jobs", "files run at once", 2),
        default=0,
        metavar="N",
        help="files run at once (default: one per core)",
    )
    check.add_argument(
        "--kernel-files-only",
        action="store_true",
        help="run named files only if they launch a kernel or have a run comment, like files "
        "found in a folder (for pre-commit, which passes every changed file)",
    )
    check.add_argument(
        "--show-output",
        action="store_true",
        help="stream the scripts' own stdout and stderr while they run (stderr for json, sarif, github)",
    )
    add_run_limits(check)
    check.add_argument(
        "--cpu",
        action="store_true",
        help="stand in CPU tensors for CUDA ones even where a GPU is present (without one, that happens anyway)",
    )
    check.add_argument(
        "--gpu",
        default="H100",
        type=_gpu_name,
        metavar="NAME",
        help="the GPU the CPU stand-in for CUDA reports to the script: H100 (default), A100, RTX4090",
    )
    sub.add_parser("lsp", help="serve the language server over stdio")
    sub.add_parser("view", help="run a script and open the access-map viewer in a browser", add_help=False)

    if argv and argv[0] == "view":
        return cmd_view(None, argv[1:])
    script_args: list[str] = []
    if "--" in argv:  # everything after -- goes to the script's own sys.argv
        cut = argv.index("--")
        argv, script_args = argv[:cut], argv[cut + 1 :]
    if argv and argv[0] == "check":
        argv = ["check"] + _dash_names_as_paths(argv[1:], check)
    args = parser.parse_args(argv)
    args.script_args = script_args
    if args.triton_version:
        try:
            import triton
        except ImportError:
            print("triton is not installed in this Python: run `python -m pip install triton`", file=sys.stderr)
            return 2
        print(triton.__version__)
        from .trace_engine import unsupported_note

        note = unsupported_note(triton.__version__)
        if note:
            print(note, file=sys.stderr)
            return 1
        return 0
    if args.command == "check":
        try:
            return cmd_check(args)
        except KeyboardInterrupt:
            return 2
        except BrokenPipeError:  # `triton-lens check k.py | head`: the reader has seen enough
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # nor a second error when Python flushes at exit
            return 1
    if args.command == "lsp":
        return cmd_lsp(args)
    parser.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
