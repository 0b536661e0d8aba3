"""NVML faked at the binding's boundary: the ``pynvml`` functions the agent calls, answering
with readings recorded from a real GPU, and pynvml's own error classes and constants.

The values are those of the real H100 80GB HBM3 in ``tests/fixtures/nvidia-smi/
gpuexp-h100-load.csv`` (nvidia-smi, driver 590.48.01, under load): 59 °C, HBM 54 °C, 100 %
busy, 19,818 of 81,559 MiB used, 631.95 W, no clock events, no ECC errors, no remapped rows.
A test changes a ``FakeGpu`` to break it: lost (off the bus), an XID event, hot, ECC, throttled.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import pynvml

MIB = 1024 * 1024


@dataclass
class FakeGpu:
    index: int
    uuid: str
    name: str = "NVIDIA H100 80GB HBM3"
    temperature_c: int = 59
    memory_temperature_c: int = 54
    utilization_pct: int = 100
    memory_used_mib: int = 19818
    memory_total_mib: int = 81559
    power_mw: int = 631950
    clock_event_reasons: int = 0x0
    ecc_dbe_volatile: int | None = 0  # None: the GPU has no ECC (NVML says Not Supported)
    ecc_dbe_aggregate: int | None = 0
    remapped_uncorrectable: int = 0
    remap_failure: bool = False
    lost: bool = False  # fallen off the bus: every call on it fails with GpuIsLost


def h100s(count: int, box: str = "box") -> list[FakeGpu]:
    return [FakeGpu(i, f"GPU-{box}-{i:02d}-0000-0000-000000000000") for i in range(count)]


@dataclass
class FakeNvml:
    """Stands in for the ``pynvml`` module (pass it where the module would go, or patch its
    functions onto the real module with ``patch_into``)."""

    gpus: list[FakeGpu]
    loads: bool = True  # False: nvmlInit fails as on a box without the driver
    events: deque[tuple[int, int]] = field(default_factory=deque)  # (gpu index, XID code)
    registered: set[int] = field(default_factory=set)
    calls: int = 0

    # the binding's own errors and constants
    NVMLError = pynvml.NVMLError
    NVML_TEMPERATURE_GPU = pynvml.NVML_TEMPERATURE_GPU
    NVML_MEMORY_ERROR_TYPE_UNCORRECTED = pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
    NVML_VOLATILE_ECC = pynvml.NVML_VOLATILE_ECC
    NVML_AGGREGATE_ECC = pynvml.NVML_AGGREGATE_ECC
    NVML_FI_DEV_MEMORY_TEMP = pynvml.NVML_FI_DEV_MEMORY_TEMP
    nvmlEventTypeXidCriticalError = pynvml.nvmlEventTypeXidCriticalError

    def xid(self, index: int, code: int) -> None:
        """The driver reports XID ``code`` on GPU ``index``."""
        if index in self.registered:
            self.events.append((index, code))

    # --- the functions -------------------------------------------------------------------
    def nvmlInit(self) -> None:
        if not self.loads:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_LIBRARY_NOT_FOUND)

    def nvmlShutdown(self) -> None:
        pass

    def nvmlDeviceGetCount(self) -> int:
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeGpu:
        return self._alive(self.gpus[index])

    def nvmlDeviceGetUUID(self, handle: FakeGpu) -> str:
        return self._alive(handle).uuid

    def nvmlDeviceGetName(self, handle: FakeGpu) -> str:
        return self._alive(handle).name

    def nvmlDeviceGetTemperature(self, handle: FakeGpu, sensor: int) -> int:
        assert sensor == pynvml.NVML_TEMPERATURE_GPU
        return self._alive(handle).temperature_c

    def nvmlDeviceGetFieldValues(self, handle: FakeGpu, ids: list[int]) -> list[Any]:
        assert ids == [pynvml.NVML_FI_DEV_MEMORY_TEMP]
        gpu = self._alive(handle)
        return [
            SimpleNamespace(nvmlReturn=0, value=SimpleNamespace(uiVal=gpu.memory_temperature_c))
        ]

    def nvmlDeviceGetUtilizationRates(self, handle: FakeGpu) -> Any:
        return SimpleNamespace(gpu=self._alive(handle).utilization_pct, memory=11)

    def nvmlDeviceGetMemoryInfo(self, handle: FakeGpu) -> Any:
        gpu = self._alive(handle)
        used, total = gpu.memory_used_mib * MIB, gpu.memory_total_mib * MIB
        return SimpleNamespace(used=used, total=total, free=total - used)

    def nvmlDeviceGetPowerUsage(self, handle: FakeGpu) -> int:
        return self._alive(handle).power_mw

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: FakeGpu) -> int:
        return self._alive(handle).clock_event_reasons

    def nvmlDeviceGetTotalEccErrors(self, handle: FakeGpu, kind: int, counter: int) -> int:
        gpu = self._alive(handle)
        assert kind == pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
        value = (
            gpu.ecc_dbe_volatile if counter == pynvml.NVML_VOLATILE_ECC else gpu.ecc_dbe_aggregate
        )
        if value is None:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return value

    def nvmlDeviceGetRemappedRows(self, handle: FakeGpu) -> tuple[int, int, int, int]:
        gpu = self._alive(handle)
        return (0, gpu.remapped_uncorrectable, 0, int(gpu.remap_failure))

    def nvmlEventSetCreate(self) -> str:
        return "event-set"

    def nvmlEventSetFree(self, events: str) -> None:
        pass

    def nvmlDeviceRegisterEvents(self, handle: FakeGpu, kinds: int, events: str) -> None:
        assert kinds == pynvml.nvmlEventTypeXidCriticalError
        self.registered.add(self._alive(handle).index)

    def nvmlEventSetWait_v2(self, events: str, timeout_ms: int) -> Any:
        if not self.events:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_TIMEOUT)
        index, code = self.events.popleft()
        return SimpleNamespace(device=self.gpus[index], eventType=1 << 3, eventData=code)

    def _alive(self, gpu: FakeGpu) -> FakeGpu:
        self.calls += 1
        if gpu.lost:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_GPU_IS_LOST)
        return gpu


FUNCTIONS = tuple(name for name in vars(FakeNvml) if name.startswith("nvml"))


def patch_into(monkeypatch: Any, fake: FakeNvml) -> None:
    """Put ``fake``'s functions on the real ``pynvml`` module, where the agent looks them up."""
    for name in FUNCTIONS:
        assert hasattr(pynvml, name), f"pynvml has no {name}: the fake names a function it lacks"
        monkeypatch.setattr(pynvml, name, getattr(fake, name))
