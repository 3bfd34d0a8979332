"""The Triton-Viz API surface: `import triton_lens as triton_viz` and the decorator on every kind of kernel."""

import inspect
import os
import subprocess
import sys
import textwrap

import pytest
import torch
import triton
import viz_kernels as kernels
from viz_kernels import LINES

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_triton_viz_names_are_there_and_the_engine_package_still_imports():
    import triton_lens as triton_viz
    import triton_lens.viz as viz_package
    from triton_lens.viz_names import TRITON_VIZ_NAMES

    assert {"trace", "launch", "stop", "clear", "launches", "Client", "Tracer", "Sanitizer"} <= set(TRITON_VIZ_NAMES)
    for name in TRITON_VIZ_NAMES:
        # the package root forwards every name to the same object as triton_lens.viz (trace is its own function)
        assert name in dir(triton_viz) and name in viz_package.__all__, name
        if name != "trace":
            assert getattr(triton_viz, name) is getattr(viz_package, name), name
    with pytest.raises(AttributeError, match="no attribute 'TracedKernel'"):
        triton_viz.TracedKernel  # noqa: B018  (only triton_lens.viz exports it)
    assert callable(triton_viz.trace) and callable(triton_viz.launch)
    # The engine package has its own name: importing it leaves `trace` the Triton-Viz function.
    import triton_lens.trace_engine.recording.recorder  # noqa: F401

    assert inspect.isfunction(triton_viz.trace) and triton_viz.trace.__module__ == "triton_lens"
    assert isinstance(triton_viz.launches, list)


def test_light_import():
    # `import triton_lens` (the CLI, the language server) must not pull in triton, torch or flask
    code = "import sys, triton_lens; print(sorted(m for m in ('triton', 'torch', 'flask') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("interpret", ["unset", "1"])
def test_helpers_stdlib_jit_and_autotune_with_or_without_TRITON_INTERPRET(tmp_path, interpret):
    # A fresh process. TRITON_INTERPRET unset: @triton.jit builds real JITFunctions, which the decorator
    # switches to the interpreter, including @jit helpers, triton's own tl.cdiv, and an autotuner (no GPU).
    # TRITON_INTERPRET=1: they are InterpretedFunctions already.
    script = tmp_path / "s.py"
    script.write_text(
        textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {os.path.dirname(__file__)!r})
        import torch, triton
        import triton_lens as triton_viz
        import viz_kernels as kernels
        from triton.runtime.jit import JITFunction
        assert isinstance(kernels.axpy_kernel, JITFunction) == {interpret == "unset"!r}, type(kernels.axpy_kernel)
        axpy = triton_viz.trace("tracer")(kernels.axpy_kernel)
        x, y, out = torch.rand(500), torch.rand(500), torch.empty(500)
        axpy[(4,)](x, y, out, 2.0, 500, BLOCK=128)
        assert torch.allclose(out, 2.0 * x + y)
        neg = triton_viz.trace("tracer")(kernels.neg_kernel)
        x, out = torch.rand(1000), torch.empty(1000)
        neg[lambda meta: (triton.cdiv(1000, meta["BLOCK"]),)](x, out, 1000)
        assert torch.equal(out, -x)
        L = triton_viz.launches
        print(len(L), L[0].kernel, sorted({{s.line for s in L[0].sites}}), L[1].kernel, L[1].grid[0] in (8, 16))
    """)
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    if interpret == "1":
        env["TRITON_INTERPRET"] = "1"
    env["PYTHONPATH"] = os.path.join(REPO, "server")
    p = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    # 2 launches: the autotuner's timing launches are not recorded
    assert p.stdout.split() == [
        "2",
        "axpy_kernel",
        "[" + f"{LINES['helper.load']},",
        f"{LINES['axpy.store']}]",
        "neg_kernel",
        "True",
    ]


def test_bare_decorator_and_launch_via_run(viz):
    k = viz.trace(kernels.add_kernel)  # @trace without parentheses: the tracer
    x = torch.arange(64.0)
    z = torch.zeros(64)
    k.run(x, x, z, 64, 64, grid=(1,), warmup=False)
    assert torch.equal(z, 2 * x) and len(viz.launches) == 1
    assert k.__name__ == "add_kernel"
    # attributes of the decorated kernel stay reachable
    assert k.arg_names == ["x_ptr", "y_ptr", "z_ptr", "N", "B"]


def test_sanitizer_and_tracer_stacked_on_an_autotuned_kernel(viz):
    import io

    buf = io.StringIO()
    k = viz.trace(viz.Sanitizer(out=buf))(viz.trace("tracer")(kernels.neg_kernel))
    x = torch.rand(1000)
    out = torch.empty(1000)
    k[lambda meta: (triton.cdiv(1000, meta["BLOCK"]),)](x, out, 1000)
    assert torch.equal(out, -x) and buf.getvalue() == ""
    assert len(viz.launches) == 1 and viz.launches[0].kernel == "neg_kernel"


def test_triton_viz_spellings_clients_keyword_tuple_abort_on_error_and_config(viz):
    import io

    buf = io.StringIO()
    # Triton-Viz: trace(clients=...), Sanitizer(abort_on_error=...), a tuple of clients
    k = viz.trace(clients=(viz.Sanitizer(abort_on_error=False, out=buf), "tracer"))(kernels.oob_add_kernel)
    x, y, out = torch.rand(1000), torch.rand(1000), torch.zeros(1000)
    k[(8,)](x, y, out, 1000, BLOCK=128)  # reports, does not raise
    assert "1 problem" in buf.getvalue() and torch.equal(out, x + y)
    assert [c.name for c in k.clients] == ["sanitizer", "tracer"] and len(viz.launches) == 1
    # config.sanitizer_backend = "off": the kernel comes back undecorated, as in Triton-Viz
    viz.config.sanitizer_backend = "off"
    try:
        assert viz.trace("sanitizer")(kernels.add_kernel) is kernels.add_kernel
    finally:
        viz.config.sanitizer_backend = "default"


def test_triton_viz_clients_module_spelling():
    from triton_lens import clients
    from triton_lens.viz import clients as real

    assert clients.Sanitizer is real.Sanitizer and clients.Client is real.Client and clients.Profiler is real.Profiler


def test_workers_splits_a_launch_and_the_tracer_gets_the_one_process_trace(viz, monkeypatch, tmp_path):
    import json

    import numpy as np

    report = tmp_path / "report.jsonl"
    for k, v in {"MIN_PROGRAMS": "2", "MIN_SECONDS": "0", "PROBE_SECONDS": "0"}.items():
        monkeypatch.setenv(f"TRITON_LENS_PARALLEL_{k}", v)
    monkeypatch.setenv("TRITON_LENS_PARALLEL_REPORT", str(report))
    x, y = torch.rand(1000), torch.rand(1000)
    outs = []
    for w in (1, 2):
        out = torch.zeros(1000)
        viz.trace("tracer", workers=w)(kernels.oob_add_kernel)[(8,)](x, y, out, 1000, BLOCK=128)
        outs.append(out)
    assert torch.equal(outs[0], x + y) and torch.equal(outs[1], outs[0])
    one, two = viz.launches
    assert one.sites == two.sites
    for c in ("ex_site", "ex_program", "ex_lanes", "ex_active", "ex_oob"):
        assert np.array_equal(getattr(one, c), getattr(two, c)), c
    for s in ("touched", "masked", "oob"):
        assert all(
            np.array_equal(a, b) for a, b in zip(getattr(one, s).arrays().values(), getattr(two, s).arrays().values())
        )
    splits = [json.loads(line) for line in report.read_text().splitlines()]
    assert len(splits) == 1 and splits[0]["merged"] and splits[0]["children"] == ["ok", "ok"]
