"""The size check's results across runs (trace_engine/recording/size_cache.py): an edit that leaves a kernel, its
@jit helpers, its constexprs, its launch's relations and the GPU profile alone reuses the kernel's result,
equal to a fresh check; an edit of any of them checks it again."""

from __future__ import annotations

import textwrap

import pytest

from triton_lens.trace_engine.process.runner import RunRequest, run
from triton_lens.trace_engine.recording.size_cache import SizeCache

pytestmark = pytest.mark.engine

SCRIPT = """
import torch
import triton
import triton.language as tl


@triton.jit
def in_range(offs, n):
    return {helper}


@triton.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs{load_mask})
    tl.store(out_ptr + offs, x * 2, mask=in_range(offs, n))


n = {n}
x = torch.randn(n)
out = torch.empty(n)
scale[{grid}](x, out, n, BLOCK={block})
{host}
"""

BASE = dict(helper="offs < n", load_mask="", n=4096, grid="(triton.cdiv(n, 1024),)", block=1024, host="print('done')")


def _sizes(r):
    return [(L.size_findings, L.size_checked) for L in r.launches]


def _kinds(r):
    return sorted(f["kind"] + " " + f["arg"] for L in r.launches for f in L.size_findings)


class _Doc:
    """One document edited and run again, with one cache, as the language server runs it."""

    def __init__(self, tmp_path, cache: SizeCache, gpu: str = "H100"):
        self.path = tmp_path / "k.py"
        self.cache = cache
        self.gpu = gpu

    def run(self, gpu: str | None = None, **edits):
        self.path.write_text(textwrap.dedent(SCRIPT.format(**dict(BASE, **edits))))
        hits, misses = self.cache.hits, self.cache.misses
        req = dict(path=str(self.path), timeout_s=120, keep_warm=True, gpu=gpu or self.gpu)
        cached = run(RunRequest(size_cache=self.cache, **req))  # type: ignore[arg-type]
        fresh = run(RunRequest(**req))  # type: ignore[arg-type]
        assert cached.status == "ok" and fresh.status == "ok", (cached.error, fresh.error)
        # the cached result (hit or miss) is the one a check without any cache gives
        assert _sizes(cached) == _sizes(fresh)
        return cached, self.cache.hits - hits, self.cache.misses - misses


def test_an_edit_elsewhere_reuses_the_result_and_it_equals_a_fresh_check(tmp_path):
    doc = _Doc(tmp_path, SizeCache())
    first, hits, misses = doc.run()
    assert (hits, misses) == (0, 1) and _kinds(first) == ["oob-sizes x_ptr"]
    again, hits, misses = doc.run(host="print('edited below the kernel')\nprint(out.sum())")
    assert (hits, misses) == (1, 0)
    assert _sizes(again) == _sizes(first) and _kinds(again) == ["oob-sizes x_ptr"]


def test_an_edit_of_the_kernel_checks_it_again(tmp_path):
    doc = _Doc(tmp_path, SizeCache())
    assert _kinds(doc.run()[0]) == ["oob-sizes x_ptr"]
    fixed, hits, misses = doc.run(load_mask=", mask=offs < n")  # the fix: the finding must go
    assert (hits, misses) == (0, 1) and _kinds(fixed) == []


def test_an_edit_of_a_helper_the_kernel_calls_checks_it_again(tmp_path):
    doc = _Doc(tmp_path, SizeCache())
    clean = dict(load_mask=", mask=in_range(offs, n)")
    assert _kinds(doc.run(**clean)[0]) == []
    broken, hits, misses = doc.run(helper="offs >= 0", **clean)  # the helper's mask no longer checks n
    assert (hits, misses) == (0, 1) and "oob-sizes x_ptr" in _kinds(broken)


def test_an_edit_of_how_the_grid_follows_the_size_checks_it_again(tmp_path):
    doc = _Doc(tmp_path, SizeCache())
    assert _kinds(doc.run()[0]) == ["oob-sizes x_ptr"]
    # The same 4 programs at n = 4096, but at 4097 the grid no longer covers the tail: nothing leaves x.
    floor, hits, misses = doc.run(grid="(n // 1024,)")
    assert (hits, misses) == (0, 1) and _kinds(floor) == []


def test_other_sizes_constexprs_or_gpu_check_it_again(tmp_path):
    doc = _Doc(tmp_path, SizeCache())
    doc.run()
    for edit in (dict(n=8192), dict(block=512, grid="(triton.cdiv(n, 512),)")):
        _, hits, misses = doc.run(**edit)
        assert (hits, misses) == (0, 1), edit
    _, hits, misses = doc.run(gpu="A100")
    assert (hits, misses) == (0, 1)
    _, hits, misses = doc.run()  # back to the first version: its entry is still there
    assert (hits, misses) == (1, 0)


def test_the_cache_is_bounded_in_entries_and_bytes_and_kept_per_document():
    c = SizeCache(max_entries=3, max_bytes=200, per_job=2)
    for i in range(4):
        c.put("a.py", f"k{i}", {"findings": [], "checked": [i]})
    assert len(c) == 3 and set(c.for_job("a.py")) == {"k2", "k3"}  # the oldest dropped; a job gets the newest 2
    c.hit("a.py", "k1")  # used again: now the most recent
    c.put("b.py", "k9", {"findings": [], "checked": []})
    assert "k1" in c.for_job("a.py") and "k2" not in c.for_job("a.py") and c.for_job("b.py").keys() == {"k9"}
    c.put("a.py", "big", {"findings": ["x" * 300], "checked": []})  # larger than the whole cache: not kept
    assert "big" not in c.for_job("a.py")
    c.put("a.py", "k5", {"findings": ["x" * 150], "checked": []})
    assert c.bytes <= 200 and "k5" in c.for_job("a.py")
