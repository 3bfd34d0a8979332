"""Library wrappers around @triton.jit under the tool (trace_engine/interpreter/jit_api.py): isinstance JITFunction,
the kernel's params / signature / src / cache_key, and JITFunction.run's compiled kernel launched later."""

from __future__ import annotations

from pathlib import Path

import pytest

from triton_lens.analysis import analyze
from triton_lens.trace_engine.process.runner import RunRequest, run

pytestmark = pytest.mark.engine

SCRIPTS = Path(__file__).parent / "scripts" / "jit_api"


def test_a_libentry_style_wrapper_runs_and_its_kept_kernel_launches_are_recorded():
    r = run(RunRequest(path=str(SCRIPTS / "libentry_style.py"), timeout_s=120))
    assert r.status == "ok", (r.error.message if r.error else r.status, r.stderr[-2000:])
    assert "launches done" in r.stdout  # every output equal to torch's
    # first call of a key through JITFunction.run, the second through the kernel it returned (the
    # autotuned one with the config's BLOCK), and the kept kernel launched with every argument
    assert [(L.kernel, L.grid[0]) for L in r.launches] == [
        ("add_one", 8),
        ("add_one", 8),
        ("double", 16),
        ("double", 16),
        ("add_one", 8),
    ]
    assert not [f for f in analyze(r).findings if f.severity in ("warning", "error")]
    # arguments the release's compiled kernel does not take: refused, saying which it takes
    assert "but the compiled kernel that JITFunction.run returned takes" in r.stdout
    assert "x_ptr, out_ptr, n" in r.stdout and "On a GPU this launch fails too" in r.stdout


def test_the_kept_kernel_of_a_wrapper_reports_its_out_of_bounds_reads():
    r = run(RunRequest(path=str(SCRIPTS / "kept_kernel_oob.py"), timeout_s=120))
    assert r.status == "ok", (r.error.message if r.error else r.status, r.stderr[-2000:])
    (f,) = [f for f in analyze(r).findings if f.kind == "oob"]
    assert f.arg == "x_ptr" and f.lanes == 24  # the second launch, through the kept kernel: n = 1000


def test_the_jit_api_is_the_interpreters_again_after_a_run():
    import triton
    import triton.runtime.interpreter as interp
    from triton.runtime.jit import JITFunction

    from triton_lens.trace_engine.recording.recorder import Recorder

    def body(x_ptr):
        pass

    with Recorder():
        kernel = interp.InterpretedFunction(body)
        assert isinstance(kernel, triton.runtime.JITFunction) and isinstance(kernel, triton.JITFunction)
        assert [p.name for p in kernel.params] == ["x_ptr"]
    assert triton.runtime.JITFunction is JITFunction and triton.JITFunction is JITFunction
    assert not isinstance(kernel, triton.runtime.JITFunction)
    assert "__getattr__" not in vars(interp.InterpretedFunction)


def test_flaggems_constructs_run_jit_type_cache_key_of_a_libdevice_alias_and_pointer_objects():
    # Each stopped the run before: `from triton.runtime.jit import JITFunction` was the plain class on
    # 3.5+ (AssertionError in pointwise_dynamic), the cache key's walk raised "Unsupported function
    # referenced: <function erf>", and the interpreter's copy of a pointer object asked it for new_empty.
    import triton

    from triton_lens.trace_engine.interpreter.compat import jit_module_may_name_the_shim

    r = run(RunRequest(path=str(SCRIPTS / "flaggems_style.py"), timeout_s=120))
    if not jit_module_may_name_the_shim():  # 3.2-3.4: JITFunction's methods name it; it stays the class
        assert r.status == "exception" and r.error is not None and r.error.type == "AssertionError"
        assert triton.__version__ < "3.5"
        return
    assert r.status == "ok", (r.error.message if r.error else r.status, r.stderr[-2000:])
    assert "flaggems style ok" in r.stdout
    (launch,) = r.launches
    a = analyze(r)
    assert not [f for f in a.findings if f.severity in ("warning", "error")]
    # the pointer objects' memory is recorded as the tensor views it is: 300 elements each
    assert {s.arg: s.unique for s in a.accesses} == {"x_ptr": 300, "out_ptr": 300}


def test_a_launch_through_torchs_wrap_triton_runs_and_is_recorded():
    # With interpreted kernels answering isinstance(JITFunction) (above), torch's wrap_triton takes its
    # operator path, which stopped under the run's host-write tracking: "There was no rule registered for
    # HigherOrderOperator triton_kernel_wrapper_mutation".
    r = run(RunRequest(path=str(SCRIPTS / "wrap_triton.py"), timeout_s=120))
    assert r.status == "ok", (r.error.message if r.error else r.status, r.stderr[-2000:])
    assert "wrap_triton ok" in r.stdout
    assert [L.kernel for L in r.launches] == ["add_kernel"]
    assert not [f for f in analyze(r).findings if f.severity in ("warning", "error")]
