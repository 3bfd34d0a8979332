"""FlagGems' own kernels as its users call them: `import flag_gems` (its vendor detection runs
nvidia-smi) and aten ops replaced by its Triton kernels under `flag_gems.use_gems()` (pointwise_dynamic's
generated kernels, reached through libentry, with StridedBuffer pointer arguments), on device="cuda",
against torch. FlagGems 5.0.2 generates block-pointer code, which triton 3.9 no longer compiles."""

import flag_gems
import torch

x = torch.randn(1000, device="cuda")
y = torch.randn(1000, device="cuda")
m = torch.randn(37, 300, device="cuda")
with flag_gems.use_gems():
    a = torch.abs(x)
    b = torch.add(x, y)
    c = torch.softmax(m, dim=1)
    d = torch.mul(m, 2.0)
torch.testing.assert_close(a, x.abs())
torch.testing.assert_close(b, x + y)
torch.testing.assert_close(c, torch.softmax(m, dim=1))
torch.testing.assert_close(d, m * 2.0)
print("flaggems ops ok")
