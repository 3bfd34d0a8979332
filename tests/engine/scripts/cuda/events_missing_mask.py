"""A GPU user's timing script with CUDA events and .cuda() / .to("cuda"), whose kernel forgot its mask:
the last program reads and writes past the end of the tensors (1000 elements, blocks of 256)."""
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    x = tl.load(x_ptr + offs)
    tl.store(out_ptr + offs, x * 2.0)


if __name__ == "__main__":
    assert torch.cuda.is_available(), "this script needs a GPU"
    torch.cuda.set_device(0)
    x = torch.arange(1000, dtype=torch.float32).cuda()
    out = torch.zeros(1000).to("cuda")
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    scale_kernel[(triton.cdiv(1000, 256),)](x, out, 1000, B=256)
    end.record()
    torch.cuda.synchronize()
    print(f"{start.elapsed_time(end):.3f} ms on {torch.cuda.get_device_name(0)}")
    assert torch.equal(out.cpu(), x.cpu() * 2)
