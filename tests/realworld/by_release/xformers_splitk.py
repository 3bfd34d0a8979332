"""xformers' split-K decoding attention (fmha.triton_splitk, PyPI wheel 0.0.35) as its tests call it: one query per
sequence over a KV cache, float16 on device="cuda", through memory_efficient_attention_forward, against torch's
attention. Its kernel builds block pointers (tl.make_block_ptr), which triton 3.9 removed: it runs on 3.6."""

import sys

# This venv's flash-attn (tests/realworld's install) is built without its CUDA extension, and xformers.ops imports
# flash_attn whenever it is installed: hide it, as on a machine without flash-attn.
sys.modules["flash_attn"] = None  # type: ignore[assignment]

import torch  # noqa: E402
from xformers.ops import fmha  # noqa: E402

torch.manual_seed(0)
device = "cuda"

# 2 sequences of 1 query each over a KV cache of 300 keys, 4 heads of 64: split in 4 (xformers picks it), then merged.
bsz, kv_len, nh, hd = 2, 300, 4, 64
q = torch.randn(bsz, 1, nh, hd, device=device, dtype=torch.float16)
k = torch.randn(bsz, kv_len, nh, hd, device=device, dtype=torch.float16)
v = torch.randn(bsz, kv_len, nh, hd, device=device, dtype=torch.float16)
# fmha refuses every CUDA input when xformers' _C did not load ("xFormers wasn't build with CUDA support": the
# wheel's is built for torch 2.10+cu128), though this op is Triton alone: as with a _C that matches torch.
fmha.common._built_with_cuda = True
out = fmha.memory_efficient_attention_forward(q, k, v, op=fmha.triton_splitk.FwOp)
ref = torch.nn.functional.scaled_dot_product_attention(*(t.transpose(1, 2).float() for t in (q, k, v))).transpose(1, 2)
torch.testing.assert_close(out.float(), ref, rtol=2e-3, atol=2e-3)
print("xformers splitk ok")
