"""What the worker's host-write tracker (trace_engine/recording/host_writes.py) costs torch code on the host.

Alternating rounds in one process (bare, tracked, bare, ...): small ops (dispatch overhead dominates)
and large ones (1 M elements: marking costs a strided bool write). Prints the median ratio.

    python bench/host_writes_overhead.py [--out FILE]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from datetime import date

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from triton_lens.trace_engine.recording.host_writes import HostWrites


class EmptyMode(TorchDispatchMode):
    """A dispatch mode that does nothing: what torch's mechanism alone costs."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def small_ops():
    for _ in range(2000):
        a = torch.empty(64)
        a.fill_(1.0)
        b = a * 2
        a[:32] = b[:32]
        a.add_(b)


def large_ops():
    for _ in range(20):
        a = torch.empty(1 << 20)
        a.zero_()
        b = torch.randn(1 << 20)
        a[::2] = b[::2]
        torch.add(a, b, out=a)


def timed(fn, how: str) -> float:
    mode = HostWrites.start() if how == "tracked" else None
    if how == "empty":
        with EmptyMode():
            t0 = time.perf_counter()
            fn()
            return time.perf_counter() - t0
    t0 = time.perf_counter()
    fn()
    dt = time.perf_counter() - t0
    if mode is not None:
        mode.stop()
    return dt


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    lines = [f"# host_writes_overhead {date.today()} {platform.node()} torch {torch.__version__}"]
    for name, fn in (
        ("small ops (2000 x 5 ops on 64 elements)", small_ops),
        ("large ops (20 x 5 ops on 1 M elements)", large_ops),
    ):
        ratios, empty_ratios, bare_s, tracked_s = [], [], [], []
        for _ in range(args.rounds):
            b, e, t = timed(fn, "bare"), timed(fn, "empty"), timed(fn, "tracked")
            bare_s.append(b)
            tracked_s.append(t)
            ratios.append(t / b)
            empty_ratios.append(e / b)
        lines.append(
            f"{name:42s} bare {statistics.median(bare_s) * 1e3:7.1f} ms  tracked "
            f"{statistics.median(tracked_s) * 1e3:7.1f} ms  ratio {statistics.median(ratios):5.2f}  "
            f"(an empty dispatch mode alone: {statistics.median(empty_ratios):5.2f})"
        )
    text = "\n".join(lines)
    print(text)
    if args.out:
        with open(args.out, "a") as f:
            f.write(text + "\n\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
