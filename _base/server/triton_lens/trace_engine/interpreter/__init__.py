"""The interpreter room: triton's CPU interpreter (TRITON_INTERPRET=1) made to do what the compiled kernel
does on a GPU, on every supported release (3.2 - 3.9).

Owns: the release-specific hooks (compat.py: the only code that patches triton's interpreter classes, with
semantics.py, jit_api.py and device_calls.py beside it, the only modules that import
triton.runtime.interpreter), the engine's one way to patch for a run and undo it (patches.py: PatchScope, also
used by the CUDA stand-in), the GPU's arithmetic where the interpreter differs (semantics.py, tf32.py, fp8.py,
libdevice.py), programs that wait on each other (cooperative.py, spin.py), pointer arguments that are not
tensors (pointer_args.py), and the releases tested (releases.py).

It must not import another room of the engine, the analysis or a front end: what it hands on is called
through compat.Hooks, which the recorder implements.
"""
