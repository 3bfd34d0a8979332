"""Which launch a slow run's time went to (analysis/cost.py), and what the editor says of it
(lsp/lenses.py: the kernel's code lens names the launch, the log its click opens says what helps)."""

from __future__ import annotations

from types import SimpleNamespace

from triton_lens.analysis.cost import dominant_launch
from triton_lens.lsp.lenses import cost_advice, summary_title
from triton_lens.model import OK, RunResult


def _run(seconds: float, *launches: tuple[str, int, float]) -> RunResult:
    ls = [SimpleNamespace(kernel=k, n_programs=n, seconds=s) for k, n, s in launches]
    return RunResult(file="/w/k.py", status=OK, launches=ls, seconds=seconds)  # type: ignore[arg-type]


def test_the_launch_that_took_most_of_a_slow_run_dominates_it():
    c = dominant_launch(_run(3.7, ("k", 64, 0.2), ("layer_norm", 1151, 3.1)))
    assert c is not None and (c.index, c.kernel, c.programs) == (1, "layer_norm", 1151)
    assert round(c.share, 2) == 0.84


def test_quick_runs_and_spread_out_time_have_no_dominant_launch():
    assert dominant_launch(_run(1.2, ("k", 1151, 1.1))) is None  # quick enough not to matter
    assert dominant_launch(_run(4.0, ("a", 10, 1.5), ("b", 10, 1.5))) is None  # no launch has half
    assert dominant_launch(_run(4.0)) is None


def test_the_lens_names_the_launch_and_the_log_says_what_helps():
    r = _run(3.7, ("k", 64, 0.2), ("layer_norm", 1151, 3.1))
    summaries = {"layer_norm": SimpleNamespace(launches=1, programs=1151, seconds=3.1, autotuned=None)}
    k = SimpleNamespace(name="layer_norm")
    title = summary_title(k, summaries, r, running=False, stale=False)  # type: ignore[arg-type]
    assert title.endswith("· launch 2: 3.1 of 3.7 s"), title
    other = summary_title(SimpleNamespace(name="k"), {"k": summaries["layer_norm"]}, r, running=False, stale=False)  # type: ignore[arg-type]
    assert "launch 2" not in other  # only the kernel whose launch it is
    cost = dominant_launch(r)
    assert cost is not None
    advice = cost_advice(cost, workers=1, cores=2)
    assert advice.startswith("launch 2 of layer_norm (1151 programs) took 3.1 s of the run's 3.7 s")
    assert "smaller size" in advice and "# triton-lens: run" in advice and "tritonLens.workers is 1" in advice
    assert "tritonLens.workers" not in cost_advice(cost, workers=4, cores=8)  # already split
