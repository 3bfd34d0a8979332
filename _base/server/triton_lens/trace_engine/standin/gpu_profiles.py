"""The GPUs a CPU stand-in for CUDA can report to a script (torch.cuda.get_device_properties, the
triton driver's device properties). Numbers are the ones the real device reports, so that a script
sizing its grid or its blocks from them (persistent kernels, the fused-softmax tutorial) makes the
same launches as on that GPU."""

from __future__ import annotations

from dataclasses import dataclass

_MB = 1024 * 1024


@dataclass(frozen=True)
class GpuProfile:
    key: str  # what the user names: "H100"
    name: str  # what torch.cuda.get_device_name() returns
    major: int
    minor: int
    total_memory: int  # bytes
    multi_processor_count: int
    l2_cache_size: int  # bytes
    max_shared_mem: int  # bytes per block, opt-in (triton's "max_shared_mem")
    max_num_regs: int  # per multiprocessor
    max_threads_per_multi_processor: int
    sm_clock_rate: int  # kHz
    mem_clock_rate: int  # kHz
    mem_bus_width: int  # bits
    warp_size: int = 32

    @property
    def capability(self) -> tuple[int, int]:
        return (self.major, self.minor)

    @property
    def arch(self) -> int:
        return self.major * 10 + self.minor

    def triton_properties(self) -> dict[str, int]:
        """What triton's CUDA driver returns from utils.get_device_properties(index)."""
        return {
            "max_shared_mem": self.max_shared_mem,
            "max_num_regs": self.max_num_regs,
            "multiprocessor_count": self.multi_processor_count,
            "warpSize": self.warp_size,
            "sm_clock_rate": self.sm_clock_rate,
            "mem_clock_rate": self.mem_clock_rate,
            "mem_bus_width": self.mem_bus_width,
        }


PROFILES = {
    p.key: p
    for p in (
        GpuProfile(
            "H100",
            "NVIDIA H100 80GB HBM3",
            9,
            0,
            81_559 * _MB,
            132,
            50 * _MB,
            232_448,
            65_536,
            2048,
            1_980_000,
            2_619_000,
            5120,
        ),
        GpuProfile(
            "A100",
            "NVIDIA A100-SXM4-80GB",
            8,
            0,
            81_155 * _MB,
            108,
            40 * _MB,
            166_912,
            65_536,
            2048,
            1_410_000,
            1_593_000,
            5120,
        ),
        GpuProfile(
            "RTX4090",
            "NVIDIA GeForce RTX 4090",
            8,
            9,
            24_564 * _MB,
            128,
            72 * _MB,
            101_376,
            65_536,
            1536,
            2_520_000,
            10_501_000,
            384,
        ),
    )
}
DEFAULT = "H100"


def profile(key: str | None) -> GpuProfile:
    """The profile named `key` (case and spaces ignored); a ValueError naming the choices otherwise."""
    if not key:
        return PROFILES[DEFAULT]
    want = key.replace(" ", "").upper()
    for k, p in PROFILES.items():
        if k.upper() == want:
            return p
    raise ValueError(f"unknown GPU {key!r} for the CPU stand-in for CUDA: choose one of {', '.join(PROFILES)}")
