import torch, triton, triton.language as tl
@triton.jit
def k(x_ptr, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(x_ptr + o, tl.load(x_ptr + o, mask=o < n) + 1, mask=o < n)
if __name__ == "__main__":
    x = torch.zeros(100)
    k[(1,)](x, 100, B=128)
    hog = []
    while True:
        hog.append(bytearray(256 * 1024 * 1024))
