"""How many GPUs, of which model, each cloud's GPU instance types carry.

The clouds' own documentation is the source (AWS "Accelerated computing" instance types, Google
Cloud's "GPU machine types", Azure's "GPU optimized virtual machine sizes"). A source's
``gpu_types`` option extends or overrides the table (a new family, a private type). Names are
matched exactly, Azure's without regard to case (its APIs spell them both ways).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class GpuShape:
    count: int
    model: str


def _sizes(prefix: str, model: str, counts: Mapping[str, int]) -> dict[str, GpuShape]:
    return {f"{prefix}{size}": GpuShape(n, model) for size, n in counts.items()}


_G_SMALL = {"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "16xlarge": 1}
_G_LARGE = {"12xlarge": 4, "24xlarge": 4, "48xlarge": 8}

AWS: dict[str, GpuShape] = {
    "p6-b200.48xlarge": GpuShape(8, "B200"),
    "p5.48xlarge": GpuShape(8, "H100"),
    "p5.4xlarge": GpuShape(1, "H100"),
    "p5e.48xlarge": GpuShape(8, "H200"),
    "p5en.48xlarge": GpuShape(8, "H200"),
    "p4d.24xlarge": GpuShape(8, "A100"),
    "p4de.24xlarge": GpuShape(8, "A100 80GB"),
    "p3.2xlarge": GpuShape(1, "V100"),
    "p3.8xlarge": GpuShape(4, "V100"),
    "p3.16xlarge": GpuShape(8, "V100"),
    "p3dn.24xlarge": GpuShape(8, "V100"),
    **_sizes("g5.", "A10G", {**_G_SMALL, **_G_LARGE}),
    **_sizes("g6.", "L4", {**_G_SMALL, **_G_LARGE}),
    **_sizes("g6e.", "L40S", {**_G_SMALL, **_G_LARGE}),
    **_sizes("g4dn.", "T4", {**_G_SMALL, "12xlarge": 4, "metal": 8}),
}

GCP: dict[str, GpuShape] = {
    "a4-highgpu-8g": GpuShape(8, "B200"),
    "a3-ultragpu-8g": GpuShape(8, "H200"),
    "a3-megagpu-8g": GpuShape(8, "H100"),
    "a3-edgegpu-8g": GpuShape(8, "H100"),
    **_sizes("a3-highgpu-", "H100", {"1g": 1, "2g": 2, "4g": 4, "8g": 8}),
    **_sizes("a2-highgpu-", "A100", {"1g": 1, "2g": 2, "4g": 4, "8g": 8}),
    "a2-megagpu-16g": GpuShape(16, "A100"),
    **_sizes("a2-ultragpu-", "A100 80GB", {"1g": 1, "2g": 2, "4g": 4, "8g": 8}),
    **_sizes(
        "g2-standard-",
        "L4",
        {"4": 1, "8": 1, "12": 1, "16": 1, "32": 1, "24": 2, "48": 4, "96": 8},
    ),
}

AZURE: dict[str, GpuShape] = {
    "Standard_ND96isr_H200_v5": GpuShape(8, "H200"),
    "Standard_ND96isr_H100_v5": GpuShape(8, "H100"),
    "Standard_ND96asr_v4": GpuShape(8, "A100"),
    "Standard_ND96amsr_A100_v4": GpuShape(8, "A100 80GB"),
    "Standard_NC24ads_A100_v4": GpuShape(1, "A100 80GB"),
    "Standard_NC48ads_A100_v4": GpuShape(2, "A100 80GB"),
    "Standard_NC96ads_A100_v4": GpuShape(4, "A100 80GB"),
    "Standard_NC40ads_H100_v5": GpuShape(1, "H100 NVL"),
    "Standard_NC80adis_H100_v5": GpuShape(2, "H100 NVL"),
    "Standard_NC4as_T4_v3": GpuShape(1, "T4"),
    "Standard_NC8as_T4_v3": GpuShape(1, "T4"),
    "Standard_NC16as_T4_v3": GpuShape(1, "T4"),
    "Standard_NC64as_T4_v3": GpuShape(4, "T4"),
    "Standard_NV36ads_A10_v5": GpuShape(1, "A10"),
}

BUILT_IN: dict[str, GpuShape] = {**AWS, **GCP, **AZURE}
_BY_LOWER = {name.lower(): shape for name, shape in AZURE.items()}


def gpu_shape(instance_type: str | None, extra: Mapping[str, int] | None = None) -> GpuShape | None:
    """The GPUs of ``instance_type``: the user's ``extra`` table first (a count), then the
    built-in one; None for a type neither knows (a CPU type, or a GPU type to add)."""
    if not instance_type:
        return None
    if extra and instance_type in extra:
        known = BUILT_IN.get(instance_type)
        return GpuShape(int(extra[instance_type]), known.model if known else "")
    return BUILT_IN.get(instance_type) or _BY_LOWER.get(instance_type.lower())
