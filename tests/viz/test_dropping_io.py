"""viz/dropping_io.py: writes that never block on a pipe nobody reads."""

import os
import threading

from triton_lens.viz.dropping_io import DroppingWriter, never_blocking


def test_a_full_pipe_drops_what_it_cannot_take_instead_of_blocking():
    r, w = os.pipe()
    try:
        out = DroppingWriter(w)
        done = threading.Event()

        def write():
            for _ in range(64):
                out.write(b"y" * 65536)  # 4 MiB into a pipe of (at most) 1 MiB nobody reads
            done.set()

        threading.Thread(target=write, daemon=True).start()
        assert done.wait(60), "a write blocked"
        assert out.dropped > 0
        os.set_blocking(r, False)
        got = b""
        try:
            while chunk := os.read(r, 1 << 20):
                got += chunk
        except BlockingIOError:
            pass
        assert got == b"y" * (64 * 65536 - out.dropped)  # what was not dropped is in the pipe, whole
    finally:
        os.close(r)
        os.close(w)


def test_never_blocking_needs_a_descriptor():
    import io

    assert never_blocking(io.StringIO()) is None
    r, w = os.pipe()
    try:
        with os.fdopen(os.dup(w), "w") as f:
            text = never_blocking(f)
            assert text is not None
            text.write("viewer stopped\n")
        assert os.read(r, 100) == b"viewer stopped\n"
    finally:
        os.close(r)
        os.close(w)
