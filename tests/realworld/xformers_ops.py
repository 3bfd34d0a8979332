"""xformers' Triton kernels (PyPI wheel 0.0.35; its _C extension is built for a CUDA torch and does not load here,
which xformers only warns about: the Triton ops are Python), as its own tests call them, on small `device="cuda"`
inputs compared to torch: RMSNorm and the fused add + RMSNorm, the padded RoPE that also fills the KV cache
(adjacent and split halves), the scaled index_add and the index_select + cat (forward and backward), the tiled
matmul (a torch.library custom op with its autograd, forward and backward; one autotune config, as xformers'
test keeps). Its split-K decoding attention emits block pointers, which triton 3.9 removed: by_release/
xformers_splitk.py runs it on triton 3.6."""

import random
import sys

# This venv's flash-attn (tests/realworld's install) is built without its CUDA extension, and xformers.ops imports
# flash_attn whenever it is installed: hide it, as on a machine without flash-attn.
sys.modules["flash_attn"] = None  # type: ignore[assignment]

import torch  # noqa: E402
import xformers.ops as xops  # noqa: E402
from xformers.ops.fmha.attn_bias import BlockDiagonalCausalWithOffsetPaddedKeysMask  # noqa: E402

torch.manual_seed(0)
device = "cuda"


def rms_ref(x, w, eps=1e-6):
    y = x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps)
    return (y * w if w is not None else y).to(x.dtype)


# RMSNorm over a width of 273 (not a power of two), with and without a weight; then x += y fused with the norm.
K = 273
x = torch.rand(3, 5, K, device=device)
for include_weight in (True, False):
    layer = xops.RMSNorm(K, include_weight=include_weight).to(device)
    if include_weight:
        torch.nn.init.normal_(layer.weight)
    with torch.no_grad():
        got = layer(x)
        torch.testing.assert_close(got, rms_ref(x, layer.weight), rtol=1e-5, atol=1e-6)
        x2, y2 = x.clone(), torch.rand_like(x)
        got = layer.increment_and_forward_(x2, y2)
        torch.testing.assert_close(x2, x + y2)
        torch.testing.assert_close(got, rms_ref(x + y2, layer.weight), rtol=1e-5, atol=1e-6)


def rope_ref(t, pos, adjacents, theta=10000.0):
    dim = t.shape[-1]
    freqs = theta ** -(torch.arange(0, dim, 2, device=t.device, dtype=torch.float64) / dim)
    angle = torch.outer(pos.double(), freqs)[:, None]  # (M, 1, dim/2)
    shape = (-1, 2) if adjacents else (2, -1)
    a, b = t[0].double().unflatten(-1, shape).unbind(-1 if adjacents else -2)
    ra, rb = a * angle.cos() - b * angle.sin(), a * angle.sin() + b * angle.cos()
    return torch.stack((ra, rb), -1 if adjacents else -2).flatten(-2)[None].to(t.dtype)


# Padded RoPE for a decode batch of 3 sequences (2, 1 and 1 new queries) into a KV cache padded to 20 per sequence.
heads, kvheads, dim, padding = 4, 2, 32, 20
nqueries, cache_lens = [2, 1, 1], [7, 15, 10]
bias = BlockDiagonalCausalWithOffsetPaddedKeysMask.from_seqlens(
    q_seqlen=nqueries, kv_padding=padding, kv_seqlen=cache_lens
)
bias = bias.to(device) if hasattr(bias, "to") else bias
seqpos = torch.tensor([cache_lens[0] - 2, cache_lens[0] - 1, cache_lens[1] - 1, cache_lens[2] - 1], device=device)
cache_locs = [seqpos[0], seqpos[1], padding + seqpos[2], 2 * padding + seqpos[3]]
for adjacents in (True, False):
    cache_k = torch.rand(1, 3 * padding, kvheads, dim, device=device)
    cache_v = torch.rand_like(cache_k)
    xq = torch.rand(1, 4, heads, dim, device=device)
    xk = torch.rand(1, 4, kvheads, dim, device=device)
    xv = torch.rand(1, 4, kvheads, dim, device=device)
    k0, v0 = cache_k.clone(), cache_v.clone()
    out = xops.rope_padded(xq, xk, xv, cache_k, cache_v, bias, adjacents=adjacents)
    torch.testing.assert_close(out, rope_ref(xq, seqpos, adjacents), rtol=1e-5, atol=5e-3)
    torch.testing.assert_close(cache_k[:, cache_locs], rope_ref(xk, seqpos, adjacents), rtol=1e-5, atol=5e-3)
    torch.testing.assert_close(cache_v[:, cache_locs], xv)
    cache_k[:, cache_locs], cache_v[:, cache_locs] = k0[:, cache_locs], v0[:, cache_locs]
    assert torch.equal(cache_k, k0) and torch.equal(cache_v, v0)  # nothing else written

# scaled_index_add: out = inp; out[index] += alpha * scaling * src, forward and backward, float16.
B_out, M, D = 10, 3, 48
inp = torch.randn(B_out, M, D, device=device, dtype=torch.float16, requires_grad=True)
src = torch.randn(6, M, D, device=device, dtype=torch.float16, requires_grad=True)
scaling = torch.randn(D, device=device, dtype=torch.float16, requires_grad=True)
order = list(range(B_out))
random.Random(0).shuffle(order)
index = torch.tensor(order[:6], device=device)
leaves = (inp, src, scaling)
refs = [t.detach().clone().requires_grad_() for t in leaves]
ref = torch.index_add(refs[0].float(), 0, index, refs[2].float() * refs[1].float(), alpha=0.73).half()
g = torch.randn_like(ref)
ref.backward(g)
out = xops.scaled_index_add(inp.clone(), index, src, scaling, 0.73)
torch.testing.assert_close(out, ref, rtol=1e-3, atol=4e-3)
out.backward(g)
for got, want, tol in zip(leaves, refs, (1e-5, 1e-5, 5e-2)):
    torch.testing.assert_close(got.grad, want.grad, rtol=tol, atol=tol)

# index_select_cat: rows picked from two sources, concatenated and flattened; its backward scatters the grads.
src = torch.randn(8 * 3 + 6 * 2, 40, device=device, dtype=torch.float16, requires_grad=True)
sources = [src[:24].reshape(8, 3 * 40), src[24:].reshape(6, 2 * 40)]
indices = [torch.tensor([5, 0, 7, 2], device=device), torch.tensor([1, 4, 3], device=device)]
ref = torch.cat([s[i].flatten() for s, i in zip(sources, indices)])
g = torch.randn_like(ref)
ref.backward(g)
ref_grad, src.grad = src.grad.clone(), None
out = xops.index_select_cat(sources, indices)
torch.testing.assert_close(out, ref)
out.backward(g)
torch.testing.assert_close(src.grad, ref_grad)

# Tiled matmul: A as 2x2 tiles (each its own strides), B as 2x3, forward and backward through the custom op.
from xformers.ops._triton.tiled_matmul_kernels import _xformers_tiled_matmul_kernel  # noqa: E402
from xformers.ops.tiled_matmul import tiled_matmul  # noqa: E402

del _xformers_tiled_matmul_kernel.configs[1:]  # as xformers' test does: one config, correctness not speed
m_tiles, k_tiles, n_tiles = [9, 20], [17, 6], [5, 12, 30]
a = torch.randn(sum(m_tiles), sum(k_tiles), device=device, requires_grad=True)
b = torch.randn(sum(k_tiles), sum(n_tiles), device=device, requires_grad=True)
a_tiled = [[t.t().clone().t() for t in row.split(k_tiles, dim=1)] for row in a.split(m_tiles, dim=0)]
b_tiled = [list(row.split(n_tiles, dim=1)) for row in b.split(k_tiles, dim=0)]
c = torch.cat([torch.cat(row, dim=1) for row in tiled_matmul(a_tiled, b_tiled)], dim=0)
ar, br = (t.detach().clone().requires_grad_() for t in (a, b))
c_ref = ar @ br
# tl.dot of float32 tiles runs in TF32 on the GPU (and under the tool): 10-bit mantissas over sums of 23.
torch.testing.assert_close(c, c_ref, rtol=1e-2, atol=2e-2)
g = torch.randn_like(c)
c.backward(g)
c_ref.backward(g)
torch.testing.assert_close(a.grad, ar.grad, rtol=1e-2, atol=5e-2)
torch.testing.assert_close(b.grad, br.grad, rtol=1e-2, atol=5e-2)

print("xformers ops ok")
