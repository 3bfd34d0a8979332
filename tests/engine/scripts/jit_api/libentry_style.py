"""A library wrapper around @triton.jit in the manner of FlagGems' libentry (written for this test): it
finds the JITFunction under an autotuner by walking `.fn`, reads its `params`, `signature`, `src` and
`cache_key`, runs the first call of each key through `JITFunction.run` and keeps what that returns (the
compiled kernel), and launches that directly on later calls, with the arguments the release's compiled kernel takes."""
import inspect

import torch
import triton
import triton.language as tl


# What the compiled kernel is launched with: every argument on triton 3.3+ (3.6, on an H200, refuses
# fewer), only those that are not constexprs on 3.2 (its JITFunction.run passes those).
ALL_ARGS = tuple(int(v) for v in triton.__version__.split(".")[:2]) >= (3, 3)


class LibEntry(triton.KernelInterface):
    def __init__(self, fn):
        self.fn = fn
        self.arg_names = fn.arg_names
        jit = fn
        while not isinstance(jit, triton.runtime.JITFunction):
            jit = jit.fn  # an Autotuner, Heuristics: the kernel they wrap
        self.jit = jit
        assert isinstance(jit.signature, inspect.Signature)
        assert f"def {jit.__name__}(" in jit.src and isinstance(jit.cache_key, str)
        self.launch_args = [p.name for p in jit.params if ALL_ARGS or not p.is_constexpr]
        self.cache = {}

    def run(self, *args, grid, warmup=False, **kwargs):
        bound = dict(zip(self.arg_names, args), **kwargs)
        key = tuple(str(v.dtype) if hasattr(v, "dtype") else v for v in bound.values())
        if key not in self.cache:
            kernel = self.fn.run(*args, grid=grid, warmup=warmup, **kwargs)
            tuned = self.fn.best_config.kwargs if isinstance(self.fn, triton.runtime.Autotuner) else {}
            self.cache[key] = kernel, tuned  # the config's constexprs, for the grid of later calls
            return kernel
        kernel, tuned = self.cache[key]
        bound.update(tuned)
        g = tuple(grid(bound) if callable(grid) else grid) + (1, 1)
        kernel[g[:3]](*[bound[name] for name in self.launch_args])  # what the compiled kernel takes
        return kernel


@LibEntry
@triton.jit
def add_one(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1, mask=offs < n)


@LibEntry
@triton.autotune(configs=[triton.Config({"BLOCK": 64}), triton.Config({"BLOCK": 128})], key=["n"])
@triton.jit
def double(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


if __name__ == "__main__":
    for n in (1000, 1000):  # the second call of the key launches the kept kernel
        x = torch.randn(n)
        out = torch.empty(n)
        add_one[(triton.cdiv(n, 128),)](x, out, n, BLOCK=128)
        torch.testing.assert_close(out, x + 1)
    for _ in range(2):
        x = torch.randn(1000)
        out = torch.empty(1000)
        double[lambda meta: (triton.cdiv(meta["n"], meta["BLOCK"]),)](x, out, 1000)
        torch.testing.assert_close(out, x * 2)
    # The kept kernel launched by hand, and with arguments it does not take: the launch fails as on a GPU
    kernel, _ = add_one.cache[next(iter(add_one.cache))]
    x, out = torch.randn(1000), torch.empty(1000)
    kernel[(8, 1, 1)](*((x, out, 1000, 128) if ALL_ARGS else (x, out, 1000)))
    torch.testing.assert_close(out, x + 1)
    try:
        kernel[(8, 1, 1)](*((x, out, 1000) if ALL_ARGS else (x, out, 1000, 128)))
    except TypeError as e:
        print("refused:", e)
    print("launches done")
