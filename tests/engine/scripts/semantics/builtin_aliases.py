"""Builtins bound to other names at import (module-level aliases, `from triton.language import ...`),
used in a kernel and in a @jit helper: the compiler resolves them as builtins, so they run as such."""
import torch
import triton
import triton.language as tl
from triton.language import maximum as tl_max2

fast_expf = tl.math.exp
tl_log2 = tl.log2
static_check = tl.static_assert  # the interpreter replaces this one with its own
hint = tl.multiple_of  # and this one


@triton.jit
def _log2_1p_exp(x):
    return tl_log2(fast_expf(x) + 1.0)


@triton.jit
def aliases_kernel(x_ptr, e_ptr, l_ptr, m_ptr, s_ptr, N: tl.constexpr):
    static_check(N == 64)
    offs = hint(tl.arange(0, N), 16)
    x = tl.load(x_ptr + offs)
    tl.store(e_ptr + offs, fast_expf(x))
    tl.store(l_ptr + offs, tl_log2(x))
    tl.store(m_ptr + offs, tl_max2(x, 1.0))
    tl.store(s_ptr + offs, _log2_1p_exp(x))


if __name__ == "__main__":
    x = torch.linspace(0.25, 4.0, 64)
    e, l, m, s = (torch.empty(64) for _ in range(4))
    aliases_kernel[(1,)](x, e, l, m, s, N=64)
    torch.testing.assert_close(e, torch.exp(x))
    torch.testing.assert_close(l, torch.log2(x))
    torch.testing.assert_close(m, torch.maximum(x, torch.tensor(1.0)))
    torch.testing.assert_close(s, torch.log2(torch.exp(x) + 1.0))
