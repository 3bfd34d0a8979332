"""Line map cost on a file of repeated lines: difflib's SequenceMatcher (the old lsp/linemap.py) and
the patience diff now used, side by side in one run, on one keystroke (a line typed in the middle).

    .venv/bin/python bench/linemap.py [LINES ...]
"""

import difflib
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "server"))
from triton_lens.lsp.linemap import LineMap  # noqa: E402


def lines(n):
    block = ["", "    x = tl.load(p + offs, mask=m)", ")", "", "    tl.store(q, x)", "", ")", "", "pass", "# {}"]
    out = []
    for i in range(n // len(block)):
        out += [s.format(i) for s in block]
    return out


def old(a, b):
    return difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()


def timed(f, *args):
    t = time.perf_counter()
    f(*args)
    return time.perf_counter() - t


for n in [int(x) for x in sys.argv[1:]] or [2000, 5000, 20000]:
    a = lines(n)
    b = a[: n // 2] + ["    y = 1  # typed"] + a[n // 2 :]
    t_new = min(timed(LineMap.of_lines, a, b) for _ in range(3))
    t_old = timed(old, a, b)
    print(
        f"{n:6d} lines: difflib {t_old * 1e3:9.1f} ms   patience {t_new * 1e3:7.1f} ms   ratio {t_old / t_new:8.1f}x",
        flush=True,
    )
