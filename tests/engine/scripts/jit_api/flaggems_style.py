"""What FlagGems does around its kernels, in our own words: the JITFunction type taken from
triton.runtime.jit and asked of every kernel (pointwise_dynamic), a kernel's cache_key for a kernel that
calls a device-library function through a module-level alias (`erf = libdevice.erf`), and a pointer
argument that is no torch tensor but an object with data_ptr() and a dtype over a tensor's memory
(its StridedBuffer)."""

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice
from triton.runtime.jit import JITFunction

erf = libdevice.erf


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, 0.5 * x * (1 + erf(x * 0.7071067811865476)), mask=mask)


class Buffer:
    """A tensor's memory with another offset: data_ptr() and dtype, as a compiled kernel takes it."""

    def __init__(self, base, offset, n):
        self._base, self.dtype, self.offset = base, base.dtype, offset
        self.shape, self._strides = (n,), (1,)
        self.device = base.device

    def data_ptr(self):
        return self._base.data_ptr() + self.offset * self.dtype.itemsize

    def stride(self):
        return self._strides


assert isinstance(gelu_kernel, JITFunction), type(gelu_kernel)
key = gelu_kernel.cache_key
assert isinstance(key, str) and key == gelu_kernel.cache_key

n = 300
x = torch.randn(n + 100)
out = torch.zeros(n + 100)
gelu_kernel[(triton.cdiv(n, 128),)](Buffer(x, 100, n), Buffer(out, 100, n), n, BLOCK=128)
torch.testing.assert_close(out[100:], torch.nn.functional.gelu(x[100:]))
assert not out[:100].any()
print("flaggems style ok")
