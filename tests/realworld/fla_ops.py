"""flash-linear-attention (fla-core from PyPI): the chunk-local cumulative sum and the L2 norm
forward kernels on small CPU inputs, compared to torch."""

import torch
from fla.modules.l2norm import l2norm_fwd
from fla.ops.utils.cumsum import chunk_local_cumsum

torch.manual_seed(0)
B, T, H, C = 1, 32, 2, 16
g = torch.randn(B, T, H)
out = chunk_local_cumsum(g, chunk_size=C)
ref = g.view(B, T // C, C, H).cumsum(2).view(B, T, H)
torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)

x = torch.randn(16, 64)
y = l2norm_fwd(x)
y = y[0] if isinstance(y, tuple) else y
torch.testing.assert_close(y, torch.nn.functional.normalize(x, dim=-1, eps=1e-6), rtol=1e-5, atol=1e-5)
print("fla ops ok")
