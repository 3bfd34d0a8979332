"""lmdeploy's Triton kernels (lmdeploy/pytorch/kernels/cuda, PyPI wheel 0.18.0; only the kernel modules imported:
`import lmdeploy` needs pydantic and transformers for its engine), as its tests call them, on small
`device="cuda"` inputs compared to torch. An inference engine's kernels, forward only (lmdeploy has no backward):
the fused add + RMSNorm, rotary embeddings of q and k, SiLU-and-mul, the fused MoE (top-2 of 4 experts),
multinomial sampling over sorted scores,
the paged KV-cache fill of a prefill and a decode batch, and the paged decoding attention over that cache. Its
prefill attention builds block pointers, which triton 3.9 removed: by_release/lmdeploy_prefill.py runs it on 3.6."""

from _lmdeploy_kernels import lmdeploy_kernels_only

lmdeploy_kernels_only()

import torch  # noqa: E402
from lmdeploy.pytorch.kernels.cuda.activation import silu_and_mul  # noqa: E402
from lmdeploy.pytorch.kernels.cuda.apply_rotary_pos_emb import apply_rotary_pos_emb  # noqa: E402
from lmdeploy.pytorch.kernels.cuda.fill_kv_cache import fill_kv_cache  # noqa: E402
from lmdeploy.pytorch.kernels.cuda.moe.fused_moe import fused_moe  # noqa: E402
from lmdeploy.pytorch.kernels.cuda.multinomial_sampling import multinomial_sampling  # noqa: E402
from lmdeploy.pytorch.kernels.cuda.pagedattention import flash_attn_with_kvcache  # noqa: E402
from lmdeploy.pytorch.kernels.cuda.rms_norm import rms_norm  # noqa: E402

torch.manual_seed(0)
device = "cuda"

# RMSNorm of 7 tokens of width 96 (not a power of two), float16, alone and with the residual added first.
x = torch.randn(7, 96, device=device, dtype=torch.float16)
w = torch.rand(96, device=device, dtype=torch.float16) + 0.5
res = torch.randn_like(x)


def rms_ref(t):
    t = t.float()
    return (t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + 1e-6) * w.float()).half()


torch.testing.assert_close(rms_norm(x, w, 1e-6), rms_ref(x), rtol=1e-3, atol=1e-3)
out, out_res = rms_norm(x, w, 1e-6, residual=res)
torch.testing.assert_close(out_res, x + res)
torch.testing.assert_close(out, rms_ref(x + res), rtol=1e-3, atol=1e-3)

# Rotary embeddings (rotate-half) of q (4 heads) and k (2 heads) of 64 for 9 tokens at their own positions.
seq, hq, hk, dim = 9, 4, 2, 64
q = torch.randn(seq, hq, dim, device=device, dtype=torch.float16)
k = torch.randn(seq, hk, dim, device=device, dtype=torch.float16)
pos = torch.tensor([0, 1, 2, 3, 0, 1, 7, 8, 9], device=device)
inv_freq = 1.0 / 10000 ** (torch.arange(0, dim, 2, device=device).float() / dim)
freqs = torch.outer(pos.float(), inv_freq)
emb = torch.cat((freqs, freqs), -1)
cos, sin = emb.cos().half(), emb.sin().half()


def rope_ref(t):
    half = t.float()[..., : dim // 2], t.float()[..., dim // 2 :]
    rotated = torch.cat((-half[1], half[0]), -1)
    return (t.float() * cos.float()[:, None] + rotated * sin.float()[:, None]).half()


q_embed, k_embed = apply_rotary_pos_emb(q, k, cos, sin)
torch.testing.assert_close(q_embed, rope_ref(q), rtol=1e-3, atol=2e-3)
torch.testing.assert_close(k_embed, rope_ref(k), rtol=1e-3, atol=2e-3)

# SiLU(gate) * up of a [gate | up] projection of 5 tokens, 2 x 80 wide.
gate_up = torch.randn(5, 160, device=device, dtype=torch.float16)
gate, up = gate_up.float().chunk(2, -1)
torch.testing.assert_close(silu_and_mul(gate_up), (torch.nn.functional.silu(gate) * up).half(), rtol=1e-3, atol=1e-3)

# Fused MoE: 6 tokens routed to 2 of 4 experts each ([gate | up] of 2 x 32 from 64, then down to 64), float16.
tokens, experts, hidden, inter, topk = 6, 4, 64, 32, 2
xm = torch.randn(tokens, hidden, device=device, dtype=torch.float16) / 4
w1 = torch.randn(experts, 2 * inter, hidden, device=device, dtype=torch.float16) / 8
w2 = torch.randn(experts, hidden, inter, device=device, dtype=torch.float16) / 8
topk_weights, topk_ids = torch.rand(tokens, experts, device=device).softmax(-1).topk(topk, dim=-1)
got = fused_moe(xm, w1, w2, topk_weights, topk_ids, topk=topk)
want = torch.zeros(tokens, hidden, device=device)
for t in range(tokens):
    for j in range(topk):
        e = int(topk_ids[t, j])
        g, u = (xm[t].float() @ w1[e].float().T).chunk(2)
        want[t] += topk_weights[t, j] * ((torch.nn.functional.silu(g) * u) @ w2[e].float().T)
torch.testing.assert_close(got.float(), want, rtol=2e-2, atol=2e-2)

# Multinomial sampling over scores sorted in descending order: rows whose mass is all on one token sample it;
# a row of 300 tokens (three blocks of the kernel) samples a token of its own row.
scores = torch.zeros(3, 300, device=device)
scores[0, 0] = scores[1, 1] = 1.0
scores[2] = torch.linspace(1.0, 0.1, 300, device=device)
scores[2] /= scores[2].sum()
indices = torch.stack([torch.randperm(300, device=device) for _ in range(3)])
seeds = torch.tensor([11, 22, 33], device=device)
offsets = torch.tensor([0, 5, 9], device=device)
picked = multinomial_sampling(scores, seeds, offsets, indices)
assert picked[0] == indices[0, 0] and picked[1] == indices[1, 1], (picked, indices[:2, :2])
assert picked[2] in indices[2], picked

# Paged KV cache, blocks of 16: a prefill of 3 sequences (5, 12 and 20 new tokens after 0, 3 and 29 cached
# ones), then one decode token each, and the decoding attention of one query per sequence over its cache.
block, heads, hd = 16, 2, 32


def fill_and_check(new_lens, history, k_cache, v_cache, block_offsets):
    kv_lens = [n + h for n, h in zip(new_lens, history)]
    k_new = torch.rand(sum(new_lens), heads, hd, device=device)
    v_new = torch.rand_like(k_new)
    q_len = torch.tensor(new_lens, device=device)
    want_k, want_v = k_cache.clone(), v_cache.clone()
    for b, (ks, vs) in enumerate(zip(k_new.split(new_lens), v_new.split(new_lens))):
        for i in range(len(ks)):
            p = history[b] + i
            want_k[block_offsets[b, p // block], p % block] = ks[i]
            want_v[block_offsets[b, p // block], p % block] = vs[i]
    fill_kv_cache(
        k_new,
        v_new,
        k_cache,
        v_cache,
        q_len.cumsum(0) - q_len,
        q_len,
        torch.tensor(kv_lens, device=device),
        max(new_lens),
        block_offsets,
    )
    torch.testing.assert_close(k_cache, want_k)
    torch.testing.assert_close(v_cache, want_v)
    return kv_lens


new_lens, history = [5, 12, 20], [0, 3, 29]
max_blocks = max(-(-(n + h + 1) // block) for n, h in zip(new_lens, history))
num_blocks = 3 * max_blocks
block_offsets = torch.randperm(num_blocks, device=device).view(3, max_blocks)  # each sequence's blocks, scattered
k_cache = torch.zeros(num_blocks, block, heads, hd, device=device)
v_cache = torch.zeros_like(k_cache)
kv_lens = fill_and_check(new_lens, history, k_cache, v_cache, block_offsets)
kv_lens = fill_and_check([1, 1, 1], kv_lens, k_cache, v_cache, block_offsets)

hq_decode = 4  # 2 query heads per KV head
q = torch.randn(3, hq_decode, hd, device=device)
cache_seqlens = torch.tensor(kv_lens, device=device)
out = flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens, block_offsets)
for b in range(3):
    rows = torch.arange(kv_lens[b], device=device)
    kb = k_cache[block_offsets[b, rows // block], rows % block]  # (kv_len, heads, hd)
    vb = v_cache[block_offsets[b, rows // block], rows % block]
    kb, vb = (t.repeat_interleave(hq_decode // heads, dim=1).transpose(0, 1) for t in (kb, vb))
    want = torch.nn.functional.scaled_dot_product_attention(q[b][:, None], kb, vb)[:, 0]
    # tl.dot of float32 tiles runs in TF32 on the GPU (and under the tool): about 1e-3 of the scores' scale.
    torch.testing.assert_close(out[b], want, rtol=1e-2, atol=1e-2)
print("lmdeploy ops ok")
