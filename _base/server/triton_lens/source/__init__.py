"""Source text only: the run plan (plan.py: which command a file gets, and whether it gets one), the kernel
finder (kernels.py: which @triton.jit kernels a file defines, read from its syntax tree) and the workspace
files that launch a library file (harnesses.py), and a kernel's `# triton-lens: sizes` conditions
(size_conditions.py: read and evaluated by a walk of their syntax tree). Nothing here runs the user's code.

It must not import triton, torch or the engine: the language server reads it on every keystroke, and the
engine, the analysis and the front ends all read it.
"""
