"""Framing of the worker -> runner stream: a JSON header plus raw numpy buffers, per message.

No pickle: the runner never executes anything the worker sends. Layout of one frame:
    u32 little-endian header length | header JSON | array bytes, back to back
with header = {"type": ..., "meta": {...}, "arrays": [[name, dtype, shape], ...]}.
"""

from __future__ import annotations

import json
import os
import struct
from collections.abc import Callable
from typing import Any, BinaryIO, cast

import numpy as np

from ...model import DotSite, DotTrace, LaunchTrace, Site, TensorInfo
from ...model.elements import ElementSets

_LEN = struct.Struct("<I")

# A frame's "meta": a JSON object whose fields depend on the frame's type (launch_to_frame's, the runner's
# messages), so its values are Any.
Meta = dict[str, Any]


def write_frame(out: BinaryIO, type_: str, meta: Meta, arrays: dict[str, np.ndarray] | None = None) -> int:
    arrays = arrays or {}
    specs, blobs = [], []
    for name, a in arrays.items():
        a = np.asarray(a, order="C")  # (ascontiguousarray would make a 0-d array 1-d)
        specs.append([name, a.dtype.str, list(a.shape)])
        # The array's own bytes, not a copy (tobytes): a launch's frame is the last thing the worker does
        # before the script goes on, tens of MB at real sizes.
        blobs.append(a.reshape(-1).view(np.uint8))
    header = json.dumps({"type": type_, "meta": meta, "arrays": specs}).encode()
    out.write(_LEN.pack(len(header)))
    out.write(header)
    for b in blobs:
        if b.size:
            out.write(b.data)  # (a memoryview of the array)
    out.flush()
    return _LEN.size + len(header) + sum(b.size for b in blobs)


# A pipe's capacity where the system allows it (Linux: /proc/sys/fs/pipe-max-size, 1 MiB by default).
PIPE_BYTES = 1 << 20


def frame_pipe() -> tuple[int, int]:
    """A pipe (read end, write end) for frames, its capacity raised to PIPE_BYTES where the system lets
    it be (64 KiB else: over a user's total of pipe pages, or not Linux). A launch's frame is tens of MB
    at real sizes, written by the worker before the script goes on: through 64 KiB the writer waits for
    the reader every 64 KiB (a 17.6 MB frame to a reading process 43-65 ms on a 2-core VM, 22-26 ms
    through 1 MiB: bench/frame_pipe.py)."""
    r, w = os.pipe()
    try:
        import fcntl

        fcntl.fcntl(w, getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
    except (ImportError, OSError):
        pass
    return r, w


def move_high(fd: int) -> int:
    """fd moved to a high number, close-on-exec: a file the script opens gets the lowest free number,
    so it never gets this one back, and a script closing "every descriptor above 2" up to some bound
    (os.closerange(3, 256)) misses it. High: 32 below the soft RLIMIT_NOFILE, at most 4064 (a larger
    number would grow the descriptor table that each forked child copies). The returned number
    replaces fd, which is closed."""
    try:
        import fcntl
        import resource

        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if soft == resource.RLIM_INFINITY or soft <= 0:
            soft = 4096
        base = max(3, min(soft, 4096) - 32)
        high = fcntl.fcntl(fd, getattr(fcntl, "F_DUPFD_CLOEXEC", fcntl.F_DUPFD), base)
    except (ImportError, OSError):
        return fd  # not Unix, or no free number up there: keep it where it is
    os.close(fd)
    return high


_TABLE_HOLDER: list[int] = []


def grow_descriptor_table() -> None:
    """Grows this process's descriptor table to hold move_high's numbers now, while it has one thread. With a
    second thread (a worker's parent watch) the kernel waits out an RCU grace period to grow it: 8-22 ms of
    every run's start, at its first move_high. One descriptor (/dev/null, close-on-exec) stays open up
    there: a fork copies a table only as large as its open descriptors need, so forked workers inherit it."""
    if _TABLE_HOLDER:
        return
    try:
        _TABLE_HOLDER.append(move_high(os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)))
    except OSError:
        pass


class Sink:
    """The worker's end of the stream, guarded against the script: before each frame it checks that
    its descriptor is still the pipe it was at the start (os.fstat's st_dev and st_ino). A script that
    closed it (os.closerange) may have opened a file of its own under the same number; from then on
    nothing is written, so no frame lands in the user's file, and `on_lost` is called once. It never
    closes the descriptor unless it is still the pipe."""

    def __init__(self, fd: int, on_lost: Callable[[int], None] | None = None):
        st = os.fstat(fd)
        self.fd, self.identity, self.on_lost = fd, (st.st_dev, st.st_ino), on_lost
        self.lost = False
        self.pid = os.getpid()  # a child the script forked (and that closes descriptors) reports nothing
        # closefd=False: closing (or the interpreter finalising) this object never closes a number
        # that may have become the user's.
        self.file = os.fdopen(fd, "wb", buffering=1 << 16, closefd=False)

    def intact(self) -> bool:
        """Whether the descriptor is still the stream; the first time it is not, `on_lost(fd)`."""
        if self.lost:
            return False
        try:
            st = os.fstat(self.fd)
            same = (st.st_dev, st.st_ino) == self.identity
        except OSError:
            same = False
        if not same:
            self.lost = True
            if self.on_lost is not None and os.getpid() == self.pid:
                self.on_lost(self.fd)
        return same

    def write_frame(self, type_: str, meta: Meta, arrays: dict[str, np.ndarray] | None = None) -> int:
        if not self.intact():
            return 0
        return write_frame(self.file, type_, meta, arrays)

    def close(self) -> None:
        if self.intact():
            self.file.close()
            self.lost = True  # (closed by us: not reported)
            os.close(self.fd)


def _read_exact(inp: BinaryIO, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        b = inp.read(n - got)
        if not b:
            return None
        chunks.append(b)
        got += len(b)
    return b"".join(chunks)


def read_frame(inp: BinaryIO) -> tuple[str, Meta, dict[str, np.ndarray]] | None:
    """The next frame, or None at the end of the stream (or a frame cut short by a crash)."""
    raw = _read_exact(inp, _LEN.size)
    if raw is None:
        return None
    header = _read_exact(inp, _LEN.unpack(raw)[0])
    if header is None:
        return None
    h = json.loads(header)
    arrays = {}
    for name, dtype, shape in h["arrays"]:
        dt = np.dtype(dtype)
        n = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        body = _read_array(inp, n)
        if body is None:
            return None
        arrays[name] = body.view(dt).reshape(shape)
    return h["type"], h["meta"], arrays


def _read_array(inp: BinaryIO, n: int) -> np.ndarray | None:
    """n bytes read straight into a new array (a pipe gives at most 64 KB a read: pieces joined after
    would copy every byte twice; the split's parent takes a launch's whole output this way)."""
    body = np.empty(n, dtype=np.uint8)
    view, got = body.data, 0
    readinto = cast(Any, inp).readinto  # (typing's BinaryIO lacks it; every binary file has it)
    while got < n:
        k = readinto(view[got:])
        if not k:
            return None
        got += k
    return body


_SETS = ("touched", "masked", "oob")
_COLUMNS = ("ex_site", "ex_program", "ex_lanes", "ex_active", "ex_oob", "ex_vhash", "ex_overrun")


def launch_to_frame(t: LaunchTrace) -> tuple[Meta, dict[str, np.ndarray]]:
    # a tensor no store reached has its values before as its values after (the same array): sent once
    as_before = sorted(i for i, v in t.values.items() if t.values_before.get(i) is v)
    meta = {
        "index": t.index,
        "kernel": t.kernel,
        "def_file": t.def_file,
        "def_line": t.def_line,
        "file": t.file,
        "line": t.line,
        "grid": list(t.grid),
        "tensors": [x.to_json() for x in t.tensors],
        "sites": [s.to_json() for s in t.sites],
        "seconds": t.seconds,
        "complete": t.complete,
        "values": sorted(t.values),
        "values_before": sorted(t.values_before),
        "values_as_before": as_before,
        "value_steps": {str(i): list(st) for i, st in t.value_steps.items()},
        "dot_sites": [d.to_json() for d in t.dots.sites],
        "unwritten_before": sorted(t.unwritten_before),
        "scratch_site": t.scratch_site,
        "size_findings": t.size_findings,
        "size_checked": t.size_checked,
        "autotune": t.autotune,
    }
    arrays: dict[str, np.ndarray] = {c: getattr(t, c) for c in _COLUMNS}
    for s in _SETS:
        for k, a in getattr(t, s).arrays().items():
            arrays[f"{s}.{k}"] = a
    for i, v in t.values.items():
        if i not in as_before:
            arrays[f"values.{i}"] = v
    for i, v in t.values_before.items():
        arrays[f"values_before.{i}"] = v
    for c in DotTrace.COLUMNS + DotTrace.TILE_COLUMNS:
        arrays[f"dots.{c}"] = getattr(t.dots, c)
    for i, runs in t.unwritten_before.items():
        arrays[f"unwritten_before.{i}"] = runs
    return meta, arrays


def launch_from_frame(meta: Meta, arrays: dict[str, np.ndarray]) -> LaunchTrace:
    as_before = set(meta.get("values_as_before", []))  # (sent once: `launch_to_frame`)
    # The execution columns (arrays) and the element sets (ElementSets), by field name.
    columns: dict[str, Any] = {c: arrays[c] for c in _COLUMNS}
    for s in _SETS:
        columns[s] = ElementSets.from_arrays({k: arrays[f"{s}.{k}"] for k in ("kind", "lo", "count", "start", "data")})
    return LaunchTrace(
        index=meta["index"],
        kernel=meta["kernel"],
        def_file=meta["def_file"],
        def_line=meta["def_line"],
        file=meta["file"],
        line=meta["line"],
        grid=tuple(meta["grid"]),
        tensors=[TensorInfo.from_json(x) for x in meta["tensors"]],
        sites=[Site.from_json(s) for s in meta["sites"]],
        **columns,
        values={int(i): arrays[f"values_before.{i}" if i in as_before else f"values.{i}"] for i in meta["values"]},
        unwritten_before={int(i): arrays[f"unwritten_before.{i}"] for i in meta.get("unwritten_before", [])},
        seconds=meta["seconds"],
        complete=meta["complete"],
        values_before={int(i): arrays[f"values_before.{i}"] for i in meta.get("values_before", [])},
        value_steps={int(i): (int(st[0]), int(st[1])) for i, st in meta.get("value_steps", {}).items()},
        dots=DotTrace(
            sites=[DotSite.from_json(d) for d in meta.get("dot_sites", [])],
            **{c: arrays[f"dots.{c}"] for c in DotTrace.COLUMNS + DotTrace.TILE_COLUMNS if f"dots.{c}" in arrays},
        ),
        scratch_site=meta.get("scratch_site"),
        size_findings=list(meta.get("size_findings", [])),
        size_checked=list(meta.get("size_checked", [])),
        autotune=meta.get("autotune"),
    )
