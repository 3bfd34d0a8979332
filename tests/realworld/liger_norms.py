"""Liger-Kernel's RMSNorm, LayerNorm and SwiGLU/GeGLU forward kernels (installed from PyPI) on small CPU
inputs, compared to torch. RMSNorm passes `eps` as a Python float and calls `eps.to(tl.float32)`-style
code paths that need the JIT's scalar types."""

import torch
from liger_kernel.ops.geglu import geglu_forward
from liger_kernel.ops.layer_norm import layer_norm_forward
from liger_kernel.ops.rms_norm import rms_norm_forward
from liger_kernel.ops.swiglu import swiglu_forward

torch.manual_seed(0)
x = torch.randn(6, 96)
w = torch.randn(96)
b = torch.randn(96)

y = rms_norm_forward(x, w, 1e-6, 0.0, "llama", False)[0]
ref = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
torch.testing.assert_close(y, ref, rtol=1e-5, atol=1e-5)

y = layer_norm_forward(x, w, b, 1e-5)[0]
torch.testing.assert_close(y, torch.nn.functional.layer_norm(x, (96,), w, b, 1e-5), rtol=1e-5, atol=1e-5)

a, g = torch.randn(4, 80), torch.randn(4, 80)
_, _, c = swiglu_forward(a, g)
torch.testing.assert_close(c, torch.nn.functional.silu(a) * g, rtol=1e-5, atol=1e-5)

_, _, c = geglu_forward(a, g)
torch.testing.assert_close(c, torch.nn.functional.gelu(a, approximate="tanh") * g, rtol=1e-5, atol=1e-5)
print("liger norms ok")
