"""GPU readings as JSON: what `slamon agent` pushes in a heartbeat, and how the server reads it
back into the ``GpuReading`` a dcgm-exporter scrape gives, so one judgement (``assess``) serves
both sources. Pure; no I/O.

A reading is an object of ``GpuReading``'s fields (``key`` required, the rest optional, unknown
keys ignored); ``memory_used_mib`` and ``memory_total_mib`` ride along for display.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, fields
from typing import Any

from monitor.probes.gpus.readings import GpuReading, GpuSnapshot, order_readings

MAX_GPUS = 64  # per box; a heartbeat naming more is refused

_INTS = frozenset(
    {"xid", "ecc_dbe_volatile", "ecc_dbe_aggregate", "uncorrectable_remapped_rows",
     "clock_event_reasons"}
)  # fmt: skip
_FLOATS = frozenset(
    {"utilization_pct", "temperature_c", "memory_temperature_c", "power_w"}
)  # fmt: skip
_TEXTS = frozenset({"key", "index", "uuid", "hostname", "model"})
DISPLAY_ONLY = ("memory_used_mib", "memory_total_mib")


def _reading_schema() -> dict[str, Any]:
    """What ``reading_from_json`` accepts, as JSON Schema (the heartbeat route's OpenAPI
    document): ``key`` a non-empty string, each known field null or of its type, numbers not
    negative, unknown keys allowed (and ignored)."""
    properties: dict[str, Any] = {name: {"type": ["string", "null"]} for name in sorted(_TEXTS)}
    properties["key"] = {"type": "string", "minLength": 1}
    properties |= {n: {"type": ["integer", "null"], "minimum": 0} for n in sorted(_INTS)}
    properties |= {n: {"type": ["number", "null"], "minimum": 0} for n in sorted(_FLOATS)}
    properties["row_remap_failure"] = {"type": ["boolean", "null"]}
    properties["mig_instances"] = {"type": ["array", "null"], "items": {"type": "string"}}
    return {"type": "object", "required": ["key"], "properties": properties}


GPU_READING_SCHEMA = _reading_schema()


def reading_to_json(reading: GpuReading, **display: float | None) -> dict[str, Any]:
    """The reading's known fields (None ones left out), plus ``display`` values."""
    data = {k: v for k, v in asdict(reading).items() if v is not None and v != ()}
    data.update({k: v for k, v in display.items() if k in DISPLAY_ONLY and v is not None})
    return data


def reading_from_json(data: Mapping[str, Any]) -> GpuReading:
    """A ``GpuReading`` from one pushed object. Raises ``ValueError`` for a missing key, a value
    of the wrong type or a number that is not finite."""
    key = data.get("key")
    if not isinstance(key, str) or not key:
        raise ValueError("a GPU reading needs a 'key' (its UUID, else host/index)")
    values: dict[str, Any] = {}
    for field in fields(GpuReading):
        name, value = field.name, data.get(field.name)
        if value is None or name == "mig_instances":
            continue
        values[name] = _checked(name, value)
    mig = data.get("mig_instances")
    if mig is None:
        mig = ()
    if not isinstance(mig, list | tuple) or not all(isinstance(m, str) for m in mig):
        raise ValueError("mig_instances: a list of strings")
    return GpuReading(**values, mig_instances=tuple(sorted(mig)))


def snapshot_from_json(readings: Iterable[Mapping[str, Any]]) -> GpuSnapshot:
    """Every pushed GPU, ordered as a scrape's are; one reading per key (the last wins)."""
    by_key = {r.key: r for r in map(reading_from_json, readings)}
    if len(by_key) > MAX_GPUS:
        raise ValueError(f"more than {MAX_GPUS} GPUs in one reading")
    return GpuSnapshot(order_readings(by_key.values()))


def _checked(name: str, value: Any) -> Any:
    if name in _TEXTS:
        if not isinstance(value, str):
            raise ValueError(f"{name}: a string")
        return value[:200]
    if name == "row_remap_failure":
        if not isinstance(value, bool):
            raise ValueError(f"{name}: true or false")
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{name}: a number")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name}: a finite number, not negative")
    if name in _INTS:
        if value != int(value):
            raise ValueError(f"{name}: a whole number")
        return int(value)
    if name in _FLOATS:
        return float(value)
    return value
