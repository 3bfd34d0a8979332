"""Import a library's Triton kernel modules without its package __init__, which imports a CUDA extension
that a `--no-deps` install built without (mamba-ssm's selective_scan_cuda, flash-attn's flash_attn_2_cuda):
the package gets an empty module with the installed package's path, so `import pkg.ops.triton.x` runs only
pkg/ops/__init__.py, pkg/ops/triton/__init__.py and x.py."""

import importlib.util
import sys
import types


def kernels_only(*packages: str) -> None:
    for name in packages:
        if name in sys.modules:
            continue
        spec = importlib.util.find_spec(name)  # a top-level find_spec does not import the package
        assert spec is not None and spec.submodule_search_locations, f"{name} is not installed"
        module = types.ModuleType(name)
        module.__path__ = list(spec.submodule_search_locations)
        module.__spec__ = spec
        module.__file__ = spec.origin
        sys.modules[name] = module
