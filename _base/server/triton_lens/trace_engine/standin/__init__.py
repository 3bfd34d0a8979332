"""The CUDA stand-in room: a script written for a GPU runs unchanged where there is none.

Owns: the CUDA runtime a script talks to (cuda_api.py: torch.cuda.*, triton's driver), CUDA tensors stood in
by CPU tensors (cuda_tensors.py), the stand-in where torch runs the script's Python itself (cuda_reentry.py:
autograd, custom ops, threads), `nvidia-smi` answered (nvidia_smi.py), the GPUs it can report
(gpu_profiles.py), and the whole put in place and undone for one run (cuda_standin.py).

It must not import the recording or the process room: of the engine it imports only the interpreter room.
"""
