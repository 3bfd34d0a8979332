"""lmdeploy's varlen prefill attention (lmdeploy/pytorch/kernels/cuda/flashattention.py, PyPI wheel 0.18.0; only
the kernel modules imported) as its tests call it: 3 sequences of 5, 12 and 20 tokens packed, causal, 4 query
heads over 2 KV heads of 32, float16 on device="cuda", against torch's attention. The kernel builds block
pointers (tl.make_block_ptr), which triton 3.9 removed: it runs on 3.6."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/realworld: the import helpers

from _lmdeploy_kernels import lmdeploy_kernels_only  # noqa: E402

lmdeploy_kernels_only()

import torch  # noqa: E402
from lmdeploy.pytorch.kernels.cuda.flashattention import flash_attn_varlen_func  # noqa: E402

torch.manual_seed(0)
device = "cuda"

lens = [5, 12, 20]
cu = torch.tensor([0, 5, 17, 37], device=device, dtype=torch.int32)
q = torch.randn(37, 4, 32, device=device, dtype=torch.float16)
k = torch.randn(37, 2, 32, device=device, dtype=torch.float16)
v = torch.randn(37, 2, 32, device=device, dtype=torch.float16)
out = flash_attn_varlen_func(q, k, v, cu, cu, max_seqlen_q=20, max_seqlen_k=20, causal=True, kv_layout="shd")
for s, n in zip(cu[:-1].tolist(), lens):
    qs, ks, vs = (t[s : s + n].float().transpose(0, 1) for t in (q, k, v))
    ks, vs = ks.repeat_interleave(2, dim=0), vs.repeat_interleave(2, dim=0)
    want = torch.nn.functional.scaled_dot_product_attention(qs, ks, vs, is_causal=True).transpose(0, 1)
    torch.testing.assert_close(out[s : s + n].float(), want, rtol=2e-3, atol=2e-3)
print("lmdeploy prefill ok")
