"""Every config an autotuner tries is recorded for its findings; the config the hints show is the first
in the user's list (after the library's pruning), not the fastest on the interpreter, so runs repeat."""

from __future__ import annotations

import textwrap

from markers import CORPUS

from triton_lens.analysis import analyze
from triton_lens.trace_engine.process.runner import RunRequest, run

SCALES = CORPUS / "autotune_group_scales.py"
SCALE_LINE = 23  # the unmasked scale load: out of bounds with BLOCK=256 only
N, GROUP = 640, 128


def _analysed(path) -> object:
    result = run(RunRequest(path=str(path), timeout_s=120.0))
    assert result.status == "ok", (result.status, result.error, result.stderr[-2000:])
    return analyze(result)


_runs: list = []


def _scales(k: int) -> list:
    """The corpus file's first k runs (one run serves several tests: each takes seconds on this VM)."""
    while len(_runs) < k:
        _runs.append(_analysed(SCALES))
    return _runs[:k]


def _oob(a, line: int) -> list:
    return [f for f in a.findings if f.kind == "oob" and f.line == line]


def test_the_finding_of_one_config_is_there_every_run_with_that_config_named():
    runs = _scales(2)
    for a in runs:
        (f,) = _oob(a, SCALE_LINE)
        assert f.arg == "s_ptr" and f.access == "load"
        # BLOCK=256 over n=640: program 2 covers 512..767, its lanes from 640 on read scale 5 of 5
        assert (f.lanes, f.programs, f.example_programs) == (3 * 256 - N, 1, [(2,)])
        assert f.witness["autotune"] == {"configs": ["BLOCK=256"], "of": 3, "shown": "BLOCK=64"}
        assert "only with BLOCK=256 (1 of 3 configs tried; the hints show BLOCK=64, which does not have it)" in (
            f.message
        )
    # Two runs, the same findings to the letter (the kept config no longer follows interpreter timings).
    first, second = ([f.to_json() for f in a.findings] for a in runs)
    assert first == second


def test_the_hints_show_the_first_config_and_every_config_tried_is_kept_for_findings():
    (a,) = _scales(1)
    r = a.result
    (kept,) = r.launches
    assert kept.autotune == {
        "trial": False,
        "config": "BLOCK=64",
        "rank": 0,
        "configs": ["BLOCK=64", "BLOCK=128", "BLOCK=256"],
    }
    assert kept.grid == (N // 64, 1, 1)
    assert [t.autotune["config"] for t in r.autotune_trials] == ["BLOCK=64", "BLOCK=128", "BLOCK=256"]
    assert [t.grid[0] for t in r.autotune_trials] == [N // 64, N // 128, 3]
    assert all(t.index == kept.index and not t.values for t in r.autotune_trials)  # no viewer values kept
    # The per-line table (the hints) is the kept config's alone: BLOCK=64, one launch, no out-of-bounds lane.
    (row,) = [s for s in a.accesses if s.line == SCALE_LINE]
    assert (row.launches, row.programs, row.lanes, row.oob) == (1, N // 64, N, 0)


KERNEL = """\
@triton.autotune(configs=[{configs}], key=["n"]{prune})
@triton.jit
def dequant(w_ptr, s_ptr, out_ptr, n, GROUP: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    s = tl.load(s_ptr + offs // GROUP)  # the scale load
    tl.store(out_ptr + offs, tl.load(w_ptr + offs, mask=offs < n) * s, mask=offs < n)

n = {n}
w, s, out = torch.rand(n), torch.rand(n // {group}), torch.empty(n)
dequant[lambda m: (triton.cdiv(n, m["BLOCK"]),)](w, s, out, n, GROUP={group})
assert torch.equal(out, w * s.repeat_interleave({group}))
"""


def _script(tmp_path, configs: str, extra: str = "") -> tuple[str, int]:
    """A script like the corpus file, with these configs (and `extra` defining PRUNE), and its scale
    load's line."""
    prune = ", prune_configs_by=PRUNE" if "PRUNE" in extra else ""
    text = "import torch, triton, triton.language as tl\n" + extra + "\n"
    text += KERNEL.format(configs=configs, prune=prune, n=N, group=GROUP)
    path = tmp_path / "tuned.py"
    path.write_text(text)
    return str(path), text.splitlines().index("    s = tl.load(s_ptr + offs // GROUP)  # the scale load") + 1


def test_a_kept_config_that_has_the_finding_says_so(tmp_path):
    path, line = _script(tmp_path, 'triton.Config({"BLOCK": 256}), triton.Config({"BLOCK": 64})')
    a = _analysed(path)
    (kept,) = a.result.launches
    assert kept.autotune["config"] == "BLOCK=256"  # first in the list, whatever the timings
    (f,) = _oob(a, line)
    assert f.lanes == 3 * 256 - N
    assert f.witness["autotune"] == {"configs": ["BLOCK=256"], "of": 2, "shown": "BLOCK=256"}
    assert f.message.endswith("Autotune: only with BLOCK=256 (1 of 2 configs tried; the hints show BLOCK=256).")
    # the table shows the kept config's out-of-bounds lanes
    (row,) = [s for s in a.accesses if s.line == line]
    assert row.oob == f.lanes


def test_a_finding_every_config_has_names_none_and_labels_name_what_differs(tmp_path):
    # a block larger than n in every config: every config reads past the scales
    configs = 'triton.Config({"BLOCK": 1024}, num_warps=4), triton.Config({"BLOCK": 1024}, num_warps=8)'
    path, line = _script(tmp_path, configs)
    a = _analysed(path)
    r = a.result
    assert [t.autotune["config"] for t in r.autotune_trials] == ["num_warps=4", "num_warps=8"]
    (f,) = _oob(a, line)
    assert f.lanes == 1024 - N and "Autotune" not in f.message and "autotune" not in f.witness


def test_the_librarys_own_pruning_decides_which_configs_are_tried(tmp_path):
    configs = ", ".join(f'triton.Config({{"BLOCK": {b}}})' for b in (64, 128, 256))
    drop_big = "def drop(configs, named_args, **kw):\n    return [c for c in configs if c.kwargs['BLOCK'] <= 128]\n"
    path, line = _script(tmp_path, configs, drop_big + 'PRUNE = {"early_config_prune": drop}')
    a = _analysed(path)
    assert [t.autotune["config"] for t in a.result.autotune_trials] == ["BLOCK=64", "BLOCK=128"]
    assert _oob(a, line) == []  # the config pruned away is not one a GPU runs
    # perf_model + top_k: the two the model ranks fastest (256, then 128) are tried, in its order; the kept
    # one is still the first of them in the user's list.
    model = "def model(**kw):\n    return -kw['BLOCK']\n"
    path, line = _script(tmp_path, configs, model + 'PRUNE = {"perf_model": model, "top_k": 2}')
    a = _analysed(path)
    r = a.result
    assert [t.autotune["config"] for t in r.autotune_trials] == ["BLOCK=256", "BLOCK=128"]
    assert r.launches[0].autotune["config"] == "BLOCK=128"
    (f,) = _oob(a, line)
    assert f.witness["autotune"] == {"configs": ["BLOCK=256"], "of": 2, "shown": "BLOCK=128"}


def test_inputs_are_restored_between_configs_as_the_autotuner_does(tmp_path):
    # In place (x *= 2) with restore_value, and an atomic sum with reset_to_zero: the script sees one
    # application of the kept config, not one per config tried.
    path = tmp_path / "inplace.py"
    path.write_text(
        textwrap.dedent(
            """\
            import torch, triton, triton.language as tl
            CONFIGS = [triton.Config({"BLOCK": b}) for b in (32, 64, 128)]

            @triton.autotune(configs=CONFIGS, key=["n"], restore_value=["x_ptr"])
            @triton.jit
            def double(x_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)

            @triton.autotune(configs=CONFIGS, key=["n"], reset_to_zero=["out_ptr"])
            @triton.jit
            def total(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.atomic_add(out_ptr, tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0), 0))

            n = 300
            x = torch.arange(n, dtype=torch.float32)
            double[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, n)
            assert torch.equal(x, 2 * torch.arange(n, dtype=torch.float32)), x[:4]
            out = torch.zeros(1)
            total[lambda m: (triton.cdiv(n, m["BLOCK"]),)](x, out, n)
            assert out.item() == x.sum().item(), (out.item(), x.sum().item())
            """
        )
    )
    a = _analysed(path)
    r = a.result
    assert [L.autotune["config"] for L in r.launches] == ["BLOCK=32", "BLOCK=32"]
    assert len(r.autotune_trials) == 6
    assert [f for f in a.findings if f.severity in ("error", "warning")] == []
