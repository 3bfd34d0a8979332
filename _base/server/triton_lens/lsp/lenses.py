"""Code lenses above each kernel: visualize, debug, and a summary of what its last run did."""

from __future__ import annotations

import os
from dataclasses import dataclass

from lsprotocol import types as lsp

from ..analysis.autotune import kept_config
from ..analysis.cost import LaunchCost, dominant_launch
from ..analysis.text import plural
from ..model import CRASHED, ERROR, EXCEPTION, NO_LAUNCH, TIMEOUT, RunResult
from ..source.kernels import KernelOutline
from .view import PartialInfo

VISUALIZE = "tritonLens.visualize"
DEBUG = "tritonLens.debugKernel"
SHOW_OUTPUT = "tritonLens.showOutput"
STANDIN = "CPU stand-in for CUDA"  # the run's CUDA tensors were CPU tensors: nothing ran on a GPU


@dataclass
class KernelSummary:
    launches: int
    programs: int
    seconds: float
    autotuned: str | None = None  # the config its hints show (analysis/autotune.kept_config)


def kernel_summaries(result: RunResult) -> dict[str, KernelSummary]:
    """Per kernel name defined in the analysed file: launches, programs and time of the run."""
    out: dict[str, KernelSummary] = {}
    target = os.path.abspath(result.file)
    for L in result.launches:
        if L.def_file and os.path.abspath(L.def_file) != target:
            continue
        s = out.setdefault(L.kernel, KernelSummary(0, 0, 0.0))
        s.launches += 1
        s.programs += L.n_programs
        s.seconds += L.seconds
        s.autotuned = s.autotuned or kept_config(L)
    return out


def why_not_launched(result: RunResult | None) -> str:
    if result is None:
        return "not run yet"
    e = result.error
    if result.status == NO_LAUNCH or (result.status == "ok" and not result.launches):
        return "not launched — add `# triton-lens: run <command>` or launch it under __main__"
    if result.status == EXCEPTION and e is not None:
        return f"not launched — the script raised {e.type} first"
    if result.status == TIMEOUT:
        return "not launched before the time limit"
    if result.status == CRASHED:
        return "not launched — the script crashed first"
    if result.status == ERROR and e is not None:
        return f"not run — {e.message}"
    return "not launched by this run"


def summary_title(
    k: KernelOutline,
    summaries: dict[str, KernelSummary],
    result: RunResult | None,
    *,
    running: bool,
    stale: bool,
    not_run: str = "",
    partial: PartialInfo | None = None,
) -> str:
    if not_run:
        return f"Triton Lens: {not_run}"
    if partial is not None and running:  # a view of a launch's sample (lsp/view.PartialInfo), its run going on
        if partial.kernel == k.name:
            return f"⟳ partial results: {partial.text} of launch {partial.launch + 1} · the rest is running…"
        return "⟳ running… · partial results so far"
    if partial is not None:  # the sample of a run an edit stopped: never shown as if it were complete
        return f"partial results: {partial.text} of launch {partial.launch + 1} · the run was stopped by an edit"
    s = summaries.get(k.name)
    hung = result.in_launch if result is not None and result.status == TIMEOUT else None
    if hung is not None and hung.get("kernel") == k.name:
        text = (
            f"hung inside launch {hung['launch'] + 1} — stopped at the time limit with {hung['done']} of "
            f"{hung['total']} programs done"
        )
        if s is not None:
            text = f"{plural(s.launches, 'launch')} finished · " + text
    elif s is None:
        text = why_not_launched(result)
    else:
        text = (
            f"{plural(s.launches, 'launch')} · {s.programs} programs · {s.seconds * 1000:.0f} ms in the kernel"
            f" · run {result.seconds:.1f} s"
            if result is not None
            else ""
        )
        if result is not None and result.status not in ("ok",):
            text += f" · script {result.status}"
        if s.autotuned is not None:
            text += f" · autotuned: hints show {s.autotuned}"
        cost = dominant_launch(result) if result is not None else None
        if cost is not None and cost.kernel == k.name:  # where a smaller size would save the time (the log says)
            text += f" · launch {cost.index + 1}: {cost.seconds:.1f} of {cost.run_seconds:.1f} s"
        if result is not None and result.cuda_standin is not None:
            text += f" · {STANDIN}"
    if stale:
        text += " (earlier version)"
    if running:
        text = "⟳ running… · " + text
    return text


def kernel_lenses(
    uri: str,
    kernels: list[KernelOutline],
    result: RunResult | None,
    *,
    running: bool,
    stale: bool,
    not_run: str = "",
    partial: PartialInfo | None = None,
) -> list[lsp.CodeLens]:
    summaries = kernel_summaries(result) if result is not None else {}
    out = []
    for k in kernels:
        at = lsp.Range(lsp.Position(k.first_line - 1, 0), lsp.Position(k.first_line - 1, 0))  # above the decorators
        out.append(
            lsp.CodeLens(
                range=at,
                command=lsp.Command(
                    title="▶ Visualize this kernel", command=VISUALIZE, arguments=[uri, k.name, k.line - 1]
                ),
            )
        )
        out.append(
            lsp.CodeLens(
                range=at, command=lsp.Command(title="Debug this kernel", command=DEBUG, arguments=[uri, k.name])
            )
        )
        out.append(
            lsp.CodeLens(
                range=at,
                command=lsp.Command(
                    title=summary_title(
                        k, summaries, result, running=running, stale=stale, not_run=not_run, partial=partial
                    ),
                    command=SHOW_OUTPUT,
                ),
            )
        )
    return out


def cost_advice(cost: LaunchCost, workers: int, cores: int) -> str:
    """What the lens's click shows (the log) when one launch took most of a slow run: which one, and what
    makes each edit's complete results come sooner."""
    text = (
        f"launch {cost.index + 1} of {cost.kernel} ({plural(cost.programs, 'program')}) took "
        f"{cost.seconds:.1f} s of the run's {cost.run_seconds:.1f} s under the interpreter, which runs every "
        "program. To get each edit's complete results sooner, run it at a smaller size: the sizes under "
        '`if __name__ == "__main__":`, or a `# triton-lens: run <command>` comment with smaller arguments.'
    )
    if workers < 2 <= cores:
        text += (
            f" Or split its programs over the machine's cores: tritonLens.workers is {workers} ({cores} cores here)."
        )
    return text + " The first hints come from a sample of its programs either way (tritonLens.progressive)."


def cost_log(result: RunResult, workers_setting: int) -> str:
    """The log's line on a slow run's cost ("" when no launch dominates it), for the run's log entry."""
    cost = dominant_launch(result)
    if cost is None:
        return ""
    from ..trace_engine import default_workers

    cores = os.cpu_count() or 1
    return "\n" + cost_advice(cost, workers_setting if workers_setting > 0 else default_workers(), cores)
