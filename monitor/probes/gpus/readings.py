"""One reading of a GPU, and a snapshot of a box's GPUs: what a dcgm-exporter scrape
(``dcgm_text``) and an agent's push (``wire``) are both read into, so one judgement
(``health.assess``) serves both. Pure."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

# NVML clock event ("throttle") reason bits, from nvml.h ``nvmlClocksEventReason*``.
CLOCK_GPU_IDLE = 0x1
CLOCK_SW_POWER_CAP = 0x4
CLOCK_HW_SLOWDOWN = 0x8
CLOCK_SW_THERMAL = 0x20
CLOCK_HW_THERMAL = 0x40
CLOCK_HW_POWER_BRAKE = 0x80


@dataclass(frozen=True, slots=True)
class GpuReading:
    """One physical GPU in one scrape. A field is None when the exporter did not report it."""

    key: str  # the UUID, else "<hostname>/<gpu index>"; stable between scrapes
    index: str | None = None  # the ``gpu`` label
    uuid: str | None = None
    hostname: str | None = None
    model: str | None = None
    mig_instances: tuple[str, ...] = ()  # GPU_I_ID (or profile) of each MIG instance, sorted
    utilization_pct: float | None = None
    temperature_c: float | None = None
    memory_temperature_c: float | None = None
    power_w: float | None = None
    xid: int | None = None  # the last XID code seen; 0 = none since the driver loaded
    ecc_dbe_volatile: int | None = None
    ecc_dbe_aggregate: int | None = None
    row_remap_failure: bool | None = None
    uncorrectable_remapped_rows: int | None = None
    clock_event_reasons: int | None = None  # NVML bitmask, see the CLOCK_* constants


@dataclass(frozen=True, slots=True)
class GpuSnapshot:
    """Every physical GPU of one scrape, ordered by host, then ``gpu`` index, then key."""

    gpus: tuple[GpuReading, ...] = ()

    @property
    def gpus_seen(self) -> int:
        return len(self.gpus)

    def gpu(self, key: str) -> GpuReading | None:
        """The reading whose ``key`` (UUID, else ``host/index``) is ``key``, if any."""
        return next((g for g in self.gpus if g.key == key), None)


def order_readings(readings: Iterable[GpuReading]) -> tuple[GpuReading, ...]:
    """Readings in a snapshot's order (whatever their source: a scrape or an agent's push)."""
    return tuple(sorted(readings, key=_order))


def _order(gpu: GpuReading) -> tuple[str, int, str, str]:
    """Host, then ``gpu`` index (shorter first, so GPU 10 comes after GPU 9), then key."""
    index = gpu.index or ""
    return gpu.hostname or "", len(index), index, gpu.key
