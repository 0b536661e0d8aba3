"""What the agent reads and pushes (pure values)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from monitor.errors import SlamonError
from monitor.probes.gpus.readings import GpuReading
from monitor.probes.gpus.wire import reading_to_json


class AgentError(SlamonError):
    """A condition the agent reports in one line: no GPU source, a refused push."""


@dataclass(frozen=True, slots=True)
class GpuSample:
    """One GPU as read: what the server judges, and memory use for display."""

    reading: GpuReading
    memory_used_mib: float | None = None
    memory_total_mib: float | None = None

    def to_json(self) -> dict[str, Any]:
        return reading_to_json(
            self.reading,
            memory_used_mib=_rounded(self.memory_used_mib),
            memory_total_mib=_rounded(self.memory_total_mib),
        )


@dataclass(frozen=True, slots=True)
class BoxReading:
    """Every GPU of the box at one moment, and where the values came from."""

    gpus: tuple[GpuSample, ...]
    source: str  # nvml | nvidia-smi

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "gpus": [g.to_json() for g in self.gpus]}


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)
