"""The z3 extra (`triton-lens[symbolic]`): an out-of-bounds question over every admitted size, asked to a
solver where the cheap path (the re-run at n + 1) has no answer, then confirmed by a re-launch.

The cheap path asks one size: the ragged neighbour n + 1 of the script's n. A tail bug shows there, but not
a mask that holds at n + 1 and fails elsewhere (a first block taken as full, `mask = (offs < n) | (pid ==
0)`, leaves x at every n below the block). With z3 importable, each access of the kernel whose pointer,
offset and mask it can read from the kernel's source becomes one query: is there a size n (1 .. the
largest the GPU holds, its grid within CUDA's limits, the kernel's `tl.assume`s holding), a program of the
grid at n and a lane whose mask is on and whose offset is outside the tensor? The smallest such n (z3's
Optimize) is then re-launched (size_probe.SizeCheck.probe, that program on address-only memory) and only what that run
shows is reported: a witness the run refutes, or a size the kernel refuses, is excluded and the query
asked again (a few times at most). The solver proposes, the run decides.

What it reads: 1-D kernels written as straight-line code before the access (assignments, `tl.assume`,
no loops or branches), offsets from `tl.program_id`, `tl.arange`, integer arguments, constexprs and + - *
// %, `tl.minimum`/`maximum`/`where`/`cdiv`, masks of comparisons joined by & | ~; a pointer argument plus
an offset; tensors whose element count moves linearly with the size; a grid written in the launch
statement (`triton.cdiv`, `x.numel()`, `x.shape[0]`) or held. Anything else: no query, as without z3.
Pure Python over the AST and z3; no triton import.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata
import importlib.util
import linecache
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .size_model import GRID_LIMITS, GRID_META

# z3's work is bounded by its resource count (rlimit), not by seconds, so that the same file gives the same
# findings on any machine and under any load (as the check's access budget does): per query, and per
# launch over all its queries. A query of the corpus takes 1,000-3,000; a hard nonlinear one about
# 500,000 (roughly 1 s on a loaded 2-core VM).
QUERY_RLIMIT = 1_000_000
LAUNCH_RLIMIT = 5_000_000
ATTEMPTS = 3  # witnesses tried per access (one the re-launch refutes is excluded, the query asked again)


# z3 is imported by name at run time (an optional extra) and read as Any: its terms, its module, its
# solver are untyped here, the one boundary of this module.
Z3 = Any
Term = Any  # a z3 term (Int or Bool), or a (tensor name, offset term) pair for a pointer


def z3_module() -> Z3 | None:
    """z3, or None when it is not importable or switched off (TRITON_LENS_SYMBOLIC=0)."""
    if os.environ.get("TRITON_LENS_SYMBOLIC", "1") == "0":
        return None
    try:
        return importlib.import_module("z3")
    except ImportError:
        return None


def version() -> str | None:
    """What the size check's results depend on (in size_cache's key): z3-solver's version, or None without
    it. Read without importing z3 (about 0.1 s), which waits for a launch that has a query to ask."""
    if os.environ.get("TRITON_LENS_SYMBOLIC", "1") == "0" or importlib.util.find_spec("z3") is None:
        return None
    try:
        return importlib.metadata.version("z3-solver")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class _Unknown(Exception):
    pass


@dataclass
class Access:
    line: int
    kind: str  # "load" | "store"
    tensor: str
    offset: Term  # z3 Int term
    mask: Term  # z3 Bool term


@dataclass
class Witness:
    size: int
    program: tuple[int, int, int]


_TL = {"tl", "triton.language", "language"}
_WIDE = {f"{m}.{t}" for m in _TL for t in ("int32", "int64")}


def _tl_call(node: ast.AST) -> str | None:
    """'load' for tl.load(...) (or triton.language.load)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        base = ast.unparse(node.func.value)
        if base in _TL or base == "triton":
            return node.func.attr
    return None


class Model:
    """The kernel's accesses as terms over the size n, the program ids and the lane."""

    def __init__(self, z3: Z3, params: dict[str, Term], grid_terms: list[Term] | None) -> None:
        self.z3 = z3
        self.n = z3.Int("n")
        self.pid = [z3.Int(f"pid{i}") for i in range(3)]
        self.lane = z3.Int("lane")
        self.block: int | None = None  # the one length of every tl.arange (1-D kernels only)
        self.env: dict[str, Any] = dict(params)
        self.params = {k: v for k, v in params.items() if v is not None}  # the parameters as passed
        self.assumptions: list[Any] = []
        self.assumed_text: list[str] = []  # each `tl.assume(...)` as written, for what a proof assumed
        self.narrowed = False  # a cast to a type narrower than int32 or unsigned (no proof: see proof())
        self.accesses: list[Access] = []
        self.grid_terms = grid_terms

    # -- expressions ------------------------------------------------------------------------------
    def term(self, node: ast.AST) -> Any:
        z3 = self.z3
        if isinstance(node, ast.Constant) and type(node.value) in (int, bool):
            return z3.BoolVal(node.value) if type(node.value) is bool else z3.IntVal(node.value)
        if isinstance(node, ast.Name):
            if node.id not in self.env or self.env[node.id] is None:
                raise _Unknown(node.id)
            return self.env[node.id]
        if isinstance(node, ast.BinOp):
            a, b = self.term(node.left), self.term(node.right)
            if isinstance(a, tuple) or isinstance(b, tuple):  # a pointer plus an offset
                if isinstance(node.op, ast.Add) and not (isinstance(a, tuple) and isinstance(b, tuple)):
                    p, off = (a, b) if isinstance(a, tuple) else (b, a)
                    return (p[0], p[1] + self._int(off))
                raise _Unknown("pointer arithmetic")
            if z3.is_bool(a) and z3.is_bool(b):
                if isinstance(node.op, ast.BitAnd):
                    return z3.And(a, b)
                if isinstance(node.op, ast.BitOr):
                    return z3.Or(a, b)
                raise _Unknown("bool op")
            a, b = self._int(a), self._int(b)
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            if isinstance(node.op, (ast.FloorDiv, ast.Mod)):
                if not (z3.is_int_value(b) and b.as_long() > 0):
                    raise _Unknown("division by a non-constant")
                return a / b if isinstance(node.op, ast.FloorDiv) else a % b
            if isinstance(node.op, ast.Pow) and z3.is_int_value(a) and z3.is_int_value(b) and 0 <= b.as_long() <= 64:
                return z3.IntVal(a.as_long() ** b.as_long())
            raise _Unknown("operator")
        if isinstance(node, ast.UnaryOp):
            x = self.term(node.operand)
            if isinstance(node.op, ast.USub):
                return -self._int(x)
            if isinstance(node.op, (ast.Invert, ast.Not)) and z3.is_bool(x):
                return z3.Not(x)
            raise _Unknown("unary")
        if isinstance(node, ast.Compare):  # chained too: a <= b < c is a <= b and b < c
            parts = []
            left = self._int(self.term(node.left))
            for op, right_node in zip(node.ops, node.comparators):
                a, b = left, self._int(self.term(right_node))
                table = {
                    ast.Lt: a < b,
                    ast.LtE: a <= b,
                    ast.Gt: a > b,
                    ast.GtE: a >= b,
                    ast.Eq: a == b,
                    ast.NotEq: a != b,
                }
                if type(op) not in table:
                    raise _Unknown("compare")
                parts.append(table[type(op)])
                left = b
            return parts[0] if len(parts) == 1 else z3.And(*parts)
        if isinstance(node, ast.BoolOp):
            vals = [self.term(v) for v in node.values]
            if not all(z3.is_bool(v) for v in vals):
                raise _Unknown("bool op")
            return z3.And(*vals) if isinstance(node.op, ast.And) else z3.Or(*vals)
        if isinstance(node, ast.Call):
            return self.call(node)
        raise _Unknown(type(node).__name__)

    def _int(self, x: Any) -> Any:
        if isinstance(x, tuple) or self.z3.is_bool(x):
            raise _Unknown("not an integer")
        return x

    def call(self, node: ast.Call) -> Any:
        z3 = self.z3
        if isinstance(node.func, ast.Attribute) and node.func.attr == "to" and not node.keywords:
            # A cast: a witness's question is about bounds, not widths. A proof takes every operation as
            # int32 and so holds after a widening cast; a narrowing one (int16, unsigned) it cannot read.
            if not (node.args and ast.unparse(node.args[0]) in _WIDE):
                self.narrowed = True
            return self.term(node.func.value)
        name = _tl_call(node)
        args = node.args
        if name == "program_id":
            axis = self._const(args[0] if args else node.keywords[0].value)
            return self.pid[axis]
        if name == "arange":
            lo, hi = self._const(args[0]), self._const(args[1])
            if self.block is not None and self.block != hi - lo:
                raise _Unknown("two block lengths")
            self.block = hi - lo
            return lo + self.lane
        if name == "multiple_of" and len(args) == 2:
            # On an integer argument as passed, the claim is about what the host passes: assumed, as the size
            # check's re-launches refuse a size that breaks it (compat.claims_checked). On a computed value
            # (it may have wrapped: that is the bug to find) or a block (contiguous groups): the value alone.
            x, d = self._int(self.term(args[0])), self._const(args[1])
            arg = args[0].id if isinstance(args[0], ast.Name) else None
            passed = self.params.get(arg) if arg is not None else None
            if d > 0 and passed is not None and not isinstance(passed, tuple) and x.eq(passed):
                self.assumptions.append(x % d == 0)
                self.assumed_text.append(f"`{ast.unparse(node)}`")
            return x
        if name in ("minimum", "maximum") and len(args) == 2:
            a, b = self._int(self.term(args[0])), self._int(self.term(args[1]))
            return z3.If(a < b, a, b) if name == "minimum" else z3.If(a > b, a, b)
        if name == "where" and len(args) == 3:
            c, a, b = self.term(args[0]), self.term(args[1]), self.term(args[2])
            return z3.If(c, self._int(a), self._int(b))
        if name == "cdiv" and len(args) == 2:
            a, b = self._int(self.term(args[0])), self._int(self.term(args[1]))
            if not (z3.is_int_value(b) and b.as_long() > 0):
                raise _Unknown("cdiv by a non-constant")
            return (a + b - 1) / b
        raise _Unknown(f"call {ast.unparse(node.func)}")

    def _const(self, node: ast.AST) -> int:
        x = self.z3.simplify(self._int(self.term(node)))
        if not self.z3.is_int_value(x):
            raise _Unknown("not a constant")
        return int(x.as_long())

    # -- statements -------------------------------------------------------------------------------
    def walk(self, body: list[ast.stmt]) -> None:
        for st in body:
            if isinstance(st, (ast.Assign, ast.AugAssign, ast.Expr)):
                for call in _calls(st):
                    self._access(call)
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                self.env[st.targets[0].id] = self._maybe(st.value)
            elif isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Name):
                self.env[st.target.id] = self._maybe(ast.BinOp(ast.Name(st.target.id), st.op, st.value))
            elif isinstance(st, ast.Expr) and _tl_call(st.value) == "assume":
                c = self._maybe(st.value.args[0]) if isinstance(st.value, ast.Call) and st.value.args else None
                if c is not None and self.z3.is_bool(c):
                    self.assumptions.append(c)
                    assert isinstance(st.value, ast.Call)
                    self.assumed_text.append(f"`tl.assume({ast.unparse(st.value.args[0])})`")
            elif isinstance(st, (ast.Expr, ast.Pass)):
                continue
            else:
                return  # a loop, a branch, a return: what follows is not modelled

    def state(self, node: ast.AST, text: str) -> None:
        """A condition the sizes meet (the kernel author's `# triton-lens: sizes`), over the parameters' names:
        assumed like a `tl.assume`; one the model cannot read (a name it does not know) is left out."""
        c = self._maybe(node)
        if c is not None and self.z3.is_bool(c):
            self.assumptions.append(c)
            self.assumed_text.append(text)

    def _maybe(self, node: ast.AST) -> Any:
        try:
            return self.term(node)
        except (_Unknown, IndexError, AttributeError):
            return None

    def _access(self, call: ast.Call) -> None:
        kind = _tl_call(call)
        if kind not in ("load", "store") or not call.args:
            return
        ptr = self._maybe(call.args[0])
        if not isinstance(ptr, tuple):
            return
        mask_node = next((k.value for k in call.keywords if k.arg == "mask"), None)
        if mask_node is None and len(call.args) > (1 if kind == "load" else 2):
            mask_node = call.args[1 if kind == "load" else 2]
        mask = self.z3.BoolVal(True) if mask_node is None else self._maybe(mask_node)
        if mask is None or not self.z3.is_bool(mask):
            return
        self.accesses.append(Access(call.lineno, kind, ptr[0], ptr[1], mask))


def _calls(st: ast.stmt) -> list[ast.Call]:
    return [c for c in ast.walk(st) if isinstance(c, ast.Call) and _tl_call(c) in ("load", "store")]


_trees: dict[tuple[str, int], ast.Module | None] = {}


def kernel_def(file: str, line: int) -> ast.FunctionDef | None:
    lines = linecache.getlines(file)
    key = (file, hash("".join(lines)))
    if key not in _trees:
        try:
            _trees[key] = ast.parse("".join(lines))
        except (SyntaxError, ValueError):
            _trees[key] = None
    tree = _trees[key]
    if tree is None:
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and (
            node.lineno == line or any(d.lineno == line for d in node.decorator_list)
        ):
            return node
    return None


def linear(values: list[tuple[int, int]]) -> tuple[int, int] | None:
    """(a, b) with value = a * n + b through every (n, value) given; None when they are not on one line."""
    (n0, v0), (n1, v1) = values[0], values[1]
    if n1 == n0 or (v1 - v0) % (n1 - n0):
        return None
    a = (v1 - v0) // (n1 - n0)
    b = v0 - a * n0
    return (a, b) if all(v == a * n + b for n, v in values) else None


# A tensor's dimension (axis) or element count (axis None) as a * n + b: (a, b), None when not linear in n.
Dims = Callable[[str | None, int | None], tuple[int, int] | None]


def grid_terms(
    z3: Z3,
    n: Term,
    expression: tuple[str, dict[str, tuple[Any, str | None]]] | None,
    held: tuple[int, int, int] | None,
    v: int,
    dims: Dims,
    meta: dict[str, Any] | None = None,
) -> list[Term] | None:
    """The grid as terms of n: held numbers, or the launch statement's (or grid function's) expression with
    its names read as the check reads them (an int equal to the size is n; `x.numel()`, `x.shape[i]` through
    `dims`; a grid function's `meta["BLOCK"]` from `meta`, the launch's arguments by name)."""

    def value(val: Any) -> Term:
        if type(val) is int:
            return n if val == v else z3.IntVal(val)
        raise _Unknown(repr(val))

    if held is not None:
        return [z3.IntVal(g) for g in held]
    if expression is None:
        return None
    text, scope = expression
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, (ast.Tuple, ast.List)):
        return None

    def t(x: ast.AST) -> Term:
        if isinstance(x, ast.Constant) and type(x.value) is int:
            return z3.IntVal(x.value)
        if isinstance(x, ast.Name) and x.id in scope:
            val, _ = scope[x.id]
            if type(val) is int:
                return value(val)
        if (  # a grid function's meta["BLOCK"]
            isinstance(x, ast.Subscript)
            and isinstance(x.value, ast.Name)
            and scope.get(x.value.id, (None, None))[0] == GRID_META
            and isinstance(x.slice, ast.Constant)
            and meta is not None
            and x.slice.value in meta
        ):
            return value(meta[x.slice.value])
        if isinstance(x, ast.BinOp):
            a, b = t(x.left), t(x.right)
            if isinstance(x.op, ast.Add):
                return a + b
            if isinstance(x.op, ast.Sub):
                return a - b
            if isinstance(x.op, ast.Mult):
                return a * b
            if isinstance(x.op, ast.FloorDiv) and z3.is_int_value(b) and b.as_long() > 0:
                return a / b
        if isinstance(x, ast.Call) and isinstance(x.func, ast.Attribute):
            f = x.func.attr
            if f == "cdiv" and len(x.args) == 2:
                a, b = t(x.args[0]), t(x.args[1])
                if z3.is_int_value(b) and b.as_long() > 0:
                    return (a + b - 1) / b
            if f == "numel" and isinstance(x.func.value, ast.Name) and not x.args:
                d = dims(scope.get(x.func.value.id, (None, None))[1], None)
                if d is not None:
                    return d[0] * n + d[1]
        if isinstance(x, ast.Subscript) and isinstance(x.value, ast.Attribute) and x.value.attr == "shape":
            base = x.value.value
            if isinstance(base, ast.Name) and isinstance(x.slice, ast.Constant) and type(x.slice.value) is int:
                d = dims(scope.get(base.id, (None, None))[1], x.slice.value)
                if d is not None:
                    return d[0] * n + d[1]
        raise _Unknown(ast.unparse(x))

    try:
        g = [t(x) for x in node.elts]
    except _Unknown:
        return None
    return (g + [z3.IntVal(1)] * 3)[:3]


class Work:
    """z3's resource count left to one launch's check."""

    def __init__(self, left: int = LAUNCH_RLIMIT) -> None:
        self.left = left


def _domain(model: Model, lo: int, hi: int) -> list[Term]:
    """Sizes in [lo, hi], the programs of the grid at each (CUDA's limits on it), the lanes of the block, the
    kernel's `tl.assume`s."""
    n = model.n
    base = [n >= lo, n <= hi, model.lane >= 0, model.lane < (model.block or 1), *model.assumptions]
    assert model.grid_terms is not None
    # Only sizes whose grid CUDA can launch: past its limits the launch fails and the kernel never runs.
    for p, g, most in zip(model.pid, model.grid_terms, GRID_LIMITS):
        base += [p >= 0, p < g, g <= most]
    return base


def _spend(work: Work, solver: Any) -> None:
    st = solver.statistics()
    work.left -= int(st.get_key_value("rlimit count")) if "rlimit count" in st.keys() else QUERY_RLIMIT


def witnesses(
    model: Model, access: Access, numel: tuple[int, int], lo: int, hi: int, exclude: set[int], work: Work
) -> Iterator[Witness]:
    """Sizes in [lo, hi] (smallest first) where an active lane of `access` leaves its tensor, one per call
    of next(): the caller confirms each by a run and asks for the next when the run refutes it. Stops
    when z3 answers unsat or unknown (its resource count spent: the per-query or the launch's)."""
    z3 = model.z3
    n = model.n
    a, b = numel
    base = _domain(model, lo, hi)
    out_of = z3.Or(access.offset < 0, access.offset >= a * n + b)
    excluded = set(exclude)
    for _ in range(ATTEMPTS):
        if work.left <= 0:
            return
        opt = z3.Optimize()
        opt.set("rlimit", min(QUERY_RLIMIT, work.left))
        opt.add(*base, access.mask, out_of, *[n != x for x in excluded])
        opt.minimize(n)
        answer = opt.check()
        _spend(work, opt)
        if answer != z3.sat:
            return
        m = opt.model()
        x, y, z = (int(m.eval(p, True).as_long()) for p in model.pid)
        w = Witness(int(m.eval(n).as_long()), (x, y, z))
        excluded.add(w.size)
        yield w


INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1


@dataclass
class Proof:
    """Every active lane of an access stays in its tensor at every size in [lo, upto]."""

    upto: int
    # The smallest size at which an operation of the access's offset or mask leaves int32 (or a division's
    # dividend goes negative): the proof stops below it. None: nothing did up to the size asked.
    inexact_from: int | None


def _operations(z3: Z3, roots: list[Term]) -> list[Term]:
    """Every integer operation under `roots`, each once: the values the compiled kernel computes for the
    access (its offset and its mask, every lane of the block, active or not: a mask is computed from them)."""
    ops = {z3.Z3_OP_ADD, z3.Z3_OP_SUB, z3.Z3_OP_MUL, z3.Z3_OP_IDIV, z3.Z3_OP_MOD, z3.Z3_OP_UMINUS}
    seen: set[int] = set()
    out: list[Term] = []
    todo = list(roots)
    while todo:
        t = todo.pop()
        if t.get_id() in seen or not z3.is_app(t):
            continue
        seen.add(t.get_id())
        if t.decl().kind() in ops and z3.is_int(t):
            out.append(t)
        todo.extend(t.children())
    return out


def proof(model: Model, access: Access, numel: tuple[int, int], lo: int, hi: int, work: Work) -> Proof | None:
    """A proof that no active lane of `access` leaves its tensor at any size in [lo, upto], upto as close to
    hi as it holds; None when there is none (a lane that can leave, or z3 out of its resource count).

    The model reads integers as unbounded and `//`, `%` as Euclidean, where the compiled kernel computes in
    int32 (or wider) and truncates toward zero. The two agree where no operation of the offset and the mask
    leaves int32 and no dividend is negative: so the proof asks that first, over every lane (the smallest
    size where it fails bounds the proof below it), then that no active lane is outside the tensor there.
    Widths are all taken as int32, the narrowest the kernel may compute in: an int64 operation held to
    int32 only makes the proof stop sooner, never claim more."""
    z3 = model.z3
    n = model.n
    a, b = numel
    if model.narrowed:
        return None
    ops = _operations(z3, [access.offset, access.mask])
    inexact = [z3.Or(t < INT32_MIN, t > INT32_MAX) for t in ops]
    inexact += [t.arg(0) < 0 for t in ops if t.decl().kind() in (z3.Z3_OP_IDIV, z3.Z3_OP_MOD)]
    inexact_from = None
    if inexact:
        if work.left <= 0:
            return None
        opt = z3.Optimize()
        opt.set("rlimit", min(QUERY_RLIMIT, work.left))
        opt.add(*_domain(model, lo, hi), z3.Or(*inexact))
        opt.minimize(n)
        answer = opt.check()
        _spend(work, opt)
        if answer == z3.sat:
            inexact_from = int(opt.model().eval(n).as_long())
            hi = inexact_from - 1
        elif answer != z3.unsat:
            return None
    if hi < lo or work.left <= 0:
        return None
    s = z3.Solver()
    s.set("rlimit", min(QUERY_RLIMIT, work.left))
    s.add(*_domain(model, lo, hi), access.mask, z3.Or(access.offset < 0, access.offset >= a * n + b))
    answer = s.check()
    _spend(work, s)
    return Proof(hi, inexact_from) if answer == z3.unsat else None
