"""The pytest plugin (entry point `pytest11: triton_lens`): `pytest --triton-lens` records every
Triton kernel launched during each test, in-process, with the engine's Recorder (the one behind the
Triton-Viz API: out-of-bounds lanes never touch memory), and turns the launches into findings.

    pytest --triton-lens                          # fail tests whose kernels have error findings
    pytest --triton-lens --triton-lens-fail=warning   # ... or warning findings (races, dead masks)
    pytest -p no:triton_lens                      # the plugin off

A test's findings go into its report (a "triton-lens" section, and `user_properties`, which
pytest-xdist carries from its workers), a test that passed but has findings at the chosen severity
fails with their messages, and a table at the end lists the tests with findings.

The interpreter is switched on before any conftest.py or test module is imported, so every
@triton.jit kernel of the session is an interpreted one. On a machine without a usable GPU (or with
--triton-lens-cpu) the CUDA stand-in is put in place at the same moment (trace_engine/standin/cuda_standin.py):
a suite written for CUDA runs as it is (`torch.cuda.is_available()` and `get_device_capability()` at
collection answer for the stood-in GPU, so `skipif(not torch.cuda.is_available())` tests run, and
`device="cuda"` tensors are CPU tensors); the summary says so. Both are undone at the session's end
(pytest_unconfigure): TRITON_INTERPRET, triton's knob and every hook are as they were before.
Without --triton-lens nothing is imported and nothing changes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

KEY = "triton_lens"  # user_properties: (KEY, {"launches": n, "findings": [finding dicts], "cuda_standin": ...})
_SEVERITIES = {"error": ("error",), "warning": ("error", "warning")}
_REC = pytest.StashKey[tuple[Any, list[Any], list[Any]]]()  # (Recorder, its launches, its trials) of the test
_STARTED = pytest.StashKey["_Started"]()
_USES = pytest.StashKey[int]()  # the stand-in's use count when the test's setup began


def pytest_addoption(parser):
    group = parser.getgroup("triton-lens", "Triton Lens: memory accesses of Triton kernels")
    group.addoption(
        "--triton-lens",
        action="store_true",
        default=False,
        dest="triton_lens",
        help="run Triton kernels under the interpreter, record every load/store of each test's "
        "launches, and fail tests with out-of-bounds accesses (see --triton-lens-fail)",
    )
    group.addoption(
        "--triton-lens-fail",
        choices=tuple(_SEVERITIES),
        default="error",
        dest="triton_lens_fail",
        help="the lowest finding severity that fails a test: error (out-of-bounds, default) or "
        "warning (also races and dead masks)",
    )
    group.addoption(
        "--triton-lens-cpu",
        action="store_true",
        default=False,
        dest="triton_lens_cpu",
        help="CPU tensors stand in for CUDA ones even where there is a GPU (as `triton-lens check --cpu`)",
    )
    group.addoption(
        "--triton-lens-gpu",
        default=None,
        dest="triton_lens_gpu",
        metavar="NAME",
        help="the GPU the CUDA stand-in reports (H100 by default; as `triton-lens check --gpu`)",
    )


class _Started:
    """What the session switched on, and how to switch it off again."""

    def __init__(self, options) -> None:
        self._undo: list[Callable[[], None]] = []
        saved = {k: os.environ.get(k) for k in ("TRITON_INTERPRET", "TRITON_LENS_WORKER")}
        self._undo.append(lambda: _restore_env(saved))
        os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported, for releases that read it then
        # What a script does to skip itself in Triton Lens's runs (NeedsRealGPU's advice) holds here too.
        os.environ["TRITON_LENS_WORKER"] = "1"
        from .trace_engine import (
            CudaStandIn,
            autotuners_time_on_the_interpreter,
            cuda_standin_wanted,
            enable_interpreter,
        )

        self._undo.append(enable_interpreter())
        # Kernel modules imported at collection make their autotuners before any test's recorder: without
        # this, triton 3.2/3.3 ask the GPU driver for a benchmarker there and collection fails.
        self._undo.append(autotuners_time_on_the_interpreter())
        self.standin = None
        reason = cuda_standin_wanted("cpu" if getattr(options, "triton_lens_cpu", False) else "auto")
        if reason is not None:
            standin = CudaStandIn(reason, getattr(options, "triton_lens_gpu", None))
            standin.__enter__()
            self.standin = standin
            self._undo.append(lambda: standin.__exit__(None, None, None))

    def stop(self) -> None:
        while self._undo:
            self._undo.pop()()


def _restore_env(saved: dict[str, str | None]) -> None:
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def _start(config, options) -> None:
    if config.stash.get(_STARTED, None) is None:
        config.stash[_STARTED] = _Started(options)
        config.add_cleanup(lambda: _stop(config))  # at the session's end (pytest_unconfigure's time)


def _stop(config) -> None:
    started = config.stash.get(_STARTED, None)
    if started is not None:
        del config.stash[_STARTED]
        started.stop()


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    if getattr(early_config.known_args_namespace, "triton_lens", False):
        _start(early_config, early_config.known_args_namespace)  # before the first conftest.py defines a kernel
    outcome = yield
    if outcome.excinfo is not None:
        _stop(early_config)  # a conftest that fails to import ends the session before any cleanup runs


def pytest_configure(config):
    if config.getoption("triton_lens"):
        _start(config, config.option)
        config.pluginmanager.register(_Session(config), "triton_lens_session")


def _fmt(f: dict) -> str:
    from .report.paths import rel

    col = f["col"] + 1 if f["col"] >= 0 else 1
    return f"{rel(f['file'])}:{f['line']}:{col}: {f['severity']}: {f['message']} [{f['kind']}]"


class _Session:
    """Recording per test, and the summary over all tests (on the xdist controller too: it sees the
    workers' reports, user_properties included)."""

    def __init__(self, config):
        self.config = config
        self.fail_on = _SEVERITIES[config.getoption("triton_lens_fail")]
        self.standin: dict | None = None  # the stand-in's report, from the last test that used it
        self.standin_tests = 0  # tests that used it
        self.rows: list[tuple[str, int, list[dict]]] = []  # (nodeid, launches, findings)
        self.launches = 0
        self.tests = 0

    # -- recording ---------------------------------------------------------------------------
    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_setup(self, item):
        from .trace_engine import Recorder

        standin = self._standin()
        if standin is not None:
            item.stash[_USES] = standin.uses
        launches: list = []
        trials: list = []  # the launches of each config an autotuner tried, for their findings
        rec = Recorder(on_launch=launches.append, value_limit=0, on_trial=trials.append)  # values: the viewer's
        rec.__enter__()
        item.stash[_REC] = (rec, launches, trials)
        yield

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if call.when == "setup" and report.passed:
            return  # keep recording through the test's call
        held = item.stash.get(_REC, None)
        if held is None:
            return
        rec, launches, trials = held
        rec.__exit__(None, None, None)
        del item.stash[_REC]
        findings = self._findings(item, launches, trials)
        value: dict[str, Any] = {"launches": len(launches), "findings": findings}
        standin = self._standin()
        if standin is not None and standin.uses > item.stash.get(_USES, standin.uses):
            value["cuda_standin"] = standin.report()  # this test asked CUDA for something: it ran on the stand-in
        report.user_properties.append((KEY, value))
        if not findings:
            return
        failing = [f for f in findings if f["severity"] in self.fail_on]
        if failing and report.passed:
            report.outcome = "failed"
            report.longrepr = (
                f"Triton Lens: {len(failing)} finding{'s' if len(failing) != 1 else ''} at "
                f"{'/'.join(self.fail_on)} severity in the kernels this test launched:\n"
                + "\n".join(_fmt(f) for f in failing)
            )
            findings = [f for f in findings if f not in failing]  # the rest, below the failure
        if findings:
            report.sections.append(("triton-lens", "\n".join(_fmt(f) for f in findings)))

    def _standin(self):
        started = self.config.stash.get(_STARTED, None)
        return started.standin if started is not None else None

    @staticmethod
    def _findings(item, launches, trials=()) -> list[dict]:
        if not launches:
            return []
        from .analysis import analyze
        from .model import OK, RunResult

        # trials: the launches of each config an autotuner tried, for the findings only some configs have
        result = RunResult(file=str(item.path), status=OK, launches=launches, autotune_trials=list(trials))
        # "no-launch" and script failures are the CLI's; a test's own exception is pytest's.
        return [f.to_json() for f in analyze(result).findings if f.kind not in ("no-launch",)]

    # -- summary -------------------------------------------------------------------------------
    def pytest_runtest_logreport(self, report):
        for key, value in report.user_properties:
            if key == KEY:
                self.tests += 1
                self.launches += value["launches"]
                if value.get("cuda_standin"):
                    self.standin = value["cuda_standin"]
                    self.standin_tests += 1
                if value["findings"]:
                    self.rows.append((report.nodeid, value["launches"], value["findings"]))

    def pytest_terminal_summary(self, terminalreporter):
        tr = terminalreporter
        tr.section("Triton Lens")
        tr.write_line(
            f"{self.tests} test{'s' if self.tests != 1 else ''} recorded, {self.launches} kernel "
            f"launch{'es' if self.launches != 1 else ''}, {len(self.rows)} with findings "
            f"(failing at: {'/'.join(self.fail_on)})"
        )
        if self.standin is not None:
            from .analysis.standin import standin_notice
            from .model import CudaStandIn

            tr.write_line(standin_notice(CudaStandIn.from_json(self.standin)))
            tr.write_line(
                f"  {self.standin_tests} test{'s' if self.standin_tests != 1 else ''} ran on it; "
                f"torch.cuda.is_available() answered True for the stood-in GPU, so tests skipped without "
                f"CUDA ran too."
            )
        if not self.rows:
            return
        width = max(len(n) for n, _, _ in self.rows)
        tr.write_line(f"{'test':<{width}}  launches  errors  warnings  first finding")
        for nodeid, n, fs in self.rows:
            err = sum(f["severity"] == "error" for f in fs)
            warn = sum(f["severity"] == "warning" for f in fs)
            first = fs[0]
            where = f"{os.path.basename(first['file'])}:{first['line']} {first['kind']} {first['arg']}".rstrip()
            tr.write_line(f"{nodeid:<{width}}  {n:>8}  {err:>6}  {warn:>8}  {where}")
