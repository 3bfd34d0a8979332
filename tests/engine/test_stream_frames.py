"""The worker -> runner stream's frames (recording/stream.py): what is read is what was written, for every
layout an array of a launch can have; the arrays are written from their own memory, not copied first."""

from __future__ import annotations

import io
import os
import threading

import numpy as np
import pytest

from triton_lens.trace_engine.recording import stream


def _arrays() -> dict[str, np.ndarray]:
    grid = np.arange(24, dtype=np.int64).reshape(4, 6)
    return {
        "scalar": np.array(7, dtype=np.int32),
        "empty": np.empty((0, 3), dtype=np.float32),
        "bools": np.array([True, False, True]),
        "halves": np.linspace(-1, 1, 5, dtype=np.float16),
        "fortran": np.asfortranarray(grid),  # written row-major
        "strided": grid[::2, 1::3],  # not contiguous
        "big_endian": np.arange(5, dtype=">i4"),
        "bytes": np.frombuffer(b"\x00\xff\x10", dtype=np.uint8),
    }


def test_a_frame_reads_back_as_written_whatever_the_layout():
    buf = io.BytesIO()
    arrays = _arrays()
    n = stream.write_frame(buf, "launch", {"index": 3}, arrays)
    assert n == len(buf.getvalue())
    kind, meta, back = stream.read_frame(io.BytesIO(buf.getvalue()))
    assert (kind, meta) == ("launch", {"index": 3})
    assert list(back) == list(arrays)
    for name, a in arrays.items():
        assert back[name].dtype == a.dtype and back[name].shape == a.shape, name
        assert np.array_equal(back[name], a), name


def test_frames_through_a_pipe_larger_than_the_pipe_holds():
    # As the worker writes them: a buffered file on a pipe that the reader drains while it is written.
    big = {"values": np.random.default_rng(0).standard_normal(1 << 20).astype(np.float32)}
    r, w = os.pipe()
    got: list = []
    reader = threading.Thread(target=lambda: got.extend(iter(lambda: stream.read_frame(inp), None)))
    with os.fdopen(r, "rb") as inp:
        reader.start()
        with os.fdopen(w, "wb", buffering=1 << 16) as out:
            stream.write_frame(out, "chunk", {"chunk": 0}, big)
            stream.write_frame(out, "result", {"status": "ok"})
        reader.join()
    assert [(k, m) for k, m, _ in got] == [("chunk", {"chunk": 0}), ("result", {"status": "ok"})]
    assert np.array_equal(got[0][2]["values"], big["values"])


class _Keeps(io.RawIOBase):
    """A stream that keeps what it is given to write (not a copy)."""

    def __init__(self) -> None:
        self.given: list = []

    def writable(self) -> bool:
        return True

    def write(self, b) -> int:
        self.given.append(b)
        return memoryview(b).nbytes


def test_a_contiguous_array_is_written_from_its_own_memory():
    # A launch's frame is tens of MB at real sizes and the last thing the worker does before the script goes on.
    values = np.arange(1 << 16, dtype=np.float32).reshape(256, 256)
    out = _Keeps()
    stream.write_frame(out, "launch", {}, {"values": values})
    body = out.given[-1]
    assert np.shares_memory(np.asarray(body), values) and memoryview(body).nbytes == values.nbytes


def test_a_frame_cut_short_reads_as_the_streams_end():
    # A worker or child that dies mid-frame: the reader sees the end, not a half-filled array.
    buf = io.BytesIO()
    stream.write_frame(buf, "chunk", {}, {"values": np.arange(1000, dtype=np.float64)})
    whole = buf.getvalue()
    for cut in (2, 10, len(whole) - 8000, len(whole) - 1):
        assert stream.read_frame(io.BytesIO(whole[:cut])) is None, cut
    assert stream.read_frame(io.BytesIO(b"")) is None


def _capacity(fd: int) -> int:
    """A pipe's capacity (Linux's F_GETPIPE_SZ, as the engine's containment is Linux's; CI runs there)."""
    import fcntl

    return fcntl.fcntl(fd, getattr(fcntl, "F_GETPIPE_SZ", 1032))


def _system_most() -> int:
    try:
        with open("/proc/sys/fs/pipe-max-size") as f:
            return min(stream.PIPE_BYTES, int(f.read()))
    except OSError:
        return 1 << 16


def test_a_frame_pipe_holds_a_mib_where_the_system_lets_it():
    # A launch's frame (tens of MB) then goes out in 1 MiB steps, not 64 KiB ones: the worker waits less.
    r, w = stream.frame_pipe()
    try:
        assert _capacity(w) == _capacity(r) == _system_most()
        os.set_blocking(w, False)  # it takes that much with no reader at all
        assert os.write(w, b"x" * _system_most()) == _system_most()
        with pytest.raises(BlockingIOError):
            os.write(w, b"x")
    finally:
        os.close(r)
        os.close(w)
