"""Which line an access belongs to: the line of the tl.load / tl.store / atomic itself, also inside a
@jit helper, whichever load path (with a mask or without) ran before it in the launch."""

from __future__ import annotations

from pathlib import Path

import triton

from triton_lens.analysis import analyze
from triton_lens.analysis.access_map import access_map
from triton_lens.trace_engine.process.runner import RunRequest, run

SCRIPT = Path(__file__).parent / "scripts" / "lines" / "helper_calls.py"
DESCRIPTORS = hasattr(triton, "set_allocator")  # the script's descriptor helper runs from triton 3.4


def _line(text: str) -> int:
    (n,) = [i + 1 for i, line in enumerate(SCRIPT.read_text().splitlines()) if text in line]
    return n


def test_helper_accesses_are_at_the_helpers_lines_after_the_kernels_own_loads():
    r = run(RunRequest(path=str(SCRIPT)))
    assert r.status == "ok", r.error
    masked = _line("return tl.load(ptr + offs, mask=offs < n + 4)")
    unmasked = _line("return tl.load(ptr + offs)  #")
    store = _line("    tl.store(ptr + offs, v, mask=offs < n)")
    desc = _line("return d.load([0])")
    atomic = _line("    tl.atomic_add(ptr + offs, v, mask=offs < n)")
    body_unmasked = _line("a = tl.load(x_ptr + offs)")
    body_masked = _line("a = tl.load(x_ptr + offs, mask=offs < n)")
    body_store = _line("tl.store(out_ptr + offs, a + b, mask=offs < n)")
    body_atomic = _line("tl.atomic_add(acc_ptr + offs, a, mask=offs < n)")

    # Launch 0: the kernel's unmasked load first, then each helper's access (a masked load first).
    # Launch 1: the kernel's masked load first, then the helper's unmasked load.
    names = {t.index: t.name for t in r.launches[0].tensors}
    expect = [
        [
            (body_unmasked, "load", "tl.load", "x_ptr"),
            (masked, "load", "tl.load", "y_ptr"),
            *([(desc, "load", "descriptor load", "x_ptr")] if DESCRIPTORS else []),
            (store, "store", "tl.store", "out_ptr"),
            (atomic, "atomic", "tl.atomic_add", "acc_ptr"),
        ],
        [
            (body_masked, "load", "tl.load", "x_ptr"),
            (unmasked, "load", "tl.load", "y_ptr"),
            (body_store, "store", "tl.store", "out_ptr"),
            (body_atomic, "atomic", "tl.atomic_add", "acc_ptr"),
        ],
    ]
    assert [[(s.line, s.kind, s.op, names[s.arg]) for s in L.sites] for L in r.launches] == expect

    a = analyze(r)
    stats = {(s.line, s.arg, s.kind): (s.programs, s.lanes, s.active, s.oob) for s in a.accesses}
    assert stats == {
        (body_unmasked, "x_ptr", "load"): (1, 16, 16, 0),
        (masked, "y_ptr", "load"): (1, 16, 16, 4),
        **({(desc, "x_ptr", "load"): (1, 16, 12, 0)} if DESCRIPTORS else {}),
        (store, "out_ptr", "store"): (1, 16, 12, 0),
        (atomic, "acc_ptr", "atomic"): (1, 16, 12, 0),
        (body_masked, "x_ptr", "load"): (1, 16, 12, 0),
        (unmasked, "y_ptr", "load"): (1, 16, 16, 4),
        (body_store, "out_ptr", "store"): (1, 16, 12, 0),
        (body_atomic, "acc_ptr", "atomic"): (1, 16, 12, 0),
    }
    assert sorted((f.kind, f.line, f.arg, f.lanes) for f in a.findings) == sorted(
        [("oob", unmasked, "y_ptr", 4), ("oob", masked, "y_ptr", 4)]
    )

    for L in r.launches:
        for t in L.tensors:
            m = access_map(r, launch=L.index, tensor=t.index)
            want = [(line, kind) for line, kind, _, arg in expect[L.index] if arg == t.name]
            assert [(s["line"], s["kind"]) for s in m["sites"]] == want
