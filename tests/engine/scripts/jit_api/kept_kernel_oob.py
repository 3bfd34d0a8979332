"""A kernel cache in front of @triton.jit (the manner of FlagGems' libentry): the first call of a key goes
through JITFunction.run, the next ones launch the compiled kernel it returned. That second launch has no
mask on its load, and n = 1000 is not a multiple of the block: 24 lanes read past the end of x."""
import torch
import triton
import triton.language as tl


# the compiled kernel takes every argument on triton 3.3+, those that are not constexprs on 3.2
ALL_ARGS = tuple(int(v) for v in triton.__version__.split(".")[:2]) >= (3, 3)


class KernelCache:
    def __init__(self, fn):
        self.fn, self.kept = fn, {}

    def __getitem__(self, grid):
        def launch(*args):
            key = tuple(str(a.dtype) if hasattr(a, "dtype") else type(a).__name__ for a in args)
            if key in self.kept:
                self.kept[key][grid](*(args if ALL_ARGS else args[:-1]))  # BLOCK is last
            else:
                self.kept[key] = self.fn.run(*args, grid=grid, warmup=False)

        return launch


@triton.jit
def copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs), mask=offs < n)


if __name__ == "__main__":
    cached = KernelCache(copy)
    x, out = torch.randn(1024), torch.empty(1024)
    cached[(8,)](x, out, 1024, 128)  # through JITFunction.run: in bounds
    x, out = torch.randn(1000), torch.empty(1000)
    cached[(8,)](x, out, 1000, 128)  # the same key's kept kernel: reads past the end of x
