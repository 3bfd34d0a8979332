"""The sizes a launch admits besides its own: which values move together, and what follows from them.

A size is a value of the launch (an integer argument, a tensor dimension, a tensor's element count).
Changing it to another value changes everything equal to it at the launch: the integer arguments with
that value, the dimensions of that length (or, for a tensor with no such dimension, its element count),
and the integer arguments equal to a stride that changes with them. That is the reading "equal at the
script's sizes means the same size", which `Resize.assumed` names when it joined two or more of them.
Constexpr arguments never change (another value is another kernel). The grid follows only where the
launch says how (size_probe.py evaluates its expression again); numbers alone are held.

Pure: torch tensors in, plain tuples out; no triton, no interpreter.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

INT32_MAX = 2**31 - 1
# CUDA's limits on a launch grid, the same on every compute capability Triton targets (CUDA C++
# Programming Guide, "Features and Technical Specifications": maximum x-dimension of a grid of thread
# blocks 2**31 - 1, maximum y- or z-dimension 65535). A compiled Triton launch past them fails at launch
# ("invalid argument"; triton's own check says "grid too large") and the kernel never runs, so a size whose
# grid exceeds them is not a size the kernel admits: the size check bounds its sizes by them as by memory.
GRID_LIMITS = (INT32_MAX, 65_535, 65_535)
# The value a grid function's parameter stands for in its expression's scope: the launch's arguments by
# name (size_symbolic.grid_terms reads `meta["BLOCK"]` from them).
GRID_META = "<the launch's arguments by name>"


def grid_fits(grid: tuple[int, ...]) -> bool:
    """Whether CUDA can launch a grid of these (x, y, z) extents (GRID_LIMITS)."""
    return all(g <= lim for g, lim in zip(grid, GRID_LIMITS))


def grid_excess(grid: tuple[int, ...]) -> int | None:
    """The first grid axis past CUDA's limit (0, 1 or 2), or None when the grid fits."""
    return next((k for k, (g, lim) in enumerate(zip(grid, GRID_LIMITS)) if g > lim), None)


@dataclass(frozen=True)
class TensorSpec:
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    itemsize: int

    @property
    def span_bytes(self) -> int:
        """Bytes from the first element to one past the last (what an allocation of it needs)."""
        if any(s == 0 for s in self.shape):
            return 0
        last = sum((d - 1) * st for d, st in zip(self.shape, self.strides) if st > 0)
        return (last + 1) * self.itemsize

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


def spec_of(t: Any) -> TensorSpec:
    return TensorSpec(tuple(int(d) for d in t.shape), tuple(int(s) for s in t.stride()), int(t.element_size()))


def _packed_strides(shape: tuple[int, ...], like: tuple[int, ...]) -> tuple[int, ...]:
    """Strides of a dense tensor of `shape` whose dimensions are laid out in the order of `like`'s strides."""
    order = sorted(range(len(shape)), key=lambda k: (like[k], k))  # innermost first
    out = [0] * len(shape)
    step = 1
    for k in order:
        out[k] = step if like[k] != 0 else 0
        step *= max(shape[k], 1) if like[k] != 0 else 1
    return tuple(out)


def _dense(spec: TensorSpec) -> bool:
    return spec.span_bytes == spec.numel * spec.itemsize and len(set(spec.strides)) == len(spec.strides)


@dataclass
class Resize:
    """The launch with every value equal to `old` changed to `new`."""

    old: int
    new: int
    ints: dict[str, int]  # integer arguments, by name, as they become
    tensors: dict[str, TensorSpec]  # tensor arguments, by name, as they become
    moved: list[str] = field(default_factory=list)  # what changed with the size, as the user reads it
    assumed: list[str] = field(default_factory=list)  # readings of equal values taken as one size

    @property
    def bytes(self) -> int:
        return sum(t.span_bytes for t in self.tensors.values())


def _per_block(d: int, old: int, blocks: frozenset[tuple[int, int]]) -> int | None:
    """The block size B for which a dimension d is the host's `cdiv(old, B)` (a buffer of one value per
    program: partial sums, per-chunk states); None when it is not one."""
    if d < 2 or d >= old:
        return None
    return next((b for b, e in sorted(blocks) if e == d and b > 1 and -(-old // b) == d), None)


def per_program_blocks(old: int, constants: set[int], grid: tuple[int, ...]) -> frozenset[tuple[int, int]]:
    """(B, extent) for each integer constexpr B and grid extent equal to `cdiv(old, B)`: a tensor dimension
    of that extent is a buffer of one value per program along that axis, sized as the grid is. Only then:
    at a multiple of B, `cdiv(old, B)` and the host's `old // B` (one scale per group, which stays at
    old + 1) are the same number, and only a buffer sized like the grid says which one the host wrote."""
    return frozenset((b, g) for b in constants for g in grid if b > 1 and g >= 2 and -(-old // b) == g)


def _names_tensor(arg: str, tensor: str) -> bool:
    """Whether an argument's name names the tensor: its words (`dA_cs` of `dA_cs_ptr`) appear together in
    the argument's (`stride_dA_cs_chunk`), not inside a longer word (`stride_ddA_cs_batch`)."""
    base = [w for w in tensor.split("_") if w.lower() not in ("ptr", "ptrs", "")]
    words = arg.split("_")
    return bool(base) and any(words[i : i + len(base)] == base for i in range(len(words) - len(base) + 1))


def resize(
    old: int,
    new: int,
    ints: dict[str, int],
    tensors: dict[str, TensorSpec],
    blocks: frozenset[tuple[int, int]] = frozenset(),
) -> Resize | None:
    """The launch at size `new` in place of `old`; None when no argument moves with it, or when a tensor
    that moves is not dense (a view whose other dimensions could not be laid out again). `blocks`: from
    per_program_blocks; a dimension of one value per program, `cdiv(old, B)`, moves to `cdiv(new, B)`."""
    out_ints = dict(ints)
    out_tensors: dict[str, TensorSpec] = {}
    moved: list[str] = []
    stride_map: dict[int, int] = {}
    later: list[str] = []  # the per-block buffers: named after what the size is (describe_size names moved[0])
    # The other dimensions of the tensors that have the size as a dimension: they keep their value, so a
    # tensor whose last dimension has it is not k blocks of the size (48 = 8 x 6 beside a (6, 3, 48) source).
    kept = {d for spec in tensors.values() if old in spec.shape for d in spec.shape if d != old}
    direct: dict[int, TensorSpec] = {}  # element count at the launch -> the new spec, of tensors with the size
    unmoved: list[str] = []
    for name, spec in tensors.items():
        per_block = [_per_block(d, old, blocks) for d in spec.shape]
        if old not in spec.shape and any(per_block) and spec.numel != old:
            shape = tuple(-(-new // b) if b else d for d, b in zip(spec.shape, per_block))
            later.append(f"{name}.shape (one per block of {next(b for b in per_block if b)})")
        elif old in spec.shape:
            shape = tuple(new if d == old else d for d in spec.shape)
            moved.append(f"{name}.shape")
        elif len(spec.shape) >= 1 and spec.numel == old and old > 1:
            shape = (new,)
            moved.append(f"{name}.numel()")
        elif old > 1 and spec.shape and spec.shape[-1] not in kept and _multiple(spec.shape[-1], old):
            # the last dimension k blocks of the size: torch.empty(6 * n), a [gate | up] projection of 2 * d
            k = spec.shape[-1] // old
            shape = spec.shape[:-1] + (k * new,)
            moved.append(f"{name}.shape ({k} × the size)")
        else:
            out_tensors[name] = spec
            unmoved.append(name)
            continue
        if not _dense(spec):
            return None
        strides = _packed_strides(shape, spec.strides)
        if len(shape) == len(spec.shape):  # a tensor read as flat memory (its numel) has no strides to map
            for a, b in zip(spec.strides, strides):
                if a != b and a > 1:
                    stride_map.setdefault(a, b)
        out_tensors[name] = TensorSpec(shape, strides, spec.itemsize)
        if old in spec.shape:
            direct.setdefault(spec.numel, out_tensors[name])
    for name in unmoved:
        spec = tensors[name]
        if not _dense(spec) or old <= 1:
            continue
        if len(spec.shape) == 1 and spec.shape[0] == old + 1:
            # offsets of the size's segments (cu_seqlens, seqstart): one more than there are segments
            out_tensors[name] = TensorSpec((new + 1,), spec.strides, spec.itemsize)
            later.append(f"{name}.shape (the size + 1: offsets)")
        elif spec.numel > old and spec.numel in direct:
            # the same elements as a tensor that has the size, at another shape: out = torch.empty_like(x)
            # of a (3, 5, n) x launched as x.reshape(-1, n); it takes that tensor's shape
            like = direct[spec.numel]
            out_tensors[name] = TensorSpec(like.shape, like.strides, spec.itemsize)
            later.append(f"{name}.shape (a view of the same size)")
    # What keeps its value at the new size: the dimensions and strides (above 1) of tensors that keep them.
    # An argument named as a stride and equal to a stride that stays is that tensor's stride, not the size
    # (mamba-ssm's state batch stride 768 = A's element count); one not named as a stride, equal to a
    # dimension that stays and to a stride that moves, is that dimension (seqlen 32 = the chunk stride).
    held_dims: set[int] = set()
    held_strides: dict[int, set[str]] = {}  # a stride value that stays -> the tensors it is a stride of
    moving_strides: dict[int, set[str]] = {}
    for name, spec in tensors.items():
        new_spec = out_tensors[name]
        if len(new_spec.shape) == len(spec.shape):
            held_dims |= {a for a, b in zip(spec.shape, new_spec.shape) if a == b and a > 1}
            for a, b in zip(spec.strides, new_spec.strides):
                if a > 1:
                    (held_strides if a == b else moving_strides).setdefault(a, set()).add(name)
    for name, v in ints.items():
        named_stride = "stride" in name.lower()
        if named_stride and v in held_strides:
            if v not in stride_map:
                continue
            # Equal to a stride that stays and to one that moves: the argument's name says whose it is
            # (`stride_dA_cs_chunk` is dA_cs's, not ddA_cs's); when it names neither, it moves.
            if any(_names_tensor(name, t) for t in held_strides[v]) and not any(
                _names_tensor(name, t) for t in moving_strides.get(v, ())
            ):
                continue
        if not named_stride and v != old and v in stride_map and v in held_dims:
            continue
        if v == old:
            out_ints[name] = new
            moved.append(name)
        elif v in stride_map:
            out_ints[name] = stride_map[v]
            moved.append(f"{name} (a stride)")
    moved += later
    if not moved or not any("." in m for m in moved):
        return None  # a size is a tensor's extent: integer arguments moving alone are not one
    assumed = []
    arg_names = [m for m in moved if m in ints]
    of = [m.split(".")[0] for m in moved if "." in m and m not in later]
    if arg_names and of:
        assumed.append(
            f"{' and '.join(arg_names)} {'is' if len(arg_names) == 1 else 'are'} the size {old} of {_names(of)}"
        )
    elif len(arg_names) > 1:
        assumed.append(f"{' and '.join(arg_names)} are one size ({old} at the launch)")
    elif len(of) > 1:
        assumed.append(f"{_names(of)} grow together (all {old} at the launch)")
    return Resize(old, new, out_ints, out_tensors, moved, assumed)


def _multiple(d: int, old: int) -> bool:
    return d % old == 0 and 2 <= d // old <= 16


def _names(xs: list[str]) -> str:
    return xs[0] if len(xs) == 1 else ", ".join(xs[:-1]) + " and " + xs[-1]


def largest_fitting(
    old: int,
    ints: dict[str, int],
    tensors: dict[str, TensorSpec],
    memory_bytes: int,
    limit: int = INT32_MAX,
    blocks: frozenset[tuple[int, int]] = frozenset(),
    admits: Callable[[Resize], bool] | None = None,
) -> Resize | None:
    """The largest size (at most `limit`, int32 arguments staying int32) whose tensors fit in memory and,
    with `admits`, that it admits (size_probe: a grid CUDA can launch). Both only fail from some size on."""
    first = resize(old, old, ints, tensors, blocks)
    if first is None:
        return None
    lo, hi = old, limit
    best = None
    while lo <= hi:
        mid = (lo + hi) // 2
        r = resize(old, mid, ints, tensors, blocks)
        if r is not None and r.bytes <= memory_bytes and (admits is None or admits(r)):
            best, lo = r, mid + 1
        else:
            hi = mid - 1
    return best


def candidate_sizes(
    ints: dict[str, int], tensors: dict[str, TensorSpec], constants: set[int] | None = None, most: int = 6
) -> list[int]:
    """The launch's sizes worth moving: integer arguments and tensor dimensions above 1, each once,
    in the order the launch names them (arguments first). Not a value equal to an integer constexpr
    (`BLOCK = next_power_of_2(n)`, `HEAD_DIM: tl.constexpr`): at another value of it the constexpr
    would be another one too, which is another kernel."""
    dims = {d for t in tensors.values() for d in t.shape} | {t.numel for t in tensors.values()}
    strides = {st for t in tensors.values() for st in t.strides}
    seen: list[int] = []
    for v in list(ints.values()) + [d for t in tensors.values() for d in t.shape]:
        if v in strides and v not in dims:
            continue  # a stride follows the sizes; it is not one
        if constants and v in constants:
            continue
        if 1 < v <= INT32_MAX and v not in seen:
            seen.append(v)
    return seen[:most]


def describe_size(r: Resize, old: bool = False, prefer: str | None = None) -> str:
    """'n = 4097' or 'x.shape = (4097,)': the first thing that moved, at its new value (old: as launched).
    With no integer argument among them, `prefer`'s shape when that tensor moved (a finding on x names x)."""
    ints = [m for m in r.moved if m in r.ints]
    # A size and a stride equal at the launch move together; name the size (`n_cols`, not `x_row_stride`).
    for m in sorted(ints, key=lambda m: "stride" in m.lower()):
        return f"{m} = {r.old if old else r.ints[m]}"
    names = [m.split(".")[0] for m in r.moved if "." in m and "one per block" not in m]
    name = prefer if prefer in names else r.moved[0].split(".")[0]
    shape = tuple(r.tensors[name].shape)
    if old:
        shape = tuple(r.old if d == r.new else d for d in shape)
    return f"{name}.shape = {shape}"
