"""libdevice functions taken from a copy of the libdevice module that the script executes itself
(`importlib.util.module_from_spec` + `exec_module`, as xformers' `libdevice_find` does to work across
releases): the copy's functions are empty stubs, which the compiler maps by their module's name to the
GPU's device library; so does the tool. Used by name (`rsqrt = copy.rsqrt`) and through the copy
(`copy.pow(...)`), in a kernel and in a @jit helper."""
import importlib.util

import torch
import triton
import triton.language as tl


def fresh_copy(name):
    spec = importlib.util.find_spec(name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ld = fresh_copy("triton.language.extra.libdevice")
rsqrt = ld.rsqrt


@triton.jit
def _cube(x):
    return ld.pow(x, 3.0)


@triton.jit
def libdevice_copy_kernel(x_ptr, r_ptr, p_ptr, N: tl.constexpr):
    offs = tl.arange(0, N)
    x = tl.load(x_ptr + offs)
    tl.store(r_ptr + offs, rsqrt(x))
    tl.store(p_ptr + offs, _cube(x))


if __name__ == "__main__":
    x = torch.linspace(0.25, 4.0, 64)
    r, p = torch.empty(64), torch.empty(64)
    libdevice_copy_kernel[(1,)](x, r, p, N=64)
    torch.testing.assert_close(r, torch.rsqrt(x))
    torch.testing.assert_close(p, x**3)
    print("libdevice copy ok")
