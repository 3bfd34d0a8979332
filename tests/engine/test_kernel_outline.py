"""The one kernel finder (source/kernels.py): kernels, their ranges and parameters, the kernel at a line."""

from __future__ import annotations

import ast

import pytest
from markers import corpus_paths

from triton_lens.source.kernels import kernel_at, launched_on_line, outline

SRC = '''import triton
import triton.language as tl
import numba


@triton.autotune(configs=[], key=["n"])
@triton.jit
def add_kernel(x_ptr, y_ptr,
               n, BLOCK: tl.constexpr):
    """Adds."""
    pid = tl.program_id(0)
    tl.store(y_ptr + pid, tl.load(x_ptr + pid))


@numba.jit
def not_a_kernel(x):
    return x


@triton.jit
def helper(p):
    return tl.load(p)


if __name__ == "__main__":
    add_kernel[(4,)](x, y,
                     4, BLOCK=4)
'''


def test_outline_reads_kernels_ranges_and_parameters():
    ks = outline(SRC)
    assert [k.name for k in ks] == ["add_kernel", "helper"]  # numba's jit is not triton's
    k = ks[0]
    assert (k.first_line, k.line, k.body_line, k.end_line) == (6, 8, 11, 12)
    assert SRC.splitlines()[k.line - 1][k.col :].startswith("add_kernel(")
    assert [(p.name, p.line) for p in k.params] == [("x_ptr", 8), ("y_ptr", 8), ("n", 9), ("BLOCK", 9)]
    for p in k.params:
        assert SRC.splitlines()[p.line - 1][p.col : p.end_col] == p.name
    assert k.param("x_ptr[1]").name == "x_ptr" and k.param("nope") is None


def test_kernel_at_a_line_inside_launching_or_the_only_one():
    assert kernel_at(SRC, 6).name == "add_kernel"  # on its decorator
    assert kernel_at(SRC, 22).name == "helper"
    assert kernel_at(SRC, 26).name == "add_kernel"  # the launch, on its continuation line too
    assert kernel_at(SRC, 27).name == "add_kernel"
    assert kernel_at(SRC, 17) is None  # two kernels, the line is in neither and launches none
    one = "import triton\n@triton.jit\ndef k(x):\n    pass\n\nprint(1)\n"
    assert kernel_at(one, 6).name == "k"
    assert launched_on_line(SRC, 26, {"helper"}) is None


def test_a_file_that_does_not_parse_is_outlined_from_its_lines():
    broken = SRC.replace("pid = tl.program_id(0)", "pid = tl.program_id(0")
    ks = outline(broken)
    assert [k.name for k in ks] == ["add_kernel", "helper"] and not ks[0].exact
    assert ks[0].line == 8 and ks[0].first_line == 6
    assert [p.name for p in ks[0].params][:2] == ["x_ptr", "y_ptr"]


@pytest.mark.parametrize("path", corpus_paths(), ids=lambda p: p.name)
def test_every_corpus_kernel_is_found_where_it_is_defined(path):
    src = path.read_text()
    tree = ast.parse(src)
    defs = sorted(
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef) and any("jit" in ast.unparse(d) for d in n.decorator_list)
    )
    assert [k.line for k in outline(src)] == defs
