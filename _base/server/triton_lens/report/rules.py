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
            "oob-sizes",
            "OutOfBoundsAtOtherSizes",
            "Kernel access outside its tensor at a size the script did not run",
            "At the script's sizes the access stayed inside its tensor, but at another size the kernel admits "
            "(usually the size just above a multiple of the block) active lanes leave it: Triton Lens re-ran the "
            "kernel's programs at that size and saw them. Mask the access against the size (mask=offs < n), or "
            "state the precondition in the kernel (tl.assume(n % BLOCK == 0)) and check it on the host.",
        ),
        Rule(
            "wrap",
            "Int32OffsetWrap",
            "Offset arithmetic overflows int32 at a size the GPU holds",
            "tl.program_id, tl.arange and integer arguments below 2**31 are int32 in a compiled kernel, so an "
            "offset such as row * stride wraps around once the tensor passes 2**31 elements, and the kernel reads "
            "or writes the wrong memory. Triton Lens found the smallest such size that fits in the target GPU's "
            "memory and ran the failing program there. Widen the index before the arithmetic "
            "(row.to(tl.int64) * stride), or pass the stride as an int64.",
        ),
        Rule(
            "sizes-comment",
            "UnusableSizeCondition",
            "A `# triton-lens: sizes` condition the size check cannot use",
            "A `# triton-lens: sizes` comment above a kernel (or in its body) states conditions on the sizes it "
            "admits, as Python comparisons over its integer arguments and constexprs by name (e.g. "
            "`# triton-lens: sizes n <= 2**24, M % 16 == 0`). This one could not be read, or names something that "
            "is no integer argument of the kernel, so the size check ignores it and may try sizes the kernel's "
            "callers never make. Fix the condition's spelling or the argument's name.",
        ),
        Rule(
            "overrun",
            "RowOverrun",
            "A row-wise access runs past its row into the next one",
            "The access walks a tensor row by row (row * stride + col), and its block is wider than the row while "
            "the mask does not stop the columns at the row's length: the extra lanes read or write the next row. "
            "Nothing faults (the addresses are inside the tensor), but the result mixes rows. Mask the columns "
            "(mask=cols < n_cols).",
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
        Rule(
            "uninit",
            "UninitialisedRead",
            "Kernel reads memory nothing wrote",
            "A load read elements of a tensor made with torch.empty (or similar) that neither the script nor an "
            "earlier kernel store wrote. On a GPU they hold whatever was there before (compute-sanitizer's "
            "initcheck reports the same). Initialise the tensor (torch.zeros), mask the load, or write the "
            "elements before reading them.",
        ),
        Rule(
            "error",
            "FileCannotRun",
            "The file cannot be run",
            "The file could not be run at all (for example its bytes do not decode as the source encoding it "
            "declares). Fix the file and save it again.",
        ),
        Rule(
            "uncoalesced",
            "UncoalescedAccess",
            "Access uses a small part of each memory sector",
            "Neighbouring lanes of this load/store touch elements far apart, so most of each 32-byte sector the "
            "GPU fetches is wasted. Make the tensor's contiguous (stride-1) dimension the one neighbouring lanes "
            "walk along, or pass a transposed/contiguous copy.",
        ),
        Rule(
            "tf32",
            "Float32DotInTF32",
            "tl.dot of float32 tiles runs in TF32",
            "Compiled for an NVIDIA GPU, a tl.dot of float32 operands runs on the TF32 tensor cores by default: "
            "each operand keeps 10 of its 23 mantissa bits (the low 13 dropped). Triton Lens computes the same "
            "TF32 products, so the outputs differ from an IEEE float32 matmul (such as torch's) by about 1e-3 "
            'relative, here as on the GPU. Pass input_precision="ieee" (or set TRITON_F32_DEFAULT=ieee) for IEEE '
            'products, "tf32x3" for nearly IEEE at about 3x the cost, or compare with a looser tolerance.',
        ),
        Rule(
            "allocator",
            "MissingAllocator",
            "In-kernel tensor descriptor without an allocator",
            "tl.make_tensor_descriptor inside a kernel needs scratch memory on a GPU with TMA (Hopper and "
            "newer); without triton.set_allocator the launch raises RuntimeError before it runs. Call "
            "triton.set_allocator(lambda size, alignment, stream: torch.empty(size, device='cuda', "
            "dtype=torch.int8)) before the launch.",
        ),
        Rule(
            "cpu-timing",
            "CpuTiming",
            "A timing measured on the CPU interpreter",
            "A benchmark call (triton.testing.do_bench, CUDA events) timed the kernel on Triton's CPU "
            "interpreter while CPU tensors stood in for CUDA ones: the number says nothing about GPU speed.",
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
