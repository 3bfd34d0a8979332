"""Triton Lens: what every tl.load and tl.store of a Triton kernel really did.

The package keeps the API of Triton-Viz (`trace`, `launch`, `clear`, `launches`, `Client`), so a
Triton-Viz script works with `import triton_lens as triton_viz`.
"""
__version__ = "0.1.0"
