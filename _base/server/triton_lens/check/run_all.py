"""Run the files of a `triton-lens check` in parallel, each in its own worker process (the engine's
runner), and analyse each run. Threads are enough: each one waits on its worker."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..analysis import Analysis, analyze
from ..model import ERROR
from ..model.remedies import COMMAND_LINE
from ..trace_engine import RunRequest, run
from .targets import Target

BAD = ("error", "warning")  # severities that make `check` exit 1


@dataclass
class Options:
    timeout_s: float = 60.0
    memory_mb: int = 8192
    python: str = sys.executable
    script_args: tuple[str, ...] = ()
    jobs: int = 0  # 0: one per core
    device: str = "auto"  # "cpu": stand in CPU tensors for CUDA ones even with a GPU
    gpu: str = "H100"  # the GPU the CPU stand-in reports
    workers: int = 1  # processes each file's launches split their programs over


@dataclass
class Checked:
    target: Target
    analysis: Analysis

    @property
    def result(self):
        return self.analysis.result

    @property
    def tool_error(self) -> bool:
        return self.result.status == ERROR

    @property
    def bad(self) -> bool:
        return any(f.severity in BAD for f in self.analysis.findings)


def request_for(t: Target, opts: Options, env: dict | None = None) -> RunRequest:
    """The run a target's plan gives it: its own command (run comment or runCommands), else the file
    as `__main__` with the arguments after `--`."""
    command = list(t.plan.command) + list(opts.script_args) if t.plan.command else None
    return RunRequest(
        path=t.path,
        # A notebook runs as the script of its code cells (the file itself is JSON).
        source=t.notebook.script if t.notebook is not None else None,
        command=command,
        cwd=t.plan.cwd,
        timeout_s=opts.timeout_s,
        memory_mb=opts.memory_mb,
        python=opts.python,
        argv=[] if command else list(opts.script_args),
        env=env,
        device=opts.device,
        gpu=opts.gpu,
        workers=opts.workers,
    )


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def check_all(
    targets: list[Target],
    opts: Options,
    on_output: Callable[[Target, str, bytes], None] | None = None,
    on_done: Callable[[Checked], None] | None = None,
    on_progress: Callable | None = None,
) -> list[Checked]:
    """Every target's Checked, in the order given. `on_output(target, stream, chunk)` streams the
    scripts' own output; `on_done` sees each file as it finishes (from the worker threads, serialised);
    `on_progress` the runner's progress of each launch."""
    lock = threading.Lock()

    def one(t: Target) -> Checked:
        out = None if on_output is None else (lambda stream, chunk: on_output(t, stream, chunk))
        c = Checked(t, analyze(run(request_for(t, opts), on_progress=on_progress, on_output=out), COMMAND_LINE))
        if on_done is not None:
            with lock:
                on_done(c)
        return c

    jobs = opts.jobs or default_jobs()
    if jobs == 1 or len(targets) <= 1:
        return [one(t) for t in targets]
    with ThreadPoolExecutor(max_workers=min(jobs, len(targets)), thread_name_prefix="triton-lens-check") as pool:
        return list(pool.map(one, targets))


def exit_code(checked: list[Checked], problems: list[str]) -> int:
    """0 clean, 1 findings of warning or error severity in any file, 2 a tool error (it wins)."""
    if problems or any(c.tool_error for c in checked):
        return 2
    return 1 if any(c.bad for c in checked) else 0
