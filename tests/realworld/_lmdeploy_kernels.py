"""lmdeploy's Triton kernel modules without the rest of lmdeploy: `import lmdeploy` needs pydantic and
transformers for its engine (the wheel's turbomind is a CUDA build besides). The kernels import two names from
its engine modules: QuantPolicy from lmdeploy.messages (pydantic and, through its tokenizer, transformers) and
get_logger from lmdeploy.utils (transformers). Both modules get stand-ins holding only those: QuantPolicy is
lmdeploy's own class, read from the installed messages.py; get_logger is logging's."""

import ast
import importlib.util
import logging
import sys
import types
from pathlib import Path

from _kernels_only import kernels_only


def lmdeploy_kernels_only() -> None:
    kernels_only("lmdeploy", "lmdeploy.pytorch", "lmdeploy.pytorch.kernels", "lmdeploy.pytorch.kernels.cuda")
    spec = importlib.util.find_spec("lmdeploy")
    assert spec is not None and spec.submodule_search_locations
    messages_py = Path(list(spec.submodule_search_locations)[0]) / "messages.py"
    tree = ast.parse(messages_py.read_text())
    quant_policy = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "QuantPolicy")
    messages = types.ModuleType("lmdeploy.messages")
    messages.enum = __import__("enum")  # type: ignore[attr-defined]
    exec(compile(ast.Module(body=[quant_policy], type_ignores=[]), str(messages_py), "exec"), messages.__dict__)
    utils = types.ModuleType("lmdeploy.utils")
    utils.get_logger = logging.getLogger  # type: ignore[attr-defined]
    sys.modules["lmdeploy.messages"], sys.modules["lmdeploy.utils"] = messages, utils
