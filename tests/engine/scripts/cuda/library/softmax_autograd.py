"""A library's fused softmax, as libraries write one (Liger/unsloth style): a Triton forward and a
Triton backward behind a torch.autograd.Function, the backward sizing its grid from the device of the
incoming gradient, and the library's own test: forward and backward against torch, on "cuda"."""
import torch
import triton
import triton.language as tl


@triton.jit
def softmax_fwd_kernel(y_ptr, x_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)  # row * stride past 2**31 elements at large sizes
    offs = tl.arange(0, BLOCK)
    m = offs < n_cols
    x = tl.load(x_ptr + row * stride + offs, mask=m, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + offs, e / tl.sum(e, axis=0), mask=m)


@triton.jit
def softmax_bwd_kernel(dx_ptr, dy_ptr, y_ptr, stride, n_rows, n_cols, BLOCK: tl.constexpr):
    # A persistent grid (one program per SM, each taking every num_programs-th row), as tuned libraries launch.
    offs = tl.arange(0, BLOCK)
    m = offs < n_cols
    for row in tl.range(tl.program_id(0).to(tl.int64), n_rows, tl.num_programs(0)):
        y = tl.load(y_ptr + row * stride + offs, mask=m, other=0.0)
        dy = tl.load(dy_ptr + row * stride + offs, mask=m, other=0.0)
        dx = y * (dy - tl.sum(y * dy, axis=0))
        tl.store(dx_ptr + row * stride + offs, dx, mask=m)


class TritonSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.empty_like(x)
        n_rows, n_cols = x.shape
        softmax_fwd_kernel[(n_rows,)](y, x, x.stride(0), n_cols, BLOCK=triton.next_power_of_2(n_cols))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        assert dy.is_cuda and y.is_cuda, (dy.device, y.device)
        dy = dy.contiguous()
        sms = torch.cuda.get_device_properties(dy.device).multi_processor_count
        dx = torch.empty_like(dy)
        n_rows, n_cols = dy.shape
        softmax_bwd_kernel[(min(sms, n_rows),)](
            dx, dy, y, dy.stride(0), n_rows, n_cols, BLOCK=triton.next_power_of_2(n_cols)
        )
        return dx


def test_softmax_forward_and_backward(n_rows=300, n_cols=97):
    torch.manual_seed(0)
    x = torch.randn(n_rows, n_cols, device="cuda", requires_grad=True)
    w = torch.randn(n_rows, n_cols, device="cuda")
    y = TritonSoftmax.apply(x)
    (y * w).sum().backward()  # the gradient reaching backward is made by autograd's own mul
    ref_x = x.detach().clone().requires_grad_()
    ref = torch.softmax(ref_x, dim=-1)
    (ref * w).sum().backward()
    torch.testing.assert_close(y, ref)
    assert x.grad.is_cuda
    torch.testing.assert_close(x.grad, ref_x.grad)


if __name__ == "__main__":
    test_softmax_forward_and_backward()
    print("softmax forward and backward equal torch's")
