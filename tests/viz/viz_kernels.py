"""Kernels for the viz tests, copied from shared/corpus (plain @triton.jit; the tests decorate them).

Line numbers matter: tests look for the lines of the loads and stores below (see LINES).
"""

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, z_ptr, N, B: tl.constexpr):  # shared/corpus/vector_add.py
    pid = tl.program_id(0)
    offsets = tl.arange(0, B) + pid * B
    mask = offsets < N
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    z = x + y
    tl.store(z_ptr + offsets, z, mask=mask)


@triton.jit
def oob_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):  # shared/corpus/oob_missing_mask.py
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@triton.jit
def sum_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):  # shared/corpus/race_write_write.py
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(x, axis=0))


@triton.jit
def _load_block(ptr, offs, n):  # shared/corpus/helper_function.py
    return tl.load(ptr + offs, mask=offs < n, other=0.0)


@triton.jit
def axpy_kernel(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = _load_block(x_ptr, offs, n)
    y = _load_block(y_ptr, offs, n)
    nb = tl.cdiv(n, BLOCK)  # a triton stdlib @jit function
    tl.store(out_ptr + offs, a * x + y + 0 * nb, mask=offs < n)


@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def neg_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):  # shared/corpus/autotune.py
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(out_ptr + offs, -x, mask=offs < n)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    # row-major a [M, K], b [K, N], c [M, N]; K is one block: one tl.dot per program
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
    b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], tl.dot(a, b))


_NEEDLES = {
    "add.x": "x = tl.load(x_ptr + offsets",
    "add.y": "y = tl.load(y_ptr + offsets",
    "add.z": "tl.store(z_ptr + offsets",
    "oob.x": "x = tl.load(x_ptr + offs)",
    "oob.y": "y = tl.load(y_ptr + offs, mask=mask)",
    "oob.out": "tl.store(out_ptr + offs, x + y",
    "sum.store": "tl.store(out_ptr, tl.sum",
    "helper.load": "return tl.load(ptr + offs",
    "axpy.store": "tl.store(out_ptr + offs, a * x",
    "neg.load": "x = tl.load(x_ptr + offs, mask=offs < n)",
}


def _lines():
    with open(__file__, encoding="utf-8") as f:
        text = f.read().split("_NEEDLES = {")[0].splitlines()
    return {k: next(i for i, t in enumerate(text, 1) if v in t) for k, v in _NEEDLES.items()}


LINES = _lines()
