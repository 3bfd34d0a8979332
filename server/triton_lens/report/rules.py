"""One rule per finding kind: a stable id, a title and the help a reviewer reads next to the
annotation (SARIF's rule help; what the finding means on a GPU and how it is usually fixed)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    id: str  # the finding kind, also the SARIF rule id
    name: str  # PascalCase, SARIF's `name`
    title: str  # one line
    help: str  # a paragraph


RULES = {
    r.id: r
    for r in (
        Rule(
            "oob",
            "OutOfBoundsAccess",
            "Kernel access outside its tensor",
            "Active lanes of a tl.load, tl.store or atomic computed addresses outside the tensor they were derived "
            "from (past the end, before the start, in the padding of a strided view, or inside a neighbouring "
            "tensor). On a GPU that is undefined behaviour: garbage reads, corrupted neighbours, or an illegal "
            "address fault. Add a mask that switches those lanes off (mask=offs < n), tighten the existing mask, "
            "or compute the address with the tensor's real strides.",
        ),
        Rule(
            "race",
            "RaceBetweenPrograms",
            "Programs race on the same elements",
            "Several programs of one launch stored to the same elements, or one stored what another loaded. "
            "Programs run in no fixed order on a GPU, so the result depends on timing. Give each program its own "
            "elements, use an atomic (tl.atomic_add), or split the kernel into two launches.",
        ),
        Rule(
            "dead",
            "DeadMask",
            "Access masked off in every lane",
            "The mask of this load/store was false in every lane of every execution, so it never touched memory "
            "(a load always returned `other`). This is usually a comparison the wrong way round or against the "
            "wrong bound.",
        ),
        Rule(
            "unwritten",
            "UnwrittenOutput",
            "Output elements no program wrote",
            "Elements of a tensor the kernel stores to were written by no program, so they keep whatever the "
            "tensor held before (torch.empty gives garbage). Launch enough programs to cover the output, or "
            "initialise it if that is intended.",
        ),
        Rule(
            "exception",
            "ScriptException",
            "The script raised an exception",
            "The kernel script (or the command it was run with) raised an exception. The launches that finished "
            "before it are still checked.",
        ),
        Rule(
            "timeout",
            "ScriptTimeout",
            "The script ran past the time limit",
            "The script was still running after the time limit and was stopped. It may hang (e.g. a spin lock "
            "under the sequential interpreter), or need more time: raise --timeout.",
        ),
        Rule(
            "crashed",
            "ScriptCrashed",
            "The script crashed or exceeded the memory limit",
            "The worker running the script died (a signal, os._exit, or the memory limit). The launches that "
            "finished before are still checked.",
        ),
        Rule(
            "no-launch",
            "NoKernelLaunch",
            "No kernel launch ran",
            "The file defines a Triton kernel but running it launched none, so nothing was checked. Launch it "
            'under `if __name__ == "__main__":`, or add a comment `# triton-lens: run <command>` naming a script '
            "or test that launches it.",
        ),
    )
}


def rule_for(kind: str) -> Rule:
    """The rule of a finding kind; kinds added later get a plain one rather than no rule at all."""
    r = RULES.get(kind)
    if r is not None:
        return r
    name = "".join(part.capitalize() for part in kind.replace("_", "-").split("-")) or "Finding"
    return Rule(kind, name, f"Triton Lens finding: {kind}", f"A `{kind}` finding of Triton Lens.")
