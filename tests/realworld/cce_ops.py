"""cut-cross-entropy (PyPI, 25.1.1): Apple's linear-cross-entropy kernels (the log-sum-exp forward, the
indexed dot, the backward with its torch.compile'd vocabulary sort), forward and backward on device="cuda"
in bfloat16, against torch's cross-entropy of the float32 logits."""

import torch
from cut_cross_entropy import linear_cross_entropy

torch.manual_seed(0)
N, D, V = 48, 64, 500  # sizes that are not multiples of one another: nothing equal by chance
e = torch.randn(N, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
c = torch.randn(V, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
t = torch.randint(0, V, (N,), device="cuda")
loss = linear_cross_entropy(e, c, t)
e32, c32 = e.detach().float().requires_grad_(), c.detach().float().requires_grad_()
ref = torch.nn.functional.cross_entropy(e32 @ c32.T, t)
torch.testing.assert_close(loss.float(), ref, rtol=1e-2, atol=1e-2)
loss.backward()
ref.backward()
torch.testing.assert_close(e.grad.float(), e32.grad, rtol=5e-2, atol=2e-3)
torch.testing.assert_close(c.grad.float(), c32.grad, rtol=5e-2, atol=2e-3)
print("cce ops ok")
