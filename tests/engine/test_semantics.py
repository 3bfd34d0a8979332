"""The compiler's semantics where the bare interpreter differs (trace_engine/interpreter/semantics.py, libdevice.py, fp8.py):
fp8 rounding and libdevice values against torch, and kernel scripts run by the engine."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from triton_lens.analysis import analyze
from triton_lens.analysis.access_map import tensor_values
from triton_lens.trace_engine.interpreter import fp8, libdevice
from triton_lens.trace_engine.process.runner import RunRequest, run

SCRIPTS = Path(__file__).parent / "scripts" / "semantics"
HAS_FP8 = hasattr(torch, "float8_e4m3fn")


def _values(n=100_000, lo=-24, hi=17, seed=0):
    g = torch.Generator().manual_seed(seed)
    mag = torch.exp2(torch.empty(n).uniform_(lo, hi, generator=g))
    special = torch.tensor(
        [
            0.0,
            -0.0,
            124.3,
            7.9,
            1.0625,
            1.1875,
            240.0,
            232.0,
            448.0,
            464.0,
            57344.0,
            2.0**-9,
            2.0**-10,
            3 * 2.0**-11,
            2.0**-16,
            2.0**-17,
            3 * 2.0**-18,
        ]
    )
    return torch.cat([mag * torch.sign(torch.randn(n, generator=g)), special, -special])


@pytest.mark.parametrize("fmt,limit,torch_name", [("e4m3", 448.0, "float8_e4m3fn"), ("e5m2", 57344.0, "float8_e5m2")])
def test_fp8_encoding_rounds_like_torch(fmt, limit, torch_name):
    x = _values()
    got = fp8.encode(x.numpy(), fmt)
    ref = x.to(getattr(torch, torch_name)).view(torch.uint8).numpy()
    finite = np.abs(x.numpy()) <= limit  # past the largest value torch gives NaN/inf, the GPU saturates
    assert np.array_equal(got[finite], ref[finite]), x.numpy()[finite][got[finite] != ref[finite]][:8]


def test_fp8_saturates_and_keeps_nan():
    got = fp8.encode(np.array([1000.0, -1e30, np.inf, np.nan], np.float32), "e4m3")
    assert list(got[:3]) == [0x7E, 0xFE, 0x7E]  # +-448, as cvt.rn.satfinite
    assert got[3] & 0x7F == 0x7F


@pytest.mark.parametrize("fmt,torch_name", [("e4m3", "float8_e4m3fn"), ("e5m2", "float8_e5m2")])
def test_fp8_decoding_is_torch_s_for_every_bit_pattern(fmt, torch_name):
    want = torch.arange(256, dtype=torch.uint8).view(getattr(torch, torch_name)).float().numpy()
    got = fp8.decode_table(fmt)
    assert got.dtype == np.float32 and np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert np.array_equal(got.view(np.uint32)[ok], want.view(np.uint32)[ok])  # bit for bit: -0.0, inf too
    finite = np.isfinite(want)  # (the encoder saturates e5m2's infinities, as the GPU's cvt.satfinite)
    assert fp8.encode(got[finite], fmt).tolist() == np.arange(256)[finite].tolist()  # the round trip


def _grid(lo, hi, n=4001):
    return torch.linspace(lo, hi, n, dtype=torch.float32)


# symbol, torch reference, inputs (fp32)
UNARY = [
    ("__nv_tanhf", torch.tanh, _grid(-10, 10)),
    ("__nv_erff", torch.erf, _grid(-4, 4)),
    ("__nv_erfcf", torch.erfc, _grid(-4, 9)),
    ("__nv_erfinvf", torch.erfinv, _grid(-0.999, 0.999)),
    ("__nv_rsqrtf", torch.rsqrt, _grid(0.01, 100)),
    ("__nv_log1pf", torch.log1p, _grid(-0.99, 100)),
    ("__nv_expm1f", torch.expm1, _grid(-20, 20)),
    ("__nv_asinf", torch.asin, _grid(-1, 1)),
    ("__nv_acosf", torch.acos, _grid(-1, 1)),
    ("__nv_atanf", torch.atan, _grid(-50, 50)),
    ("__nv_lgammaf", torch.lgamma, _grid(0.1, 30)),
    ("__nv_exp2f", torch.exp2, _grid(-30, 30)),
    ("__nv_cbrtf", lambda t: torch.sign(t) * t.abs().pow(1 / 3), _grid(-50, 50)),
    ("__nv_roundf", lambda t: torch.sign(t) * torch.floor(t.abs() + 0.5), _grid(-5, 5, 41)),
    ("__nv_rintf", torch.round, _grid(-5, 5, 41)),  # torch.round is half-to-even
    ("__nv_truncf", torch.trunc, _grid(-5, 5, 41)),
    ("__ocml_tanh_f32", torch.tanh, _grid(-10, 10)),
]


@pytest.mark.parametrize("symbol,ref,x", UNARY, ids=[u[0] for u in UNARY])
def test_libdevice_unary_matches_torch(symbol, ref, x):
    got = libdevice.evaluate(symbol, [x.numpy()], np.dtype(np.float32))
    assert got.dtype == np.float32
    torch.testing.assert_close(torch.from_numpy(got), ref(x), rtol=2e-6, atol=2e-6)


def test_libdevice_binary_and_integer_functions():
    a, b = _grid(0.5, 4), _grid(-2, 2)
    torch.testing.assert_close(
        torch.from_numpy(libdevice.evaluate("__nv_powf", [a.numpy(), b.numpy()], np.float32)), torch.pow(a, b)
    )
    torch.testing.assert_close(
        torch.from_numpy(libdevice.evaluate("__nv_atan2f", [b.numpy(), a.numpy()], np.float32)), torch.atan2(b, a)
    )
    i = np.array([0, 1, 2, 255, -1, 2**31 - 1, -(2**31)], np.int32)
    assert list(libdevice.evaluate("__nv_clz", [i], np.int32)) == [32, 31, 30, 24, 0, 1, 0]
    assert list(libdevice.evaluate("__nv_popc", [i], np.int32)) == [0, 1, 1, 8, 32, 31, 1]
    assert list(libdevice.evaluate("__nv_ffs", [i], np.int32)) == [0, 1, 2, 1, 1, 1, 32]
    u = np.array([0xFFFFFFFF, 3, 0x80000000], np.uint32)
    assert list(libdevice.evaluate("__nv_umulhi", [u, u], np.uint32)) == [(int(v) * int(v)) >> 32 for v in u]
    s = np.array([-7, 7, -(2**31)], np.int32)
    assert list(libdevice.evaluate("__nv_mulhi", [s, s + 3], np.int32)) == [(int(x) * (int(x) + 3)) >> 32 for x in s]
    big = np.array([2**63 - 1, -3], np.int64)
    assert list(libdevice.evaluate("__nv_mul64hi", [big, big], np.int64)) == [(int(x) * int(x)) >> 64 for x in big]
    f = np.array([2.7, -2.7, 1e20, np.nan], np.float32)
    assert list(libdevice.evaluate("__nv_float2int_rz", [f], np.int32)) == [2, -2, 2**31 - 1, 0]
    assert list(libdevice.evaluate("__nv_float2int_rn", [f], np.int32)) == [3, -3, 2**31 - 1, 0]
    assert list(libdevice.evaluate("__nv_isnanf", [f], np.int32)) == [0, 0, 0, 1]


def test_unknown_libdevice_symbol_names_the_function():
    with pytest.raises(NotImplementedError, match=r"libdevice\.j0 \(__nv_j0f, on float32\)"):
        libdevice.evaluate("__nv_j0f", [np.zeros(3, np.float32)], np.float32, function="j0")


def _clean_run(name: str):
    r = run(RunRequest(path=str(SCRIPTS / name), timeout_s=120))
    assert r.status == "ok", (r.error.message if r.error else r.status, r.stderr[-2000:])
    a = analyze(r)
    bad = [(f.kind, f.line, f.message) for f in a.findings if f.severity in ("warning", "error")]
    assert not bad, bad
    return a


def test_bool_ops_follow_the_code_generator():
    _clean_run("bool_ops_constexpr.py")


def test_scalar_arguments_are_typed_like_the_jit():
    _clean_run("scalar_types.py")


def test_unimplemented_libdevice_function_stops_at_the_call():
    r = run(RunRequest(path=str(SCRIPTS / "libdevice_unimplemented.py"), timeout_s=120))
    assert r.status == "exception"
    assert "libdevice.j0" in r.error.message and "not implemented" in r.error.message
    assert r.error.line == 13  # the kernel line that calls it


def test_hooks_leave_the_interpreter_as_it_was():
    import triton.runtime.interpreter as interp
    from triton.language.extra import libdevice as generic

    from triton_lens.trace_engine.recording.recorder import Recorder

    before = (
        interp.FunctionRewriter.ast_transformer,
        interp.InterpretedFunction.rewritten_fn,
        generic.tanh,
        interp._implicit_cvt,
        interp.GridExecutor.__init__,
        interp.InterpreterBuilder.create_fp_to_fp,
    )
    with Recorder():
        assert interp.FunctionRewriter.ast_transformer is not before[0]
        assert generic.tanh is not before[2]
    after = (
        interp.FunctionRewriter.ast_transformer,
        interp.InterpretedFunction.rewritten_fn,
        generic.tanh,
        interp._implicit_cvt,
        interp.GridExecutor.__init__,
        interp.InterpreterBuilder.create_fp_to_fp,
    )
    assert all(x is y for x, y in zip(before, after))


def test_program_waiting_for_a_later_one_runs_by_turns_as_on_a_gpu():
    r = run(RunRequest(path=str(SCRIPTS / "wait_for_later_program.py"), timeout_s=60))
    assert r.status == "ok", r.error
    (L,) = r.launches
    assert L.complete and L.grid == (2, 1, 1)


def test_program_waiting_for_what_no_program_sets_stops_at_the_waiting_line():
    r = run(RunRequest(path=str(SCRIPTS / "waits_forever.py"), timeout_s=60))
    assert r.status == "exception", r.status
    assert r.error.type == "ProgramsWaitOnEachOther"
    assert r.error.line == 12  # the `while tl.atomic_add(...)` line
    assert "program (0,) waits on a flag or lock that no program of this launch sets" in r.error.message
    assert "On a GPU this launch hangs" in r.error.message


def test_spin_watch_counts_only_identical_polls():
    from triton_lens.trace_engine.interpreter.spin import ProgramsWaitOnEachOther, SpinWatch

    w = SpinWatch(limit=5)
    for i in range(20):  # the value changes every time: a counter, not a wait
        w.observe("tl.atomic_add", (0, 0, 0), (4, 1, 1), b"a", bytes([i]))
    for _ in range(4):
        w.observe("tl.atomic_cas", (0, 0, 0), (4, 1, 1), b"a", b"1")
    w.observe("tl.atomic_cas", (1, 0, 0), (4, 1, 1), b"a", b"1")  # another program: starts over
    with pytest.raises(ProgramsWaitOnEachOther, match=r"program \(1,\).*2 programs of this launch, up to \(3,\), have"):
        for _ in range(5):
            w.observe("tl.atomic_cas", (1, 0, 0), (4, 1, 1), b"a", b"1")


def test_integer_division_shifts_umulhi_and_half_rounding_match_torch():
    # the script asserts against torch: C truncation for // and % of negatives, shifts, umulhi,
    # fp32 -> fp16 / bf16 round to nearest even (the bare interpreter truncates bf16)
    a = _clean_run("integer_and_half_numerics.py")
    assert "numerics ok" in a.result.stdout


def test_builtins_bound_to_other_names_run_as_builtins():
    # fast_expf = tl.math.exp, tl_log2 = tl.log2, `from triton.language import maximum as ...`,
    # tl.static_assert and tl.multiple_of under other names, in the kernel and in a @jit helper.
    a = _clean_run("builtin_aliases.py")
    r = a.result
    (L,) = r.launches
    x = torch.linspace(0.25, 4.0, 64)
    refs = {
        "e_ptr": torch.exp(x),
        "l_ptr": torch.log2(x),
        "m_ptr": torch.maximum(x, torch.tensor(1.0)),
        "s_ptr": torch.log2(torch.exp(x) + 1.0),
    }
    for t in L.tensors:
        if t.name in refs:
            got = torch.tensor(tensor_values(r, launch=0, tensor=t.index, start=0, count=64)["values"])
            torch.testing.assert_close(got, refs[t.name])
    text = (SCRIPTS / "builtin_aliases.py").read_text().splitlines()
    lines = {f"{c}_ptr": next(i for i, t in enumerate(text, 1) if f"tl.store({c}_ptr" in t) for c in "elms"}
    assert sorted((s.arg, s.line) for s in a.accesses if s.kind == "store") == sorted(lines.items())


def test_libdevice_functions_of_a_copy_the_script_executed_run_as_the_device_library():
    # xformers' libdevice_find: module_from_spec + exec_module of triton.language.extra.libdevice, whose
    # functions are stubs the compiler maps by module name; the bare interpreter calls the stub (None).
    a = _clean_run("libdevice_copy.py")
    assert "libdevice copy ok" in a.result.stdout
    assert sorted(s.arg for s in a.accesses if s.kind == "store") == ["p_ptr", "r_ptr"]


@pytest.mark.skipif(
    not hasattr(importlib.import_module("triton.language.extra.cuda"), "gdc_wait"),
    reason="triton before 3.4 has no gdc",
)
def test_grid_dependency_control_compiles_and_runs_in_launch_order():
    # tl.extra.cuda.gdc_wait / gdc_launch_dependents (lmdeploy's paged attention) compile on a GPU; the bare
    # interpreter stops at them ("Did you forget to add @triton.jit?"), which read as would-not-compile.
    a = _clean_run("grid_dependency_control.py")
    assert "grid dependency control ok" in a.result.stdout
    assert [L.kernel for L in a.result.launches] == ["produce", "consume"]


def test_an_error_the_compiler_raises_is_reported_at_the_expression_as_would_not_compile():
    path = SCRIPTS / "and_of_int32.py"
    r = run(RunRequest(path=str(path), timeout_s=120))
    assert r.status == "exception" and r.error.would_not_compile, r.error
    (f,) = [f for f in analyze(r).findings if f.kind == "exception"]
    text = path.read_text().splitlines()[f.line - 1]
    assert text.strip() == "keep = (x > 0) and offs"
    # the `and` expression itself, 0-based columns: `(x > 0) and offs`, not column 1 of the launch
    assert text[f.col : f.end_col] == "(x > 0) and offs" and f.end_line == f.line, (f.col, f.end_col)
    assert f.message.startswith("`and` of an int1 tensor and an int32 tensor would not compile")
    assert "Cannot bitcast data-type of size 32 to data-type of size 1" in f.message
    assert "`x != 0`" in f.message and "`&`" in f.message
    assert not f.detail  # not the interpreter's traceback


def test_a_check_of_triton_language_that_fails_in_a_kernel_is_reported_as_would_not_compile():
    path = SCRIPTS / "arange_not_power_of_2.py"
    r = run(RunRequest(path=str(path), timeout_s=120))
    assert r.status == "exception" and r.error.would_not_compile, r.error
    (f,) = [f for f in analyze(r).findings if f.kind == "exception"]
    text = path.read_text().splitlines()[f.line - 1]
    assert text.strip() == "offs = tl.arange(0, 100)"
    if sys.version_info >= (3, 11):  # the expression's columns come from the instruction's positions
        assert text[f.col : f.end_col] == "tl.arange(0, 100)", (f.col, f.end_col)
    assert f.message.startswith("this would not compile: triton's compiler raises CompilationError here")
    assert "arange's range must be a power of 2" in f.message


def test_bfloat16_arithmetic_reductions_and_dots_compute_on_values_as_the_gpu_does():
    # The bare interpreter added, multiplied, compared and tl.dot-ed the uint16 bit patterns (x * y was
    # 3e38, tl.dot 8e10 off, cut-cross-entropy's loss NaN). The script asserts each result: elementwise
    # equal to torch's bfloat16 ops bit for bit, reductions and the dot within bfloat16's precision.
    r = run(RunRequest(path=str(SCRIPTS / "bf16_arithmetic.py"), timeout_s=120))
    assert r.status == "ok", (r.error.message, r.error.traceback[-2000:]) if r.error else r.status
    assert "bf16 arithmetic as on a GPU" in r.stdout
    assert [L.kernel for L in r.launches] == ["elementwise", "reductions", "dot"]


def test_bfloat16_sums_accumulate_in_float32_and_round_once():
    import numpy as np

    from triton_lens.trace_engine.interpreter import semantics

    # bfloat16 has steps of 2 at 256: 256 + 1 + 1 + 1 rounded at each step stays 256; accumulated in
    # float32 (as the H200 does, tests/gpu/bf16_reduce_probe.py) it is 259, rounded once to 260.
    x = semantics._to_bf16_bits(np.array([256.0, 1.0, 1.0, 1.0], dtype=np.float32))
    got = semantics._bf16_as_f32(semantics._bf16_tree_sum(x, 0, False))
    assert got.shape == () and float(got) == 260.0
    assert semantics._bf16_tree_sum(x.reshape(2, 2), 1, True).shape == (2, 1)
    scan = semantics._bf16_as_f32(semantics._bf16_running(x, 0, np.add))
    assert scan.tolist() == [256.0, 256.0, 258.0, 260.0]  # 257 -> 256 (even), 258, 259 -> 260
