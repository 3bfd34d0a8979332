"""A kernel that builds tensor descriptors in the kernel (tl.make_tensor_descriptor) needs scratch
memory when compiled for a GPU with TMA (Hopper and newer): the launch asks the allocator the script
set with triton.set_allocator, and raises without one. The interpreter needs none, so the run itself
succeeds; this says, at the call, what the GPU will do and the fix. Pure function over the traces."""

from __future__ import annotations

from ..model import Finding, LaunchTrace
from .text import plural

FIX = 'triton.set_allocator(lambda size, alignment, stream: torch.empty(size, device="cuda", dtype=torch.int8))'


def allocator_findings(launches: list[LaunchTrace]) -> list[Finding]:
    by_site: dict[tuple[str, int, int], list[LaunchTrace]] = {}
    for L in launches:
        s = L.scratch_site
        if s is not None:
            by_site.setdefault((s["file"], s["line"], s["col"]), []).append(L)
    out = []
    for group in by_site.values():
        s = group[0].scratch_site
        assert s is not None
        kernels = sorted({L.kernel for L in group})
        out.append(
            Finding.at(
                s,
                kind="allocator",
                severity="information",
                message=(
                    f"tl.make_tensor_descriptor inside {', '.join(kernels)} needs scratch memory on a GPU with "
                    "TMA (Hopper and newer), and the script set no allocator: compiled, "
                    f"{'this launch' if len(group) == 1 else plural(len(group), 'launch')} would raise "
                    'RuntimeError("Kernel requires a runtime memory allocation, but no allocator was set") '
                    f"before running. The interpreter needs none. Before launching, call {FIX}"
                ),
            )
        )
    return out
