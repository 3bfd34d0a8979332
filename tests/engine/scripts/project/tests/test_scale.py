import torch

from kernels import scale_kernel


def test_small():
    x = torch.rand(100)
    out = torch.empty(100)
    scale_kernel[(1,)](x, out, 100, BLOCK=128)
    assert torch.allclose(out, 2 * x)


def test_large():
    x = torch.rand(1000)
    out = torch.empty(1000)
    scale_kernel[(8,)](x, out, 1000, BLOCK=128)
