"""The compiler's semantics where the bare interpreter (TRITON_INTERPRET=1) differs from it, for one run.

What a kernel does under the tool is what the compiled kernel does on a GPU. This module (with compat.py
the only release-specific code) patches the interpreter for the duration of a run:

- `and` / `or` / `not` on tensors are elementwise, as the code generator lowers them (logical_and /
  logical_or / not_); on constexprs and plain Python values they keep Python's meaning, short-circuit
  included (the code generator short-circuits on constexprs too).
- scalar arguments are typed as the JIT types them: a float is an fp32 scalar, a bool an i1 (ints were
  already i32 / i64 / u64).
- `triton.language.extra.libdevice` (and its cuda / hip modules) computes the functions (libdevice.py)
  through the release's own dispatch, so the dtype rules are the compiler's.
- parameters annotated with strings ("tl.constexpr", `from __future__ import annotations`) are
  constexprs; a grid may be a list.
- a builtin bound to another name before the launch (`fast_exp = tl.math.exp` at module level, `from
  triton.language import log2`) is a builtin, as the code generator resolves it: the interpreter wraps
  only the attributes of the language modules, so the kernel's own name for it is resolved to the
  wrapper at the same module attribute (or given the builder keyword) when it is used.
- a copy of a libdevice module the script executed itself (`exec_module`), or a function taken from one,
  is the imported module or its function of that name, as the code generator maps them by name.
- grid dependency control (`tl.extra.cuda.gdc_wait`, `gdc_launch_dependents`) is met by launches run in order.
- float -> fp8 (e4m3 / e5m2) conversions round to nearest even (fp8.py).
- tl.dot of float32 tiles computes what the GPU's tensor cores do at the dot's input precision: TF32
  operands (truncated) for "tf32", the default; the three-TF32-dot split for "tf32x3" (tf32.py).
- numpy 2.4+ refuses int() on a 1-element array, which triton <= 3.6 calls for `range(n)` and
  indexing: tensors convert through their single element instead.

`install(scope)` makes each patch in compat.install's `PatchScope` (patches.py): one undo for the whole run.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import types
from collections.abc import Callable, Iterable
from typing import Any, NoReturn

import numpy as np
import triton.language as tl
import triton.runtime.interpreter as _interp

from . import fp8 as _fp8
from . import libdevice as _libdevice
from . import tf32 as _tf32
from .patches import PatchScope

# triton's interpreter internals are untyped (triton ships no annotations mypy reads): a tl.tensor, a
# TensorHandle, a dtype, an InterpreterBuilder or ReduceOps `self`, a grid, an original method that a
# patch wraps are all Any here, this module's boundary with them. What we compute on is typed: numpy arrays.
Triton = Any
Method = Callable[..., Any]  # a method or function of triton's that a patch wraps, and the wrapper

_semantic_obj = getattr(_interp, "interpreter_semantic", None)
# The keyword every @builtin takes: `_semantic` (3.4+) or `_builder` (3.2, 3.3).
_BUILTIN_KW = {"_semantic": _semantic_obj} if _semantic_obj is not None else {"_builder": _interp.interpreter_builder}

_AND = "_triton_lens_and"
_OR = "_triton_lens_or"
_NOT = "_triton_lens_not"
_BUILTIN = "_triton_lens_builtin"


# ---- and / or / not -------------------------------------------------------------------------------
class WouldNotCompile(Exception):
    """An error triton's compiler raises at this expression (a CompilationError at the AST node), which
    the interpreter would report as a traceback of its own: where it is in the file (1-based lines,
    0-based columns, as a Finding has them) and the compiler's own error. The worker reports it there."""

    triton_lens_would_not_compile = True  # (how the worker tells it apart, without importing this module)

    def __init__(self, message: str, cause: BaseException, file: str, line: int, col: int, end_line: int, end_col: int):
        super().__init__(message)
        self.cause_type, self.cause_message = type(cause).__name__, str(cause)
        self.file, self.line, self.col, self.end_line, self.end_col = file, line, col, end_line, end_col


def _where(depth: int, at: tuple[int, int, int] | None) -> tuple[str, int, int, int, int] | None:
    """The file, line and columns of the kernel's expression that called us `depth` frames up. The
    interpreter compiles the kernel's dedented source with the file's line numbers, so its columns are
    off by the indentation of the kernel's `def` line in the file (every line of the body was dedented
    by it, the end line's too)."""
    import linecache
    import sys

    try:
        f = sys._getframe(depth + 1)
    except ValueError:
        return None
    file, line = f.f_code.co_filename, f.f_lineno
    if at is None:
        return file, line, -1, line, -1
    col, lines, end_col = at
    def_line = linecache.getline(file, f.f_code.co_firstlineno)
    indent = len(def_line) - len(def_line.lstrip())
    return file, line, col + indent, line + lines, end_col + indent


def _bool_op(method: str, thunks: tuple[Callable[[], Any], ...], at: tuple[int, int, int] | None = None) -> Any:
    """The code generator's visit_BoolOp: operands evaluated in order; a constexpr (or Python value)
    that decides the result returns at once, one that does not is dropped; tensors are combined
    elementwise, right to left. An operand the compiler refuses (logical_and / logical_or bitcast each
    operand to int1, and an int32 one cannot be: "Cannot bitcast data-type of size 32 to data-type of
    size 1") raises WouldNotCompile at the `and` / `or` expression, where the compiler reports it
    (triton 3.6 on an H200: CompilationError "at 4:11:" for `keep = (x > 0) and offs`, the BoolOp's
    column, with ValueError('Cannot bitcast data-type of size 32 to data-type of size 1'))."""
    tensors = []
    value = None
    for thunk in thunks:
        value = thunk()
        if isinstance(value, tl.tensor):
            tensors.append(value)
        elif bool(value) is (method == "logical_or"):
            return value
    if not tensors:
        return value
    result = tensors.pop()
    while tensors:
        lhs = tensors.pop()
        try:
            result = getattr(lhs, method)(result, **_BUILTIN_KW)
        except Exception as e:
            where = _where(2, at)  # (_bool_op <- _and / _or <- the kernel)
            if where is None:
                raise
            word = "and" if method == "logical_and" else "or"
            raise WouldNotCompile(
                f"`{word}` of {_type_text(lhs)} and {_type_text(result)} would not compile: triton's compiler "
                f"raises CompilationError here ({type(e).__name__}: {e}). On tensors `{word}` is tl.{method}, "
                "which bitcasts each operand to int1 (a boolean) and refuses any that is not 1 bit "
                "wide. Make both operands booleans (compare the other one: `x != 0`), "
                f"or use `{'&' if word == 'and' else '|'}` for a bitwise {word}",
                e,
                *where,
            ) from e
    return result


def _type_text(value: Triton) -> str:
    """`an int32 tensor`, `an int1 tensor`, `a float32 scalar`."""
    dtype = str(getattr(value, "dtype", "?"))
    kind = "tensor" if getattr(getattr(value, "type", None), "is_block", lambda: False)() else "scalar"
    article = "an" if dtype[:1] in "aeiou" else "a"
    return f"{article} {dtype} {kind}"


def _and(*thunks: Callable[[], Any], _at: tuple[int, int, int] | None = None) -> Any:
    return _bool_op("logical_and", thunks, _at)


def _or(*thunks: Callable[[], Any], _at: tuple[int, int, int] | None = None) -> Any:
    return _bool_op("logical_or", thunks, _at)


def _not(value: Any) -> Any:
    if isinstance(value, tl.tensor):
        return value.__not__(**_BUILTIN_KW)
    return not value


class _BoolOpsToCalls(ast.NodeTransformer):
    """`a and b` -> `_and(lambda: a, lambda: b)`, `not a` -> `_not(a)`, inside a kernel's body; a global
    name bound to a builtin (`aliases`, of the function being rewritten) -> `_builtin(name)`."""

    aliases: frozenset[str] = frozenset()
    fn_globals: dict[str, Any] | None = None  # the globals of the function being rewritten

    def visit_Name(self, node: ast.Name) -> ast.expr:
        if node.id in self.aliases and isinstance(node.ctx, ast.Load):
            call = ast.Call(func=ast.Name(id=_BUILTIN, ctx=ast.Load()), args=[node], keywords=[])
            return ast.copy_location(call, node)
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        self.generic_visit(node)  # (the node itself, its children transformed)
        name = _AND if isinstance(node.op, ast.And) else _OR
        empty = ast.arguments(
            posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]
        )
        thunks: list[ast.expr] = [ast.copy_location(ast.Lambda(args=empty, body=v), v) for v in node.values]
        # where the expression is (column, lines it spans, end column): the compiler's error is reported there
        end_line = node.end_lineno if node.end_lineno is not None else node.lineno
        end_col = node.end_col_offset if node.end_col_offset is not None else node.col_offset
        at = ast.Tuple(
            elts=[ast.Constant(value=v) for v in (node.col_offset, end_line - node.lineno, end_col)], ctx=ast.Load()
        )
        call = ast.Call(
            func=ast.Name(id=name, ctx=ast.Load()), args=thunks, keywords=[ast.keyword(arg="_at", value=at)]
        )
        return ast.copy_location(call, node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(
                ast.Call(func=ast.Name(id=_NOT, ctx=ast.Load()), args=[node.operand], keywords=[]), node
            )
        return node


# ---- builtins under another name -------------------------------------------------------------------
def _is_builtin(value: object) -> bool:
    try:
        return bool(tl.core.is_builtin(value))
    except Exception:  # an object whose __getattr__ raises something else (3.3's tl.tuple: ValueError)
        return False


_LIBDEVICE_MODULES = (
    "triton.language.extra.libdevice",
    "triton.language.extra.cuda.libdevice",
    "triton.language.extra.hip.libdevice",
)


def _libdevice_original(value: object) -> Any:
    """For a copy of a libdevice module that the script executed itself (`module_from_spec` +
    `exec_module`, xformers' `libdevice_find`), or a function of the generic module's copy (an empty
    stub): the imported module, or its function of that name, as the code generator maps them by
    `__name__` / `__module__` (its module_map) to the GPU's device library. None for anything else."""
    import sys
    import types

    if isinstance(value, types.ModuleType):
        name = getattr(value, "__name__", "")
        current = sys.modules.get(name) if name in _LIBDEVICE_MODULES else None
        return current if current is not None and current is not value else None
    if inspect.isfunction(value) and value.__module__ == _LIBDEVICE_MODULES[0]:
        current = getattr(sys.modules.get(_LIBDEVICE_MODULES[0]), value.__name__, None)
        return current if current is not None and current is not value else None
    return None


def _builtin_aliases(g: dict[str, Any], tree: ast.AST) -> frozenset[str]:
    """Global names the function reads whose value is a triton builtin, or a libdevice copy's module or
    function (never one it binds itself)."""
    bound = {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
    read: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name):
            (read if isinstance(n.ctx, ast.Load) else bound).add(n.id)
    return frozenset(n for n in read - bound if n in g and (_is_builtin(g[n]) or _libdevice_original(g[n]) is not None))


def _language_attributes() -> dict[int, tuple[Any, str]]:
    """id(builtin) -> (module, attribute) in the language modules the interpreter wraps for a launch."""
    out: dict[int, tuple[Any, str]] = {}
    for mod in (tl, tl.core, getattr(tl, "math", None)):
        if mod is None:
            continue
        for name, value in vars(mod).items():
            if _is_builtin(value):
                out.setdefault(id(value), (mod, name))
    return out


def _builtin_resolver() -> Callable[[Any], Any]:
    places = _language_attributes()  # taken before any launch of the run wraps them
    plain: dict[int, Callable[..., Any]] = {}

    def with_builder(fn: Method) -> Method:
        def call(*args: Any, **kwargs: Any) -> Any:
            kwargs = {k: v for k, v in kwargs.items() if k not in _BUILTIN_KW}
            return fn(*args, **kwargs, **_BUILTIN_KW)

        return call

    def _builtin(value: Any) -> Any:
        """What a builtin read under the kernel's own name is at run time: the launch's wrapper at its
        module attribute (the interpreter's own, range and static_assert included), else the builtin
        given the builder keyword."""
        if not _is_builtin(value):
            original = _libdevice_original(value)
            return value if original is None else original  # (else rebound since the rewrite)
        place = places.get(id(value))
        if place is not None:
            current = getattr(*place, None)
            if current is not None and current is not value:
                return current
        w = plain.get(id(value))
        if w is None:
            w = plain[id(value)] = with_builder(value)
        return w

    return _builtin


class _Transformer:
    """Our transform first, then the release's own (assignments, chained comparisons)."""

    def __init__(self, release_transformer: Triton) -> None:
        self.release = release_transformer
        self.ours = _BoolOpsToCalls()

    def visit(self, tree: ast.AST) -> Any:
        ours = self.ours
        ours.aliases = _builtin_aliases(ours.fn_globals or {}, tree)
        try:
            return self.release.visit(ours.visit(tree))
        finally:
            ours.aliases = frozenset()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.release, name)


# ---- constexpr annotations and grids -------------------------------------------------------------
def _is_constexpr_annotation(ann: object) -> bool:
    if ann is tl.constexpr or (isinstance(ann, type) and issubclass(ann, tl.constexpr)):
        return True
    if isinstance(ann, str):  # "tl.constexpr", "constexpr", "triton.language.constexpr"; with
        # `from __future__ import annotations` a string annotation arrives quoted once more
        return ann.strip().strip("'\"").strip().split(".")[-1] == "constexpr"
    return False


def _constexpr_names(fn: Callable[..., Any], arg_names: Iterable[str]) -> list[str]:
    try:
        anns = inspect.get_annotations(fn)
    except Exception:
        anns = getattr(fn, "__annotations__", {}) or {}
    return [n for n in arg_names if _is_constexpr_annotation(anns.get(n))]


def _as_tuple_grid(grid: Any) -> Any:
    """A launch's grid with a list (returned by its function, or given) as a tuple."""
    if callable(grid):

        def call(meta: dict[str, Any], _grid: Callable[[dict[str, Any]], Any] = grid) -> Any:
            g = _grid(meta)
            return tuple(g) if isinstance(g, list) else g

        call.__wrapped__ = grid  # type: ignore[attr-defined]  # (inspect.unwrap: the size check reads the user's)
        return call
    if isinstance(grid, list):
        return tuple(grid)
    return grid


# ---- scalar arguments ----------------------------------------------------------------------------
def _scalar_arg(arg: object) -> Triton | None:
    """A Python float or bool as the JIT types it (fp32 / i1), or None for anything else."""
    if isinstance(arg, bool):
        return tl.tensor(_interp.TensorHandle(np.array([arg], dtype=np.bool_), tl.int1), tl.int1)
    if isinstance(arg, float):
        return tl.tensor(_interp.TensorHandle(np.array([arg], dtype=np.float32), tl.float32), tl.float32)
    return None


# ---- libdevice -----------------------------------------------------------------------------------
def _libdevice_modules() -> list[types.ModuleType | None]:
    """(generic module, the NVIDIA one, the AMD one); the compiler maps the generic one to the GPU's
    (we run the NVIDIA one, whose dispatch tables the AMD one mostly shares)."""
    import importlib

    mods: list[types.ModuleType | None] = []
    for name in (
        "triton.language.extra.libdevice",
        "triton.language.extra.cuda.libdevice",
        "triton.language.extra.hip.libdevice",
    ):
        try:
            mods.append(importlib.import_module(name))
        except Exception:
            mods.append(None)
    return mods


_calling: list[str] = []  # the libdevice function being dispatched, for error messages


def _bound(name: str, fn: Method) -> Method:
    def call(*args: Any, **kwargs: Any) -> Any:
        kwargs.pop("_semantic", None)
        kwargs.pop("_builder", None)
        _calling.append(name)
        try:
            return fn(*args, **kwargs, **_BUILTIN_KW)
        finally:
            _calling.pop()

    call.__name__ = name
    call.__qualname__ = name
    call.__doc__ = fn.__doc__
    setattr(call, "_triton_lens_libdevice", True)  # noqa: B010  (a marker on a function object)
    return call


def _grid_dependency_noop(*args: object, **kwargs: object) -> None:
    """gdc_wait / gdc_launch_dependents under the tool: met by launches that run in order, to their end."""
    return None


def _unimplemented(name: str) -> Method:
    def call(*args: object, **kwargs: object) -> NoReturn:
        raise _libdevice.UnsupportedLibdeviceFunction(
            f"libdevice.{name} is not implemented under Triton Lens: the NVIDIA device library has no "
            f"function of that name for the interpreter to run. Use a tl.* or tl.math function instead."
        )

    call.__name__ = name
    return call


def _public_functions(mod: types.ModuleType) -> dict[str, Method]:
    return {
        n: f
        for n, f in vars(mod).items()
        if not n.startswith("_") and inspect.isfunction(f) and getattr(f, "__module__", "") == mod.__name__
    }


def _fp8_format(dtype: Triton) -> str | None:
    if dtype == tl.float8e4nv:
        return "e4m3"
    if dtype == tl.float8e5:
        return "e5m2"
    return None


# ---- bf16 ----------------------------------------------------------------------------------------
def _to_bf16_bits(data: np.ndarray) -> np.ndarray:
    """fp32/fp64 -> bf16 bit patterns, to nearest even (tf32.bf16_bits owns the rounding)."""
    return _tf32.bf16_bits(data)


# ---- tensor descriptors ----------------------------------------------------------------------------
def _validate_descriptor(self: Triton) -> None:
    """The GPU's rule (TMA): base and every stride but the last 16-byte aligned *in bytes*. 3.4 and 3.5
    check the strides in elements, rejecting e.g. fp32 rows of 72 (288 bytes, aligned)."""
    assert int(self.base.data.reshape(-1)[0]) % 16 == 0, "base must be 16-byte aligned"
    assert len(self.strides) == self.ndim
    assert len(self.block_shape) == self.ndim
    itemsize = self.base.dtype.element_ty.primitive_bitwidth // 8
    for stride in self.strides[:-1]:
        assert int(stride.data.reshape(-1)[0]) * itemsize % 16 == 0, "stride must be 16-byte aligned"
    assert int(self.strides[-1].data.reshape(-1)[0]) == 1, "last dim must be contiguous"


def _checks_strides_in_elements(cls: Triton) -> bool:
    try:
        src = inspect.getsource(cls.validate)
    except (OSError, TypeError, AttributeError):
        return False
    return "stride must be 16-byte aligned" in src and "itemsize" not in src


# ---- numpy 2.4+ ----------------------------------------------------------------------------------
def _index(self: Triton) -> int:
    data: np.ndarray = self.handle.data
    return int(data.reshape(-1)[0]) if data.size == 1 else int(data)


def _bf16_as_f32(bits: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns (uint16) as their float32 values (exact)."""
    return (np.asarray(bits).astype(np.uint32) << 16).view(np.float32)


def _bf16_result(out: np.ndarray) -> np.ndarray:
    """An op's float32 result as bfloat16 bits; a comparison's booleans as the interpreter keeps them for
    a 16-bit operand type (0 / 1 in its storage dtype)."""
    out = np.asarray(out)
    if out.dtype == np.bool_:
        return out.astype(np.uint16)
    return _to_bf16_bits(out)


def _bf16_tree_sum(bits: np.ndarray, axis: int | None, keep_dims: bool) -> np.ndarray:
    """The sum of bfloat16 values (bits in, bits out) along an axis (None: all), as the GPU computes it:
    accumulated in float32, combined pairwise (element i with i + half, halving), rounded to bfloat16
    once (tests/gpu/bf16_reduce_probe.py: partials rounded to bf16 match the H200 far less often)."""
    x = _bf16_as_f32(bits)
    if axis is None:
        x, axis = x.reshape(-1), 0
        keep_dims = False
    x = np.moveaxis(x, axis, 0)
    with np.errstate(all="ignore"):
        while x.shape[0] > 1:
            n = x.shape[0]
            half = (n + 1) // 2
            top = x[:half].copy()
            top[: n - half] = top[: n - half] + x[half:]
            x = top
    total = x[0] if x.shape[0] else np.zeros(x.shape[1:], np.float32)
    out = _to_bf16_bits(total).reshape(x.shape[1:])  # (ascontiguousarray makes a 0-d result 1-d)
    return np.expand_dims(out, axis) if keep_dims else out


def _bf16_running(bits: np.ndarray, axis: int, op: np.ufunc) -> np.ndarray:
    """A scan of bfloat16 values along an axis as the GPU computes it: accumulated in float32, each
    output rounded to bfloat16 (bit-equal to the H200's tl.cumsum in 149 of 150 probes)."""
    x = _bf16_as_f32(bits)
    with np.errstate(all="ignore"):
        acc = np.cumsum(x, axis=axis, dtype=np.float32) if op is np.add else np.cumprod(x, axis=axis, dtype=np.float32)
    return _to_bf16_bits(acc).reshape(x.shape)


def _bf16_values(h: Triton) -> np.ndarray:
    """A tl.dot operand's values as float32: bfloat16 bits widened (exact), any other dtype as it is."""
    if h.dtype.scalar == tl.bfloat16:
        return _bf16_as_f32(h.data)
    return np.asarray(h.data, dtype=np.float32)


def _nvidia_dot_precisions() -> tuple[str, ...]:
    """tl.dot's input precisions the installed release's NVIDIA backend compiles."""
    try:
        from triton.backends.nvidia.compiler import CUDAOptions
    except ImportError:  # a build without the NVIDIA backend
        return ()
    return tuple(getattr(CUDAOptions, "allowed_dot_input_precisions", ()))


def dot_precision_name(p: Any) -> str:
    """tl.dot's input precision as the user spells it ("tf32", "tf32x3", "ieee", ...): the builder gets
    an ir.INPUT_PRECISION member (3.2 - 3.9), or None."""
    if p is None:
        return ""
    return str(getattr(p, "name", p)).rsplit(".", 1)[-1].lower()


def install(scope: PatchScope) -> None:
    """Patch the interpreter with the compiler's semantics until `scope` is left (compat.install's scope:
    one undo path for the run). Each patch is a small function of its own; the order is the order below."""
    for patch in _PATCHES:
        patch(scope)


# ---- and / or / not, builtins under other names ------------------------------------------------------
def _and_or_not(scope: PatchScope) -> None:
    """Applied where the interpreter rewrites the kernel's AST."""
    rewriter = _interp.FunctionRewriter
    scope.patch(rewriter, "ast_transformer", lambda orig: _Transformer(orig))
    scope.patch(rewriter, "rewrite_ast", functools.partial(_rewrite_ast, resolve_builtin=_builtin_resolver()))
    # Kernels rewritten before this run (an in-process recorder) are rewritten again with these
    # semantics, and the run's rewrites are not kept after it: a fresh cache for the run, the
    # original dict put back by the scope's undo.
    scope.patch(_interp.InterpretedFunction, "rewritten_fn", lambda orig: {})


def _rewrite_ast(orig: Callable[..., Any], resolve_builtin: Callable[..., Any]) -> Callable[..., Any]:
    def rewrite_ast(self: Triton) -> Any:
        g = getattr(self.fn, "__globals__", None)
        if g is not None:
            g.setdefault(_AND, _and)
            g.setdefault(_OR, _or)
            g.setdefault(_NOT, _not)
            g[_BUILTIN] = resolve_builtin  # this run's (a later run takes its own places)
        transformer = getattr(self, "ast_transformer", None)
        if not isinstance(transformer, _Transformer):
            return orig(self)
        transformer.ours.fn_globals = g
        try:
            return orig(self)
        finally:
            transformer.ours.fn_globals = None

    return rewrite_ast


# ---- string annotations, list grids, scalar arguments ---------------------------------------------
def _string_annotations_and_list_grids(scope: PatchScope) -> None:
    def make(orig: Method) -> Method:
        def __init__(
            self: Triton, fn: Callable[..., Any], arg_names: list[str], grid: Any, *args: Any, **kwargs: Any
        ) -> None:
            orig(self, fn, arg_names, _as_tuple_grid(grid), *args, **kwargs)
            self.constexprs = _constexpr_names(fn, arg_names)

        return __init__

    scope.patch(_interp.GridExecutor, "__init__", make)


def _jit_scalar_types(scope: PatchScope) -> None:
    """Scalar arguments as the JIT types them."""

    def make(orig: Method) -> Method:
        def _implicit_cvt(arg: Any) -> Any:
            out = _scalar_arg(arg)
            return orig(arg) if out is None else out

        return _implicit_cvt

    scope.patch(_interp, "_implicit_cvt", make)


# ---- libdevice ---------------------------------------------------------------------------------------
def _libdevice_calls(scope: PatchScope) -> None:
    """The device library's functions, through the release's own dispatch."""
    np_dtype = _interp._get_np_dtype

    def make(orig: Method) -> Method:
        def create_extern_elementwise(
            self: Triton, libName: str, libPath: str, symbol: str, argList: list[Triton], retType: Triton, isPure: bool
        ) -> Triton:
            ret = getattr(retType, "scalar", retType)
            arrays: list[np.ndarray] = [a.data for a in argList]
            shape = np.broadcast_shapes(*[a.shape for a in arrays]) if arrays else (1,)
            out = _libdevice.evaluate(symbol, arrays, np_dtype(ret), _calling[-1] if _calling else "")
            return _interp.TensorHandle(np.broadcast_to(out, shape).copy(), ret)

        return create_extern_elementwise

    scope.patch(_interp.InterpreterBuilder, "create_extern_elementwise", make)


def _libdevice_modules_bound(scope: PatchScope) -> None:
    """The vendor modules' functions bound to the builtins; the generic module's redirected to them."""
    generic, cuda, hip = _libdevice_modules()
    targets: dict[str, Callable[..., Any]] = {}  # name -> the bound vendor function
    for mod in (cuda, hip):
        if mod is not None:
            for name in _public_functions(mod):
                scope.patch(mod, name, functools.partial(_bound, name))
                targets.setdefault(name, getattr(mod, name))
    if generic is not None:
        for name in _public_functions(generic):
            scope.set_attr(generic, name, targets.get(name) or _unimplemented(name))


# ---- grid dependency control ------------------------------------------------------------------------
def _grid_dependency_control(scope: PatchScope) -> None:
    """Programmatic dependent launch (tl.extra.cuda.gdc_wait / gdc_launch_dependents, lmdeploy's paged
    attention): launches run here one after the other to their end, so the wait for the previous grid is
    met and letting the next one start early changes nothing: both are no-ops. The interpreter does not
    wrap that module's builtins (and 3.4 - 3.6 write them as inline PTX, which it cannot run): the module
    attributes are no-ops for the run, and so are the builder's instructions (for a kernel that took the
    builtin under its own name before the run: 3.7+)."""
    builder_cls = _interp.InterpreterBuilder
    for name in ("create_grid_dependency_wait", "create_grid_dependency_launch_dependents"):
        if not hasattr(builder_cls, name):
            scope.set_attr(builder_cls, name, _builder_noop)
    # (triton.language.extra executes its backends' modules itself: `tl.extra.cuda` and the
    # sys.modules entry of that name are two module objects.)
    import sys

    extra = getattr(tl, "extra", None)
    modules: list[Any] = []
    for cuda in (getattr(extra, "cuda", None), sys.modules.get("triton.language.extra.cuda")):
        for module in (cuda, getattr(cuda, "gdc", None)):
            if module is not None and all(module is not m for m in modules):
                modules.append(module)
    for module in modules:
        for name in ("gdc_wait", "gdc_launch_dependents"):
            if _is_builtin(getattr(module, name, None)):
                scope.set_attr(module, name, _grid_dependency_noop)


def _builder_noop(self: Triton, *args: object, **kwargs: object) -> None:
    return None


# ---- fp8 and bf16 rounding ----------------------------------------------------------------------------
def _fp8_rounding(scope: PatchScope) -> None:
    """fp8 conversions round to nearest even and saturate, as cvt.rn.satfinite does."""

    def make(orig: Method) -> Method:
        def create_fp_to_fp(self: Triton, src: Triton, dst_type: Triton, *args: Any, **kwargs: Any) -> Triton:
            fmt = _fp8_format(dst_type.scalar)
            src_ty = src.dtype.scalar
            if fmt is not None and src_ty in (tl.float32, tl.float16, tl.bfloat16, tl.float64):
                data = src.data
                if src_ty == tl.bfloat16:  # stored as uint16: widen the bits to fp32
                    data = _bf16_as_f32(data)
                return _interp.TensorHandle(_fp8.encode(data, fmt), dst_type.scalar)
            return orig(self, src, dst_type, *args, **kwargs)

        return create_fp_to_fp

    scope.patch(_interp.InterpreterBuilder, "create_fp_to_fp", make)


def _bf16_arithmetic(scope: PatchScope) -> None:
    """bfloat16 arithmetic on values, not bits: the interpreter keeps bf16 as its uint16 bit patterns and
    hands those to numpy, so x + y, x * y, x < y, -x, max(x, y), fma and clamp computed on integers (every
    release 3.2 - 3.9). The GPU computes each in float32 and rounds to bfloat16 (to nearest even; native
    bf16 add/mul on sm_90 round the exact result, the same value): so do we."""
    builder_cls = _interp.InterpreterBuilder
    makes: tuple[tuple[str, Callable[[Method], Method]], ...] = (
        ("binary_op", _bf16_binary),
        ("unary_op", _bf16_unary),
        ("ternary_op", _bf16_ternary),
        ("create_fma", _bf16_fma),
    )
    for name, make in makes:
        if hasattr(builder_cls, name):
            scope.patch(builder_cls, name, make)


def _bf16_binary(orig: Method) -> Method:
    def binary_op(self: Triton, lhs: Triton, rhs: Triton, op: Callable[..., Any]) -> Triton:
        if lhs.dtype.scalar != tl.bfloat16 or rhs.dtype.scalar != tl.bfloat16:
            return orig(self, lhs, rhs, op)
        with np.errstate(all="ignore"):
            out = op(_bf16_as_f32(lhs.data), _bf16_as_f32(rhs.data))
        return _interp.TensorHandle(_bf16_result(out), tl.bfloat16)

    return binary_op


def _bf16_unary(orig: Method) -> Method:
    def unary_op(self: Triton, arg: Triton, op: Callable[..., Any]) -> Triton:
        if arg.dtype.scalar != tl.bfloat16:
            return orig(self, arg, op)
        with np.errstate(all="ignore"):
            return _interp.TensorHandle(_bf16_result(op(_bf16_as_f32(arg.data))), tl.bfloat16)

    return unary_op


def _bf16_ternary(orig: Method) -> Method:
    def ternary_op(self: Triton, lhs: Triton, rhs: Triton, other: Triton, op: Callable[..., Any]) -> Triton:
        if op is np.where or other.dtype.scalar != tl.bfloat16:  # select moves bits: exact as it is
            return orig(self, lhs, rhs, other, op)
        with np.errstate(all="ignore"):
            out = op(*(_bf16_as_f32(h.data) for h in (lhs, rhs, other)))
        return _interp.TensorHandle(_bf16_result(out), tl.bfloat16)

    return ternary_op


def _bf16_fma(orig: Method) -> Method:
    def create_fma(self: Triton, x: Triton, y: Triton, z: Triton) -> Triton:
        if z.dtype.scalar != tl.bfloat16:
            return orig(self, x, y, z)
        xs, ys, zs = (_bf16_as_f32(h.data).astype(np.float64) for h in (x, y, z))
        return _interp.TensorHandle(_to_bf16_bits(xs * ys + zs), tl.bfloat16)  # exact product: one rounding

    return create_fma


def _bf16_reductions(scope: PatchScope) -> None:
    """Reductions and scans of bfloat16 (tl.sum, tl.cumsum, ...): numpy summed the bits. The GPU accumulates
    in float32 and rounds the result (measured: tests/gpu/bf16_reduce_probe.py); its order of combines is
    its layout's, ours a pairwise tree for a reduction, in order for a scan."""
    reduce_ops, scan_ops = getattr(_interp, "ReduceOps", None), getattr(_interp, "ScanOps", None)
    if reduce_ops is not None and hasattr(reduce_ops, "sum"):
        scope.patch(reduce_ops, "sum", _bf16_sum)
    if reduce_ops is not None and hasattr(reduce_ops, "min_max"):
        scope.patch(reduce_ops, "min_max", _bf16_min_max)
    if scan_ops is not None:
        for name, op in (("cumsum", np.add), ("cumprod", np.multiply)):
            if hasattr(scan_ops, name):
                scope.patch(scan_ops, name, functools.partial(_bf16_scan, op=op))


def _bf16_sum(orig: Method) -> Method:
    def sum(self: Triton, input: Triton) -> Triton:
        if input.dtype.scalar != tl.bfloat16:
            return orig(self, input)
        data = _bf16_tree_sum(input.handle.data, self.axis, self.keep_dims)
        return self.to_tensor(data, input.dtype)

    return sum


def _bf16_min_max(orig: Method) -> Method:
    def min_max(self: Triton, input: Triton, val_reduce_op: Triton, idx_reduce_op: Triton = None) -> Triton:
        x = input[0] if isinstance(input, tuple) else input
        if x.dtype.scalar != tl.bfloat16:
            return orig(self, input, val_reduce_op, idx_reduce_op)
        values = _interp.TensorHandle(_bf16_as_f32(x.handle.data), tl.float32)
        out = orig(self, tl.core.tensor(values, x.type.with_element_ty(tl.float32)), val_reduce_op, idx_reduce_op)
        outs = out if isinstance(out, tuple) else (out,)
        fixed = tuple(
            self.to_tensor(_to_bf16_bits(o.handle.data), x.dtype) if o.dtype.scalar == tl.float32 else o for o in outs
        )
        return fixed if isinstance(out, tuple) else fixed[0]

    return min_max


def _bf16_scan(orig: Method, op: np.ufunc) -> Method:
    def scan(self: Triton, input: Triton) -> Triton:  # (a list of tensors, as the release's scan returns)
        if input.dtype.scalar != tl.bfloat16:
            return orig(self, input)
        return [self.to_tensor(_bf16_running(input.handle.data, self.axis, op), input.dtype)]

    return scan


def _bf16_casts(scope: PatchScope) -> None:
    """fp32 -> bf16 rounds to nearest even."""

    def make(orig: Method) -> Method:
        def cast_impl(self: Triton, src: Triton, dst_type: Triton, *args: Any, **kwargs: Any) -> Triton:
            if dst_type.scalar == tl.bfloat16 and src.dtype.scalar in (tl.float32, tl.float64):
                return _interp.TensorHandle(_to_bf16_bits(src.data), dst_type.scalar)
            return orig(self, src, dst_type, *args, **kwargs)

        return cast_impl

    if hasattr(_interp.InterpreterBuilder, "cast_impl"):
        scope.patch(_interp.InterpreterBuilder, "cast_impl", make)


# ---- tl.dot ---------------------------------------------------------------------------------------------
def _dot_precision(scope: PatchScope) -> None:
    """tl.dot of float32 tiles: the tensor cores' TF32 arithmetic at the precision the frontend chose
    (input_precision, allow_tf32, TRITON_F32_DEFAULT and the default are the compiler's own code)."""
    if hasattr(_interp.InterpreterBuilder, "create_dot"):
        scope.patch(_interp.InterpreterBuilder, "create_dot", _create_dot)
    # The input precisions the NVIDIA backend of this release accepts (bf16x3 and bf16x6 from 3.6),
    # where the interpreter's options list fewer: a kernel the GPU compiles runs here too.
    builder = getattr(_interp, "interpreter_builder", None)
    options = getattr(builder, "options", None)
    allowed = tuple(getattr(options, "allowed_dot_input_precisions", ()))
    wanted = allowed + tuple(p for p in _nvidia_dot_precisions() if p not in allowed)
    if options is not None and wanted != allowed:
        scope.set_attr(builder, "options", dataclasses.replace(options, allowed_dot_input_precisions=wanted))


def _create_dot(orig: Method) -> Method:
    def create_dot(
        self: Triton, a: Triton, b: Triton, d: Triton, input_precision: Triton, *args: Any, **kwargs: Any
    ) -> Triton:
        precision = dot_precision_name(input_precision)
        if (
            precision in ("tf32", "tf32x3", "bf16x3", "bf16x6")
            and a.dtype.scalar == tl.float32
            and b.dtype.scalar == tl.float32
            and d.data.dtype == np.float32
        ):
            return _interp.TensorHandle(_tf32.dot(a.data, b.data, d.data, precision), d.dtype.scalar)
        if (a.dtype.scalar == tl.bfloat16 or b.dtype.scalar == tl.bfloat16) and d.data.dtype == np.float32:
            # The interpreter keeps bfloat16 as its uint16 bits and multiplies those as integers (every
            # release 3.2 - 3.9). The GPU multiplies the values (exact in float32) and sums in float32.
            av, bv = _bf16_values(a), _bf16_values(b)
            return _interp.TensorHandle(np.matmul(av, bv, dtype=np.float32) + d.data, d.dtype.scalar)
        return orig(self, a, b, d, input_precision, *args, **kwargs)

    return create_dot


# ---- 3.2's boolean `not`, descriptors, numpy 2.4+ -------------------------------------------------
def _boolean_not(scope: PatchScope) -> None:
    """3.2's `not_` on a boolean tensor asks the builder for an i1 type the interpreter lacks, and an
    all-ones i1 value (`not` is `x ^ all_ones`)."""
    builder_cls = _interp.InterpreterBuilder
    np_dtype = _interp._get_np_dtype
    if not hasattr(builder_cls, "get_int1_ty"):
        scope.set_attr(builder_cls, "get_int1_ty", _int1_ty)

    def make(orig: Method) -> Method:
        def get_all_ones_value(self: Triton, type: Triton) -> Triton:
            if np_dtype(type) == np.bool_:
                return _interp.TensorHandle(np.full(1, True), type.scalar)
            return orig(self, type)

        return get_all_ones_value

    scope.patch(builder_cls, "get_all_ones_value", make)


def _int1_ty(self: Triton) -> Triton:
    return tl.int1


def _descriptor_alignment(scope: PatchScope) -> None:
    desc = getattr(_interp, "TensorDescHandle", None)
    if desc is not None and _checks_strides_in_elements(desc):
        scope.set_attr(desc, "validate", _validate_descriptor)


def _numpy_index(scope: PatchScope) -> None:
    """numpy 2.4+: int() of a 1-element array."""

    def make(orig: Method) -> Method:
        def _patch_lang_tensor(tensor: Triton, *args: Any, **kwargs: Any) -> Any:
            out = orig(tensor, *args, **kwargs)
            patched = args[0] if args else kwargs.get("scope")
            if patched is not None and hasattr(patched, "set_attr"):
                patched.set_attr(tensor, "__index__", _index)
            else:
                tensor.__index__ = _index
            return out

        return _patch_lang_tensor

    scope.patch(_interp, "_patch_lang_tensor", make)


# In the order the patches were made before (a later wrapper sits on top of an earlier one).
_PATCHES: tuple[Callable[[PatchScope], None], ...] = (
    _and_or_not,
    _string_annotations_and_list_grids,
    _jit_scalar_types,
    _libdevice_calls,
    _libdevice_modules_bound,
    _grid_dependency_control,
    _fp8_rounding,
    _bf16_arithmetic,
    _bf16_reductions,
    _dot_precision,
    _boolean_not,
    _bf16_casts,
    _descriptor_alignment,
    _numpy_index,
)
