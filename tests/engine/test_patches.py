"""The engine's one patch mechanism (interpreter/patches.py): whatever a run patches is the original again
after it, in reverse order, also where an undo fails; and an in-process run (the recorder, the CUDA stand-in)
leaves every class and module it touched exactly as it found it."""

from __future__ import annotations

import contextlib
import os
import sys
import types
from collections.abc import Iterator

import pytest

from triton_lens.trace_engine.interpreter.patches import PatchScope


def test_undos_run_in_reverse_order():
    owner = types.SimpleNamespace(x=0)
    seen: list[object] = []
    with PatchScope() as scope:
        scope.set_attr(owner, "x", 1)
        scope.defer(lambda: seen.append(("after 2", owner.x)))
        scope.set_attr(owner, "x", 2)
        scope.defer(lambda: seen.append(("after 3", owner.x)))
        scope.set_attr(owner, "x", 3)
    # the last change is undone first: each undo sees the state its own change saw
    assert seen == [("after 3", 2), ("after 2", 1)]
    assert owner.x == 0


def test_patch_wraps_the_original_and_puts_it_back():
    class Owner:
        def f(self) -> str:
            return "orig"

    original = Owner.__dict__["f"]
    with PatchScope() as scope:
        scope.patch(Owner, "f", lambda orig: lambda self: "new " + orig(self))
        assert Owner().f() == "new orig"
    assert Owner.__dict__["f"] is original


def test_an_attribute_that_did_not_exist_is_deleted_again():
    class Base:
        inherited = "base"

    class Owner(Base):
        pass

    with PatchScope() as scope:
        scope.set_attr(Owner, "inherited", "own")  # inherited, not the owner's own
        scope.set_attr(Owner, "missing", "new")
        scope.patch(Owner, "also_missing", lambda orig: ("made from", orig))
        assert Owner.inherited == "own" and Owner.also_missing == ("made from", None)
    assert "inherited" not in vars(Owner) and Owner.inherited == "base"
    assert not hasattr(Owner, "missing") and not hasattr(Owner, "also_missing")


def test_items_of_a_mapping_are_put_back_or_removed():
    d = {"kept": 1}
    with PatchScope() as scope:
        scope.set_item(d, "kept", 2)
        scope.set_item(d, "added", 3)
        scope.keep_item(d, "set_elsewhere")
        d["set_elsewhere"] = 4
        assert d == {"kept": 2, "added": 3, "set_elsewhere": 4}
    assert d == {"kept": 1}


def test_environment_variables_are_put_back():
    name = "TRITON_LENS_TEST_PATCHES"
    assert name not in os.environ
    with PatchScope() as scope:
        scope.set_item(os.environ, name, "1")
        assert os.environ[name] == "1"
    assert name not in os.environ


def test_a_whole_dict_is_put_back():
    d = {"a": 1}
    with PatchScope() as scope:
        scope.keep_dict(d)
        d.clear()
        d["b"] = 2
    assert d == {"a": 1}


def test_every_undo_runs_when_one_raises_and_the_first_error_surfaces():
    owner = types.SimpleNamespace(a="a", b="b")
    scope = PatchScope()
    scope.set_attr(owner, "a", "patched")

    def first_failure() -> None:
        raise RuntimeError("first")

    def second_failure() -> None:
        raise ValueError("second")

    scope.defer(first_failure)
    scope.defer(second_failure)  # undone first: raises first
    scope.set_attr(owner, "b", "patched")
    with pytest.raises(ValueError, match="second") as caught:
        scope.restore()
    assert owner.a == "a" and owner.b == "b"  # undone before and after the failing ones
    if sys.version_info >= (3, 11):  # (add_note)
        assert "RuntimeError: first" in " ".join(caught.value.__notes__)
    scope.restore()  # nothing left: idempotent


def test_a_nested_scope_is_undone_by_itself_or_with_its_parent():
    owner = types.SimpleNamespace(x=0, y=0)
    with PatchScope() as outer:
        outer.set_attr(owner, "x", 1)
        with outer.nested() as inner:
            inner.set_attr(owner, "x", 2)
            inner.set_attr(owner, "y", 2)
        assert (owner.x, owner.y) == (1, 0)
        left_open = outer.nested()
        left_open.set_attr(owner, "y", 3)
        outer.set_attr(owner, "x", 4)  # made after the nested scope opened: undone before it
    assert (owner.x, owner.y) == (0, 0)


def test_a_context_entered_in_the_scope_is_exited_in_order_with_the_undos():
    events: list[str] = []

    @contextlib.contextmanager
    def mode() -> Iterator[str]:
        events.append("enter")
        yield "inside"
        events.append("exit")

    with PatchScope() as scope:
        scope.defer(lambda: events.append("undo before"))
        assert scope.enter(mode()) == "inside"
        scope.defer(lambda: events.append("undo after"))
    assert events == ["enter", "undo after", "exit", "undo before"]


# ---- end to end: an in-process run puts back everything it patched ------------------------------------
def _owners() -> dict[str, object]:
    """Every class and module a run patches (the interpreter's, the stand-in's), by name."""
    import threading

    import torch
    import triton
    import triton.runtime.interpreter as interp
    import triton.testing
    from torch.autograd.function import BackwardCFunction, Function
    from triton.runtime.jit import JITFunction

    owners: dict[str, object] = {
        "interpreter module": interp,
        "InterpreterBuilder": interp.InterpreterBuilder,
        "GridExecutor": interp.GridExecutor,
        "FunctionRewriter": interp.FunctionRewriter,
        "InterpretedFunction": interp.InterpretedFunction,
        "JITFunction": JITFunction,
        "triton.runtime.autotuner.Autotuner": triton.runtime.autotuner.Autotuner,
        "triton.runtime.driver": triton.runtime.driver,
        "torch.cuda": torch.cuda,
        "torch._C": torch._C,
        "torch": torch,
        "triton.testing": triton.testing,
        "Function": Function,
        "BackwardCFunction": BackwardCFunction,
        "torch.library.Library": torch.library.Library,
        "threading.Thread": threading.Thread,
    }
    for name in ("ReduceOps", "ScanOps", "TensorDescHandle"):
        if hasattr(interp, name):
            owners[name] = getattr(interp, name)
    try:
        from triton.language.extra import libdevice

        owners["libdevice"] = libdevice
    except ImportError:
        pass
    return owners


def _snapshot() -> dict[str, dict[str, int]]:
    import triton.runtime.interpreter as interp

    snap = {name: {k: id(v) for k, v in vars(o).items()} for name, o in _owners().items()}
    snap["os.environ"] = {k: hash(v) for k, v in os.environ.items()}
    snap["the builder's options"] = {"options": id(interp.interpreter_builder.options)}
    return snap


def _diff(before: dict[str, dict[str, int]], after: dict[str, dict[str, int]]) -> list[str]:
    out = []
    for name, was in before.items():
        now = after[name]
        out += [f"{name}.{k}: {'removed' if k not in now else 'replaced'}" for k in was if now.get(k) != was[k]]
        out += [f"{name}.{k}: added" for k in now if k not in was]
    return out


def test_an_in_process_run_leaves_triton_and_torch_as_they_were():
    import torch
    import triton
    import triton.language as tl
    import triton.runtime.interpreter as interp

    from triton_lens.trace_engine.recording.recorder import Recorder
    from triton_lens.trace_engine.standin.cuda_standin import CudaStandIn

    def add(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)

    before = _snapshot()
    with CudaStandIn("asked for: test"), Recorder() as recorder:
        x = torch.arange(100, dtype=torch.float32, device="cuda")
        out = torch.empty_like(x)
        interp.InterpretedFunction(add)[(triton.cdiv(100, 64),)](x, out, 100, BLOCK=64)
        assert torch.cuda.is_available() and _diff(before, _snapshot())  # patched while inside
    assert torch.equal(out.cpu(), torch.arange(100, dtype=torch.float32) + 1)
    assert recorder is not None
    assert _diff(before, _snapshot()) == []
