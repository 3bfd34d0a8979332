"""flash-attn's Triton ops (flash_attn/ops/triton; the sdist built with FLASH_ATTENTION_SKIP_CUDA_BUILD, only
the kernel modules imported), as its tests call them, on small `device="cuda"` inputs compared to torch,
forward and backward: the fused add + LayerNorm and RMSNorm (prenorm, residual), rotary embeddings
(interleaved or not, partial rotary dim, per-batch offsets) and the cross-entropy loss with label smoothing
and an ignored label."""

from _kernels_only import kernels_only

kernels_only("flash_attn")

import torch  # noqa: E402
from flash_attn.layers.rotary import apply_rotary_emb, apply_rotary_emb_torch  # noqa: E402
from flash_attn.ops.triton.cross_entropy import cross_entropy_loss  # noqa: E402
from flash_attn.ops.triton.layer_norm import layer_norm_fn, layer_norm_ref, rms_norm_ref  # noqa: E402

torch.manual_seed(0)
device = "cuda"


def leaves(*ts):
    return [t.detach().clone().requires_grad_() for t in ts]


# Add + LayerNorm / RMSNorm with the residual returned (prenorm), a width (72) not a power of two.
rows, d = 6, 72
for is_rms in (False, True):
    x, res, w, b = leaves(*(torch.randn(rows, d, device=device) for _ in range(2)), *torch.randn(2, d, device=device))
    xr, resr, wr, br = leaves(x, res, w, b)
    out, residual = layer_norm_fn(x, w, None if is_rms else b, residual=res, eps=1e-6, prenorm=True, is_rms_norm=is_rms)
    ref = rms_norm_ref if is_rms else layer_norm_ref
    out_ref, residual_ref = ref(xr, wr, None if is_rms else br, residual=resr, eps=1e-6, prenorm=True, upcast=True)
    torch.testing.assert_close(out, out_ref, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(residual, residual_ref, rtol=1e-5, atol=1e-5)
    g = torch.randn_like(out)
    (out * g).sum().backward()
    (out_ref * g).sum().backward()
    for got, want in ((x, xr), (res, resr), (w, wr)) + (() if is_rms else ((b, br),)):
        torch.testing.assert_close(got.grad, want.grad, rtol=1e-4, atol=1e-4)

# Rotary: batch 2, seqlen 13, 2 heads of 32, half the head rotated, offsets per batch row.
batch, seqlen, nheads, headdim = 2, 13, 2, 32
rotary_dim = headdim // 2
for interleaved in (False, True):
    x = torch.randn(batch, seqlen, nheads, headdim, device=device, requires_grad=True)
    (x_pt,) = leaves(x)
    angle = torch.rand(2 * seqlen, rotary_dim // 2, device=device) * 2 * torch.pi
    cos, sin = torch.cos(angle), torch.sin(angle)
    offsets = torch.tensor([0, 5], dtype=torch.int32, device=device)
    out = apply_rotary_emb(x, cos, sin, seqlen_offsets=offsets, interleaved=interleaved)
    idx = offsets[:, None].long() + torch.arange(seqlen, device=device)
    out_pt = apply_rotary_emb_torch(x_pt, cos[idx], sin[idx], interleaved=interleaved)
    torch.testing.assert_close(out, out_pt, rtol=1e-5, atol=1e-5)
    g = torch.randn_like(out)
    out.backward(g)
    out_pt.backward(g)
    torch.testing.assert_close(x.grad, x_pt.grad, rtol=1e-5, atol=1e-5)

# Cross entropy over a vocabulary of 100 with label smoothing and one ignored label.
logits = torch.randn(5, 100, device=device, requires_grad=True)
(logits_pt,) = leaves(logits)
labels = torch.tensor([3, 99, -100, 0, 42], device=device)
losses, _ = cross_entropy_loss(logits, labels, label_smoothing=0.1)
losses_pt = torch.nn.functional.cross_entropy(logits_pt, labels, reduction="none", label_smoothing=0.1)
torch.testing.assert_close(losses, losses_pt, rtol=1e-5, atol=1e-5)
g = torch.randn(5, device=device)
(losses * g).sum().backward()
(losses_pt * g).sum().backward()
torch.testing.assert_close(logits.grad, logits_pt.grad, rtol=1e-5, atol=1e-5)
print("flash attn ops ok")
