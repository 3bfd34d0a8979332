"""The three Triton-Viz clients (tracer, sanitizer, profiler) on corpus kernels, and `Client`."""

import io
import os

import numpy as np
import pytest
import torch
import triton
import triton.language as tl
import viz_kernels as kernels
from viz_kernels import LINES

KFILE = os.path.abspath(kernels.__file__)


def run_oob(kernel):
    n = 1000
    x, y = torch.rand(n), torch.rand(n)
    out = torch.zeros(n)
    kernel[(triton.cdiv(n, 128),)](x, y, out, n, BLOCK=128)
    return x, y, out


def test_sanitizer_raises_with_line_program_and_elements(viz, capsys):
    san = viz.Sanitizer(out=io.StringIO())
    k = viz.trace(san)(kernels.oob_add_kernel)
    with pytest.raises(viz.SanitizerError) as info:
        run_oob(k)
    msg = str(info.value)
    # where, who and which elements: line of the unmasked load, the last program, offsets past the end
    assert f"viz_kernels.py:{LINES['oob.x']}" in msg
    assert "x_ptr" in msg and "program (7,)" in msg
    assert "1000, 1001, 1002" in msg
    assert [f.kind for f in info.value.findings] == ["oob"]
    f = info.value.findings[0]
    assert (f.line, f.arg, f.lanes, f.example_programs[0][:1]) == (LINES["oob.x"], "x_ptr", 24, (7,))
    # reported as found, during the launch: one line per access site, with the element offsets
    found = [r for r in san.reports if "out-of-bounds load" in r]
    assert len(found) == 1
    assert f"viz_kernels.py:{LINES['oob.x']}:" in found[0]
    assert "program (7,)" in found[0] and "24 lanes" in found[0] and "1000..1023" in found[0]


def test_sanitizer_by_name_reports_on_stderr_and_the_launch_still_computes(viz, capsys):
    k = viz.trace("sanitizer")(kernels.oob_add_kernel)
    with pytest.raises(viz.SanitizerError):
        run_oob(k)
    err = capsys.readouterr().err
    assert f"viz_kernels.py:{LINES['oob.x']}: out-of-bounds load of x_ptr (1000 elements) by program (7,)" in err


def test_sanitizer_report_only_keeps_going_with_correct_outputs(viz):
    buf = io.StringIO()
    k = viz.trace(viz.Sanitizer(abort=False, out=buf))(kernels.oob_add_kernel)
    x, y, out = run_oob(k)
    text = buf.getvalue()
    assert "1 problem" in text and f"viz_kernels.py:{LINES['oob.x']}" in text
    # the 24 out-of-bounds lanes were masked off, every real element computed
    assert torch.equal(out, x + y)


def test_sanitizer_reports_races(viz):
    k = viz.trace(viz.Sanitizer(out=io.StringIO()))(kernels.sum_kernel)
    x = torch.rand(1000)
    out = torch.zeros(1)
    with pytest.raises(viz.SanitizerError) as info:
        k[(8,)](x, out, 1000, BLOCK=128)
    assert [f.kind for f in info.value.findings] == ["race"]
    assert f"viz_kernels.py:{LINES['sum.store']}" in str(info.value)
    assert "8 programs" in str(info.value)


def test_sanitizer_silent_on_a_correct_kernel(viz):
    buf = io.StringIO()
    k = viz.trace(viz.Sanitizer(out=buf))(kernels.add_kernel)
    x = torch.arange(128.0)
    z = torch.zeros(128)
    k[(2,)](x, x, z, 128, 64)
    assert buf.getvalue() == "" and torch.equal(z, 2 * x)


def test_profiler_prints_per_line_bytes_mask_activity_and_reuse(viz):
    buf = io.StringIO()
    prof = viz.Profiler(out=buf)
    k = viz.trace(prof)(kernels.oob_add_kernel)
    run_oob(k)
    text = buf.getvalue()
    lines = text.splitlines()
    assert lines[0].startswith("triton-lens profiler: oob_add_kernel grid=(8, 1, 1) (8 programs")
    assert lines[1].split() == [
        "line",
        "access",
        "tensor",
        "loaded",
        "stored",
        "mask",
        "active",
        "sectors",
        "unique",
        "reuse",
        "oob",
    ]
    rows = {ln.split()[0]: ln.split() for ln in lines[2:]}
    # unmasked load of x: 1024 lanes, 24 out of bounds -> 1000 elements (4,000 bytes) really loaded
    assert rows[str(LINES["oob.x"])] == [
        str(LINES["oob.x"]),
        "tl.load",
        "x_ptr",
        "4,000",
        "B",
        "-",
        "1024/1024",
        "(100%)",
        "100.0%",
        "1000",
        "1.00",
        "24",
    ]
    assert rows[str(LINES["oob.y"])] == [
        str(LINES["oob.y"]),
        "tl.load",
        "y_ptr",
        "4,000",
        "B",
        "-",
        "1000/1024",
        "(98%)",
        "100.0%",
        "1000",
        "1.00",
        "-",
    ]
    assert rows[str(LINES["oob.out"])] == [
        str(LINES["oob.out"]),
        "tl.store",
        "out_ptr",
        "-",
        "4,000",
        "B",
        "1000/1024",
        "(98%)",
        "100.0%",
        "1000",
        "1.00",
        "-",
    ]
    assert rows["total"] == ["total", "8,000", "B", "4,000", "B"]
    assert [(s.line, s.bytes) for s in prof.stats] == [
        (LINES["oob.x"], 4000),
        (LINES["oob.y"], 4000),
        (LINES["oob.out"], 4000),
    ]
    # no tl.dot: the launch is memory-bound; DRAM moves x, y (read) and out (written) once, 12,000 B
    assert lines[-2] == "DRAM >= 12,000 B (each touched 32-byte sector once), no tl.dot"
    assert lines[-1].startswith("roofline estimate (peak bandwidth and FLOP/s, no launch overhead): H100 SXM ")
    assert lines[-1].count("(memory)") == 5


def test_profiler_reuse_counts_repeated_elements(viz):
    buf = io.StringIO()
    k = viz.trace(viz.Profiler(out=buf))(kernels.sum_kernel)
    k[(8,)](torch.rand(1000), torch.zeros(1), 1000, BLOCK=128)
    row = next(ln.split() for ln in buf.getvalue().splitlines() if ln.split()[:1] == [str(LINES["sum.store"])])
    # 8 programs each store one element, out[0]: 8 stores of 1 unique element -> reuse 8
    assert row[1:3] == ["tl.store", "out_ptr"] and row[-3:] == ["1", "8.00", "-"]
    assert row[3:6] == ["-", "32", "B"]


def test_tracer_records_launches_with_elements_and_clear_empties_them(viz):
    k = viz.trace("tracer")(kernels.add_kernel)
    x = torch.arange(128.0)
    z = torch.zeros(128)
    k[(2,)](x, x, z, 128, 64)
    k[(4,)](x, x, z, 128, 32)
    assert torch.equal(z, 2 * x)
    assert [(L.index, L.kernel, L.grid) for L in viz.launches] == [
        (0, "add_kernel", (2, 1, 1)),
        (1, "add_kernel", (4, 1, 1)),
    ]
    L = viz.launches[0]
    assert [t.name for t in L.tensors] == ["x_ptr", "y_ptr", "z_ptr"]
    assert [(s.line, s.kind) for s in L.sites] == [
        (LINES["add.x"], "load"),
        (LINES["add.y"], "load"),
        (LINES["add.z"], "store"),
    ]
    launches = viz.launches
    viz.clear()
    assert launches == [] and viz.launches is launches  # emptied in place: references stay valid


def test_none_means_tracer_and_stacked_clients_all_run(viz):
    buf = io.StringIO()

    @viz.trace(viz.Profiler(out=buf))
    @viz.trace()
    @triton.jit
    def copy_kernel(src, dst, n, B: tl.constexpr):
        offs = tl.program_id(0) * B + tl.arange(0, B)
        tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)

    src = torch.arange(100.0)
    dst = torch.zeros(100)
    copy_kernel[(2,)](src, dst, 100, B=64)
    assert torch.equal(src, dst)
    assert [c.name for c in copy_kernel.clients] == ["tracer", "profiler"]
    assert len(viz.launches) == 1 and "copy_kernel" in buf.getvalue()


def test_custom_client_gets_launch_start_each_access_and_launch_end(viz):
    events = []

    class Spy(viz.Client):
        name = "spy"

        def on_launch_start(self, launch):
            events.append(("start", launch.kernel, launch.grid, [t.name for t in launch.tensors], launch.n_programs))

        def on_access(self, a):
            e = a.elements()
            events.append(
                (
                    "access",
                    a.kind,
                    a.tensor.name,
                    a.line,
                    a.program,
                    a.lanes,
                    a.active,
                    a.oob,
                    int(e[0]),
                    int(e[-1]),
                    e.size,
                    a.bytes,
                )
            )

        def on_launch_end(self, trace):
            events.append(("end", trace.kernel, len(trace.ex_site)))

    k = viz.trace(Spy())(kernels.add_kernel)
    x = torch.arange(100.0)
    z = torch.zeros(100)
    k[(2,)](x, x, z, 100, 64)
    assert events[0] == ("start", "add_kernel", (2, 1, 1), ["x_ptr", "y_ptr", "z_ptr"], 2)
    assert events[1:4] == [
        ("access", "load", "x_ptr", LINES["add.x"], (0, 0, 0), 64, 64, 0, 0, 63, 64, 256),
        ("access", "load", "y_ptr", LINES["add.y"], (0, 0, 0), 64, 64, 0, 0, 63, 64, 256),
        ("access", "store", "z_ptr", LINES["add.z"], (0, 0, 0), 64, 64, 0, 0, 63, 64, 256),
    ]
    assert events[4] == ("access", "load", "x_ptr", LINES["add.x"], (1, 0, 0), 64, 36, 0, 64, 99, 36, 144)
    assert events[-1] == ("end", "add_kernel", 6)
    assert viz.launches == []  # a custom client alone records nothing for the viewer


def test_client_exception_in_on_access_stops_the_launch(viz):
    class Stop(viz.Client):
        def on_access(self, a):
            if a.program[0] == 1:
                raise KeyError("stop at program 1")

    k = viz.trace(Stop())(kernels.add_kernel)
    x = torch.arange(128.0)
    with pytest.raises(Exception, match="stop at program 1"):
        k[(2,)](x, x, torch.zeros(128), 128, 64)


def test_access_offsets_of_out_of_bounds_lanes(viz):
    seen = []

    class Oob(viz.Client):
        def on_access(self, a):
            if a.oob:
                seen.append(
                    (a.line, a.program, a.oob, a.oob_offsets().tolist()[:2], a.oob_offsets().size, a.elements().size)
                )

    run_oob(viz.trace(Oob())(kernels.oob_add_kernel))
    assert seen == [(LINES["oob.x"], (7, 0, 0), 24, [1000, 1001], 24, 104)]


def test_masked_offsets(viz):
    got = []

    class M(viz.Client):
        def on_access(self, a):
            if a.kind == "store" and a.program == (1, 0, 0):
                got.append(a.masked_offsets())

    k = viz.trace(M())(kernels.add_kernel)
    x = torch.arange(100.0)
    k[(2,)](x, x, torch.zeros(100), 100, 64)
    assert np.array_equal(got[0], np.arange(100, 128))


def test_unknown_client_and_backend_are_clear_errors(viz):
    with pytest.raises(ValueError, match="unknown client 'tracr'.*'tracer', 'sanitizer', 'profiler'"):
        viz.trace("tracr")
    with pytest.raises(ValueError, match="backend 'nki' is not supported"):
        viz.trace("tracer", backend="nki")
    with pytest.raises(TypeError, match="client must be"):
        viz.trace(3)(kernels.add_kernel)


def test_a_second_tracer_does_not_record_twice(viz):
    k = viz.trace("tracer")(viz.trace("tracer")(kernels.add_kernel))
    x = torch.arange(64.0)
    k[(1,)](x, x, torch.zeros(64), 64, 64)
    assert [c.name for c in k.clients] == ["tracer"] and len(viz.launches) == 1
