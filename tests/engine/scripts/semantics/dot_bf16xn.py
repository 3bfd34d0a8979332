"""tl.dot of float32 tiles at the bfloat16-split precisions (triton 3.6+ on NVIDIA): bf16x3 keeps about
16 bits of each product, bf16x6 about float32's 24. Run on the GPU and under the tool, the outputs match."""
import torch
import triton
import triton.language as tl


@triton.jit
def dot_at(a_ptr, b_ptr, out_ptr, PRECISION: tl.constexpr, N: tl.constexpr):
    i = tl.arange(0, N)
    a = tl.load(a_ptr + i[:, None] * N + i[None, :])
    b = tl.load(b_ptr + i[:, None] * N + i[None, :])
    c = tl.dot(a, b, input_precision=PRECISION)
    tl.store(out_ptr + i[:, None] * N + i[None, :], c)


if __name__ == "__main__":
    torch.manual_seed(0)
    a, b = torch.randn(32, 32), torch.randn(32, 32)
    exact = a.double() @ b.double()
    errors = {}
    for precision in ("tf32", "bf16x3", "bf16x6", "ieee"):
        out = torch.empty(32, 32)
        dot_at[(1,)](a, b, out, PRECISION=precision, N=32)
        errors[precision] = (out.double() - exact).abs().max().item()
    print({k: f"{v:.2e}" for k, v in errors.items()})
    assert errors["bf16x6"] < 1e-4 < errors["tf32"], errors
    assert errors["bf16x3"] < errors["tf32"], errors
