"""gemlite (PyPI, 0.6.0.post2): low-bit GEMM/GEMV kernels, on device="cuda" as its README uses them. An
8-bit channel-wise A16W8 layer built from a torch Linear, and a 4-bit grouped HQQ-format layer at one row
(the GEMV RevSplit-K kernel) and 16 rows (the split-K GEMM), each against torch. Every autotune config
gemlite lists is run (the tool records them all)."""

import torch
from gemlite import DType, GemLiteLinear
from gemlite.helper import A16W8_INT8

torch.manual_seed(0)
device, dtype = "cuda:0", torch.float16

layer = torch.nn.Linear(256, 128, bias=False, device=device, dtype=dtype)
x = torch.randn(4, 256, device=device, dtype=dtype)
ref = layer(x).float()
w8 = A16W8_INT8(device=device, dtype=dtype).from_linear(layer)  # frees the layer's weight
out = w8(x).float()
torch.testing.assert_close(out, ref, rtol=2e-2, atol=2e-2)

# 4-bit weights in the HQQ format: (W_q - zeros) * scales ~= W, one scale and zero per 64 columns
bits, group, K, N = 4, 64, 256, 128
W_q = torch.randint(0, 2**bits, (N, K), device=device).to(torch.uint8)
scales = torch.rand(N, K // group, device=device, dtype=dtype) * 0.01
zeros = torch.full((N, K // group), 7.0, device=device, dtype=dtype)
w4 = GemLiteLinear(
    bits, group_size=group, in_features=K, out_features=N, input_dtype=DType.FP16, output_dtype=DType.FP16
)
w4.pack(W_q, scales, zeros, None)
W = ((W_q.float().view(N, K // group, group) - zeros.float()[..., None]) * scales.float()[..., None]).view(N, K)
for M in (1, 16):  # GEMV RevSplit-K for one row, split-K GEMM for 16
    x = torch.randn(M, K, device=device, dtype=dtype)
    torch.testing.assert_close(w4(x).float(), x.float() @ W.T, rtol=1e-2, atol=1e-2)
print("gemlite ops ok")
