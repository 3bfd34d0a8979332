"""The language server's runs share one size-check cache across edits (lsp/runs.SIZE_CACHE,
trace_engine/recording/size_cache.py): an edit below the kernel reuses its size check, and the diagnostic stays."""

from __future__ import annotations

from triton_lens.lsp import runs
from triton_lens.lsp.runplan import plan
from triton_lens.lsp.runs import RunHandle, execute
from triton_lens.lsp.settings import Settings

TEXT = """import torch
import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x * 2, mask=offs < n)


n = 2048
x = torch.randn(n)
out = torch.empty(n)
scale[(triton.cdiv(n, 512),)](x, out, n, BLOCK=512)
"""


def _codes(view):
    return sorted((d.range.start.line, d.code) for d in view.diagnostics if d.code in ("oob-sizes", "wrap"))


def test_an_edit_below_the_kernel_reuses_its_size_check(tmp_path, monkeypatch):
    monkeypatch.setattr(runs, "SIZE_CACHE", runs.SIZE_CACHE.__class__())
    path = str(tmp_path / "k.py")
    (tmp_path / "k.py").write_text(TEXT)
    views = []
    for version, text in enumerate([TEXT, TEXT + "print(out.sum())\n"], start=1):
        h = RunHandle(
            uri="file://" + path,
            path=path,
            version=version,
            text=text,
            plan=plan(path, text, Settings(), []),
            settings=Settings(),
        )
        views.append(execute(h))
    assert all(v is not None and v.status == "ok" for v in views)
    assert (runs.SIZE_CACHE.misses, runs.SIZE_CACHE.hits) == (1, 1)
    assert _codes(views[0]) == _codes(views[1]) == [(8, "oob-sizes")]
