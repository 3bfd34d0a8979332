"""conch-triton-kernels (PyPI): SiLU-and-mul, GeLU-tanh-and-mul, RMSNorm (plain and fused-add) and static
fp8 quantization on small CPU inputs, compared to torch. The fp8 kernel checks the GPU's rounding."""

import torch
from conch.ops.activation.gelu_tanh_and_mul import gelu_tanh_and_mul
from conch.ops.activation.silu_and_mul import silu_and_mul
from conch.ops.normalization.rms_norm import fused_add_rms_norm, rms_norm
from conch.ops.quantization.fp8 import scaled_fp8_quant

torch.manual_seed(0)
x = torch.randn(5, 2 * 48)
a, b = x[:, :48], x[:, 48:]
torch.testing.assert_close(silu_and_mul(x), torch.nn.functional.silu(a) * b, rtol=1e-5, atol=1e-5)
torch.testing.assert_close(
    gelu_tanh_and_mul(x), torch.nn.functional.gelu(a, approximate="tanh") * b, rtol=1e-5, atol=1e-5
)

h = torch.randn(6, 64)
w = torch.randn(64)


def ref_rms(t):
    return t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + 1e-6) * w


torch.testing.assert_close(rms_norm(h, w, 1e-6), ref_rms(h), rtol=1e-5, atol=1e-5)
res = torch.randn(6, 64)
ref_res = h + res
out, new_res = fused_add_rms_norm(h.clone(), res.clone(), w, 1e-6)
torch.testing.assert_close(new_res, ref_res, rtol=1e-6, atol=1e-6)
torch.testing.assert_close(out, ref_rms(ref_res), rtol=1e-5, atol=1e-5)

q_in = torch.randn(4, 64) * 30
scale = torch.tensor([0.25])
q, _ = scaled_fp8_quant(q_in, scale)
ref_q = (q_in / scale).clamp(-448, 448).to(torch.float8_e4m3fn)
assert torch.equal(q.view(torch.uint8), ref_q.view(torch.uint8)), (q.float() - ref_q.float()).abs().max()
print("conch ops ok")
