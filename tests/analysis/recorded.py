"""Recorded results for the analysis tests, without a worker process: a script run here, under the engine's
in-process recorder (its hooks installed for the run and removed after, as the Triton-Viz API runs a traced
launch), its launches handed over as a RunResult. The analysis is tested on what the recorder records; the
worker, its containment and its stream are tests/engine's."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

from triton_lens.model import OK, RunResult
from triton_lens.trace_engine import Recorder, enable_interpreter, jit_calls_interpreted


def recorded(path: Path) -> RunResult:
    """Run `path` as __main__ in this process and return its launches (a script that raises fails the test)."""
    argv = sys.argv
    sys.argv = [str(path)]
    restore = enable_interpreter()  # the script's @triton.jit kernels are made interpreted, as in a worker
    try:
        with jit_calls_interpreted(), Recorder() as rec:  # (a @jit helper a kernel calls, interpreted too)
            runpy.run_path(str(path), run_name="__main__")
    finally:
        restore()
        sys.argv = argv
    return RunResult(file=str(path), status=OK, launches=list(rec.launches))
