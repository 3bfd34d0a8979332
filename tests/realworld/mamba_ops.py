"""mamba-ssm's Triton ops (PyPI, built with MAMBA_SKIP_CUDA_BUILD: only the kernel modules imported), as its
own tests call them, on small `device="cuda"` inputs compared to the library's torch references:
selective_state_update (one decode step, the state updated in place), the gated RMSNorm forward and
backward, and the SSD chunked scan (mamba_chunk_scan_combined) forward and backward."""

from _kernels_only import kernels_only

kernels_only("mamba_ssm")

import torch  # noqa: E402
from mamba_ssm.ops.triton.layernorm_gated import rms_norm_ref, rmsnorm_fn  # noqa: E402
from mamba_ssm.ops.triton.selective_state_update import (  # noqa: E402
    selective_state_update,
    selective_state_update_ref,
)
from mamba_ssm.ops.triton.ssd_combined import mamba_chunk_scan_combined, ssd_chunk_scan_combined_ref  # noqa: E402

torch.manual_seed(0)
device = "cuda"

# selective_state_update: dim 48 is not a multiple of the kernel's BLOCK_SIZE_M (32 for dstate 16).
batch, dim, dstate = 2, 48, 16
state = torch.randn(batch, dim, dstate, device=device)
x = torch.randn(batch, dim, device=device)
dt = torch.randn(batch, dim, device=device)
dt_bias = torch.rand(dim, device=device) - 4.0
A = -torch.rand(dim, dstate, device=device) - 1.0
B = torch.randn(batch, dstate, device=device)
C = torch.randn(batch, dstate, device=device)
D = torch.randn(dim, device=device)
z = torch.randn_like(x)
state_ref = state.detach().clone()
out = selective_state_update(state, x, dt, A, B, C, D=D, z=z, dt_bias=dt_bias, dt_softplus=True)
out_ref = selective_state_update_ref(state_ref, x, dt, A, B, C, D=D, z=z, dt_bias=dt_bias, dt_softplus=True)
torch.testing.assert_close(state, state_ref, rtol=1e-4, atol=1e-4)
torch.testing.assert_close(out, out_ref, rtol=1e-4, atol=1e-4)

# Gated RMSNorm, groups of 16 over a 48 width, forward and backward.
d, group_size = 48, 16
xn = torch.randn(2, 3, d, device=device, requires_grad=True)
zn = torch.randn(2, 3, d, device=device, requires_grad=True)
w = torch.randn(d, device=device, requires_grad=True)
xr, zr, wr = (t.detach().clone().requires_grad_() for t in (xn, zn, w))
y = rmsnorm_fn(xn, w, None, z=zn, eps=1e-6, group_size=group_size, norm_before_gate=True)
y_ref = rms_norm_ref(xr, wr, None, z=zr, eps=1e-6, group_size=group_size, norm_before_gate=True)
torch.testing.assert_close(y, y_ref, rtol=1e-4, atol=1e-4)
g = torch.randn_like(y)
y.backward(g)
y_ref.backward(g)
for got, want in ((xn, xr), (zn, zr), (w, wr)):
    torch.testing.assert_close(got.grad, want.grad, rtol=1e-4, atol=1e-4)

# SSD chunked scan: 2 chunks of 16, 2 heads of 16, one group, forward and backward.
b, seqlen, chunk, nheads, headdim, ngroups, ds = 1, 32, 16, 2, 16, 1, 16
xs = torch.randn(b, seqlen, nheads, headdim, device=device)
dts = torch.nn.functional.softplus(torch.randn(b, seqlen, nheads, device=device) - 4).requires_grad_()
As = (-torch.exp(torch.rand(nheads, device=device))).requires_grad_()
Bs = torch.randn(b, seqlen, ngroups, ds, device=device)
Cs = torch.randn(b, seqlen, ngroups, ds, device=device)
Ds = torch.randn(nheads, device=device)
xs.requires_grad_()
Bs.requires_grad_()
Cs.requires_grad_()
leaves = (xs, dts, As, Bs, Cs)
refs = tuple(t.detach().clone().requires_grad_() for t in leaves)
y = mamba_chunk_scan_combined(xs, dts, As, Bs, Cs, chunk, D=Ds)
y_ref = ssd_chunk_scan_combined_ref(*refs, chunk, D=Ds)


def close(got, want):
    # The chunk scan's tl.dot of float32 tiles runs in TF32, as on the GPU (10-bit mantissas: about 1e-3 of
    # the values' scale over these sums), against a reference in IEEE float32.
    torch.testing.assert_close(got, want, rtol=1e-2, atol=2e-3 * want.abs().max().item())


close(y, y_ref)
g = torch.randn_like(y)
y.backward(g)
y_ref.backward(g)
for got, want in zip(leaves, refs):
    close(got.grad, want.grad)
print("mamba ops ok")
