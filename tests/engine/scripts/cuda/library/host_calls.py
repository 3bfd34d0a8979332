"""What libraries call on the host around their kernels: pinned staging buffers copied with
non_blocking=True, the raw CUDA stream handle, and kernels launched from a thread pool."""
from concurrent.futures import ThreadPoolExecutor

import torch
import triton
import triton.language as tl


@triton.jit
def add_one_kernel(x_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    m = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=m) + 1, mask=m)


def add_one(x):
    stream = torch._C._cuda_getCurrentRawStream(x.device.index)  # as vLLM/xformers pass it to launches
    assert isinstance(stream, int)
    n = x.numel()
    add_one_kernel[(triton.cdiv(n, 64),)](x, n, B=64)
    return x


def test_pinned_copy_and_stream(n=200):
    host = torch.arange(n, dtype=torch.float32, pin_memory=True)
    x = host.to("cuda", non_blocking=True)
    assert x.is_cuda
    add_one(x)
    back = torch.empty(n, pin_memory=True)
    back.copy_(x, non_blocking=True)
    torch.cuda.synchronize()
    torch.testing.assert_close(back, torch.arange(n, dtype=torch.float32) + 1)


def test_kernels_from_threads(n=100):
    xs = [torch.zeros(n, device="cuda") for _ in range(3)]
    with ThreadPoolExecutor(max_workers=3) as pool:
        outs = list(pool.map(add_one, xs))
    for out in outs:
        assert out.is_cuda
        torch.testing.assert_close(out, torch.ones(n, device="cuda"))


if __name__ == "__main__":
    test_pinned_copy_and_stream()
    test_kernels_from_threads()
    print("host calls work")
