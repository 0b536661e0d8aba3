"""Reading the box's GPUs through NVML (``nvidia-ml-py``, NVIDIA's own binding).

NVML answers per call, and a call the GPU or driver does not support raises
``NVMLError_NotSupported``: that field is left out (None), never guessed. A GPU that fell off
the bus (``NVMLError_GpuIsLost``, or any error on its first call) is left out of the reading,
so the server counts it missing against the target's ``gpus``, as it does for a scrape.

XIDs come as events: the reader registers every GPU for critical-XID events at start and drains
the queue at each reading without waiting. A reading carries the LAST XID seen on each GPU
(0 until one comes), the same meaning as dcgm-exporter's ``DCGM_FI_DEV_XID_ERRORS``, so the server
reads a change as a new event with the same rule.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from monitor.agent.model import AgentError, BoxReading, GpuSample
from monitor.probes.gpus.readings import GpuReading

T = TypeVar("T")
MIB = 1024 * 1024


def load_nvml() -> Any:
    """The initialised ``pynvml`` module; ``AgentError`` where NVML cannot load (no driver,
    no library, not installed), which is when the agent falls back to nvidia-smi."""
    try:
        import pynvml
    except ImportError as exc:  # pragma: no cover - nvidia-ml-py is a dependency
        raise AgentError(f"NVML binding not installed ({exc})") from None
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        raise AgentError(f"NVML did not load: {exc}") from None
    return pynvml


@dataclass
class NvmlReader:
    """Reads every GPU NVML sees; keeps the XID event set and the last XID per GPU."""

    nvml: Any
    hostname: str = field(default_factory=socket.gethostname)
    source: str = "nvml"
    _events: Any = None
    _last_xid: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        try:
            self._events = self.nvml.nvmlEventSetCreate()
        except self.nvml.NVMLError:
            self._events = None  # no XID events on this driver: the readings carry none
            return
        for index in range(self._count()):
            try:
                handle = self.nvml.nvmlDeviceGetHandleByIndex(index)
                self.nvml.nvmlDeviceRegisterEvents(
                    handle, self.nvml.nvmlEventTypeXidCriticalError, self._events
                )
            except self.nvml.NVMLError:
                continue  # not supported on this GPU, or it is gone: no XIDs from it

    def read(self) -> BoxReading:
        """One reading of every GPU (the XID queue drained first)."""
        xids = self._drain_xids()
        gpus: list[GpuSample] = []
        for index in range(self._count()):
            sample = self._gpu(index, xids)
            if sample is not None:
                gpus.append(sample)
        return BoxReading(tuple(gpus), self.source)

    def close(self) -> None:
        try:
            if self._events is not None:
                self.nvml.nvmlEventSetFree(self._events)
            self.nvml.nvmlShutdown()
        except self.nvml.NVMLError:
            pass

    def _count(self) -> int:
        try:
            return int(self.nvml.nvmlDeviceGetCount())
        except self.nvml.NVMLError as exc:
            raise AgentError(f"NVML cannot count the GPUs: {exc}") from None

    def _drain_xids(self) -> dict[str, int]:
        """XID codes that came since the last reading, by GPU UUID (the last of each)."""
        if self._events is None:
            return {}
        came: dict[str, int] = {}
        while True:
            try:
                event = self.nvml.nvmlEventSetWait_v2(self._events, 0)
            except self.nvml.NVMLError:  # NVMLError_Timeout: the queue is empty
                return came
            try:
                uuid = str(self.nvml.nvmlDeviceGetUUID(event.device))
            except self.nvml.NVMLError:
                continue
            came[uuid] = int(event.eventData)

    def _gpu(self, index: int, xids: dict[str, int]) -> GpuSample | None:
        nvml = self.nvml
        try:
            handle = nvml.nvmlDeviceGetHandleByIndex(index)
            uuid = str(nvml.nvmlDeviceGetUUID(handle))
        except nvml.NVMLError:
            return None  # lost: counted missing by the server
        if uuid in xids:
            self._last_xid[uuid] = xids[uuid]
        ask = _asker(nvml)
        memory = ask(nvml.nvmlDeviceGetMemoryInfo, handle)
        remap = ask(nvml.nvmlDeviceGetRemappedRows, handle)
        power_mw = ask(nvml.nvmlDeviceGetPowerUsage, handle)
        reading = GpuReading(
            key=uuid,
            index=str(index),
            uuid=uuid,
            hostname=self.hostname,
            model=_text(ask(nvml.nvmlDeviceGetName, handle)),
            utilization_pct=_number(
                getattr(ask(nvml.nvmlDeviceGetUtilizationRates, handle), "gpu", None)
            ),
            temperature_c=_number(
                ask(nvml.nvmlDeviceGetTemperature, handle, nvml.NVML_TEMPERATURE_GPU)
            ),
            memory_temperature_c=_memory_temperature(nvml, handle),
            power_w=None if power_mw is None else power_mw / 1000,
            xid=self._last_xid.get(uuid, 0) if self._events is not None else None,
            ecc_dbe_volatile=_ecc(nvml, handle, nvml.NVML_VOLATILE_ECC),
            ecc_dbe_aggregate=_ecc(nvml, handle, nvml.NVML_AGGREGATE_ECC),
            row_remap_failure=None if remap is None else bool(remap[3]),
            uncorrectable_remapped_rows=None if remap is None else int(remap[1]),
            clock_event_reasons=_clock_reasons(nvml, handle),
        )
        used = None if memory is None else memory.used / MIB
        total = None if memory is None else memory.total / MIB
        return GpuSample(reading, memory_used_mib=used, memory_total_mib=total)


def _asker(nvml: Any) -> Callable[..., Any]:
    def ask(call: Callable[..., T], *args: Any) -> T | None:
        try:
            return call(*args)
        except nvml.NVMLError:
            return None  # not supported here, or failed this once: not reported

    return ask


def _ecc(nvml: Any, handle: Any, counter: int) -> int | None:
    try:
        return int(
            nvml.nvmlDeviceGetTotalEccErrors(
                handle, nvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED, counter
            )
        )
    except nvml.NVMLError:
        return None  # ECC off, or a GPU without ECC


def _clock_reasons(nvml: Any, handle: Any) -> int | None:
    """The clock-event bitmask: the current call, else its pre-535 name."""
    names = ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons")
    for name in names:
        call = getattr(nvml, name, None)
        if call is None:
            continue
        try:
            return int(call(handle))
        except nvml.NVMLError:
            continue
    return None


def _memory_temperature(nvml: Any, handle: Any) -> float | None:
    """HBM temperature, where the GPU reports it (a field value, not a plain call)."""
    try:
        [value] = nvml.nvmlDeviceGetFieldValues(handle, [nvml.NVML_FI_DEV_MEMORY_TEMP])
    except (nvml.NVMLError, ValueError, TypeError):
        return None
    if getattr(value, "nvmlReturn", 1) != 0:
        return None
    return _number(getattr(getattr(value, "value", None), "uiVal", None))


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _text(value: object) -> str | None:
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return value if isinstance(value, str) else None
