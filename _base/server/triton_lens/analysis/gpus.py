"""Peak DRAM bandwidth and dense FLOP/s of the GPUs the roofline estimate offers.

Dense (no 2:4 sparsity) figures from the vendors' own datasheets; where a datasheet quotes only the
sparse figure, it is halved. "tf32" is the tensor-core rate tl.dot gets for fp32 operands (Triton's
default input_precision), "fp16" covers fp16 and bf16 with fp32 accumulation, "fp32" is the plain
(CUDA core / vector) rate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TB = 1e12
T = 1e12


@dataclass(frozen=True)
class GPU:
    key: str
    name: str
    bandwidth: float  # bytes/s, DRAM (HBM / GDDR)
    flops: dict[str, float]  # precision -> FLOP/s
    source: str

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "name": self.name,
            "bandwidth": self.bandwidth,
            "flops": dict(self.flops),
            "source": self.source,
        }


GPUS: dict[str, GPU] = {
    g.key: g
    for g in (
        GPU(
            "h100",
            "H100 SXM",
            3.35 * TB,
            {"fp32": 66.9 * T, "tf32": 494.7 * T, "fp16": 989.4 * T, "fp8": 1978.9 * T},
            "NVIDIA H100 Tensor Core GPU datasheet (SXM5), sparse figures halved",
        ),
        GPU(
            "h200",
            "H200",
            4.8 * TB,
            {"fp32": 67.0 * T, "tf32": 494.7 * T, "fp16": 989.4 * T, "fp8": 1978.9 * T},
            "NVIDIA H200 Tensor Core GPU datasheet (SXM), sparse figures halved",
        ),
        GPU(
            "a100",
            "A100",
            2.039 * TB,
            {"fp32": 19.5 * T, "tf32": 156.0 * T, "fp16": 312.0 * T, "fp8": 312.0 * T},
            "NVIDIA A100 Tensor Core GPU datasheet (SXM 80 GB); no fp8 tensor cores: fp8 runs at the fp16 rate",
        ),
        GPU(
            "mi300x",
            "MI300X",
            5.3 * TB,
            {"fp32": 163.4 * T, "tf32": 653.7 * T, "fp16": 1307.4 * T, "fp8": 2614.9 * T},
            "AMD Instinct MI300X accelerator datasheet, dense matrix figures",
        ),
        GPU(
            "rtx4090",
            "RTX 4090",
            1.008 * TB,
            {"fp32": 82.6 * T, "tf32": 82.6 * T, "fp16": 165.2 * T, "fp8": 330.3 * T},
            "NVIDIA Ada Lovelace GPU architecture whitepaper, Appendix A (fp32 accumulate, dense)",
        ),
    )
}

DEFAULT_GPU = "h100"


def gpu(key: str) -> GPU:
    """The GPU for a key or a name as the user writes it ("H100 SXM", "mi300x", "RTX 4090")."""
    k = key.lower().replace(" ", "").replace("-", "").replace("sxm", "")
    if k in GPUS:
        return GPUS[k]
    for g in GPUS.values():
        if g.name.lower().replace(" ", "").replace("sxm", "") == k:
            return g
    raise KeyError(f"unknown GPU {key!r}: pick one of {', '.join(g.name for g in GPUS.values())}")


def precision(a_dtype: str, b_dtype: str, input_precision: str = "") -> str:
    """The rate a tl.dot with these operand dtypes (triton names) and input_precision runs at: float32
    operands use the TF32 tensor cores unless the dot asks for "ieee" (then the plain fp32 rate)."""
    names = (a_dtype, b_dtype)
    if all(n.startswith("fp8") for n in names):
        return "fp8"
    if any(n in ("fp32", "fp64") for n in names):
        return "fp32" if input_precision == "ieee" else "tf32"
    if any(n.startswith(("int", "i8", "u8")) for n in names):
        return "fp8"  # int8 MMA runs at the fp8 rate on all five
    return "fp16"
