"""The command lines' option values (`triton-lens check`, `triton-lens view`), checked when they are
parsed: a value that is wrong is a tool error (exit 2, one line that says what to pass instead), not a
Python traceback later (exit 1, which CI reads as "findings") or a limit silently switched off
(`--timeout nan`). Standard library only: importable from every layer."""

from __future__ import annotations

import argparse
import math
import os


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, `PROG: error: MESSAGE`, exit code 2."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {message}\n")


def seconds(option: str):
    """A time limit: a finite number of seconds greater than 0 (nan, inf, 0 and negatives would
    switch the limit off or stop every run at once)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value > 0):
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a time limit: pass a finite number of seconds greater than 0, e.g. {option} 60"
            )
        return value

    return parse


def count(option: str, what: str, example: int, zero: str | None = None):
    """A positive whole number; with `zero`, 0 too (it means `zero`, e.g. "the default")."""
    least = 0 if zero is not None else 1

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = least - 1
        if value < least:
            also = f" (or 0: {zero})" if zero is not None else ""
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a number of {what}: pass a whole number of at least 1{also}, e.g. {option} {example}"
            )
        return value

    return parse


def output_file(text: str) -> str:
    """A file the report can be written to: its folder exists, and it is not a folder itself."""
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(
            f"{text} is a folder: pass a file to write the report to, e.g. -o {os.path.join(text, 'report.txt')}"
        )
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(
            f"the folder {folder} does not exist: create it first (mkdir -p {folder}) or pass a file in an existing folder"
        )
    return text


def add_run_limits(p: argparse.ArgumentParser) -> None:
    """The options of a run that `check` and `view` share: its time and memory limits, its Python, and
    how many processes a launch's programs are split over. One owner, so the two commands agree."""
    p.add_argument(
        "--timeout", type=seconds("--timeout"), default=60.0, metavar="S", help="time limit in seconds (default 60)"
    )
    p.add_argument(
        "--memory",
        type=count("--memory", "MB", 4096),
        default=8192,
        metavar="MB",
        help="memory limit in MB (default 8192)",
    )
    p.add_argument("--python", default=None, help="Python interpreter to run the script with (default: this one)")
    p.add_argument(
        "--workers",
        type=count("--workers", "processes", 4, zero="the default"),
        default=0,
        metavar="N",
        help="processes a launch's programs are split over (default 0: the machine's cores, at most 16, "
        "less one; 1: one process)",
    )
