"""A launch's frame from the worker to the runner (recording/stream.py), through a pipe of the default 64 KiB
and through stream.frame_pipe's (1 MiB where the system allows), side by side in one run.

The frame is a real one: the workload's launch traced by the recorder (values and all, as the worker sends
it), written by this process with stream.write_frame onto a buffered file as the worker's Sink does, read by
a separate process with stream.read_frame as the runner's reader thread does. The time is the writer's:
from the frame's first byte to its last one taken by the pipe, the time the script waits before it goes
on. Interleaved reps, median of each.

    python bench/frame_pipe.py [--scale S] [--only NAME] [--reps N]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from datetime import date

os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import triton  # noqa: E402
from parallel_kernels import workloads  # noqa: E402

from triton_lens.trace_engine.recording import stream  # noqa: E402
from triton_lens.trace_engine.recording.parallel import ParallelRecorder  # noqa: E402


def _send(frame, make_pipe) -> float:
    """ms for this process to write the frame into a pipe that another process reads frame by frame."""
    meta, arrays = frame
    r, w = make_pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(w)
            with os.fdopen(r, "rb") as inp:
                while stream.read_frame(inp) is not None:
                    pass
        finally:
            os._exit(0)
    os.close(r)
    out = os.fdopen(w, "wb", buffering=1 << 16)
    t = time.perf_counter()
    stream.write_frame(out, "launch", meta, arrays)
    ms = (time.perf_counter() - t) * 1e3
    out.close()
    os.waitpid(pid, 0)
    return ms


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--only", default="softmax,vector")
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    print(
        f"# bench/frame_pipe.py --scale {args.scale} --reps {args.reps}  ({date.today()}, {platform.node()}, "
        f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, triton {triton.__version__}); ms for the writer "
        f"to send one launch's frame to a reading process, median of {args.reps}"
    )
    for name, (launch, _outputs, _check) in workloads(args.scale).items():
        if not any(part in name for part in args.only.split(",") if part):
            continue
        frames = []
        with ParallelRecorder(on_launch=lambda t: frames.append(stream.launch_to_frame(t)), workers=1):
            launch()
        frame = frames[-1]
        mb = sum(a.nbytes for a in frame[1].values()) / 1e6
        times: dict[str, list[float]] = {"64 KiB pipe": [], "frame_pipe": []}
        for _ in range(args.reps):
            times["64 KiB pipe"].append(_send(frame, os.pipe))
            times["frame_pipe"].append(_send(frame, stream.frame_pipe))
        a, b = (statistics.median(v) for v in times.values())
        print(f"{name:36} frame {mb:6.1f} MB: 64 KiB pipe {a:6.1f} ms, frame_pipe {b:6.1f} ms, ratio {a / b:4.2f}x")


if __name__ == "__main__":
    main()
