"""Findings of a run that stood in CPU tensors for CUDA ones (model.CudaStandIn): each benchmark call
that timed the CPU interpreter says so at its line, so nobody reads its number as a GPU's."""

from __future__ import annotations

from ..model import CudaStandIn, Finding, RunResult


def standin_notice(s: CudaStandIn) -> str:
    """One line saying that no GPU ran this, for the top of `check`'s output and `view`'s summary."""
    return (
        f"note: CPU stand-in for CUDA ({s.reason}): CUDA tensors were CPU tensors, the GPU reported was a "
        f"stood-in {s.gpu}, kernels ran on Triton's CPU interpreter."
    )


def standin_findings(result: RunResult) -> list[Finding]:
    s = result.cuda_standin
    if s is None:
        return []
    return [
        Finding(
            kind="cpu-timing",
            severity="information",
            file=t.file,
            line=t.line,
            message=(
                f"{t.what} timed one call on Triton's CPU interpreter ({t.ms:.1f} ms), not on a GPU: "
                f"this run stood in CPU tensors for CUDA ones ({s.reason}), so the number says nothing "
                f"about the speed on the {s.gpu} it stood in for."
            ),
        )
        for t in s.timed
        if t.file
    ]
