"""An NVIDIA dcgm-exporter ``/metrics`` scrape read into a ``GpuSnapshot``: pure, no I/O.

What the exporter's text looks like, and what we make of it:

* A GPU is identified by its ``UUID`` label (``uuid`` with the exporter's old namespace), else by
  its host (``Hostname`` or ``hostname``) and its ``gpu`` index. Series with neither a UUID nor a
  ``gpu`` label (the dummies some captures hold, NVSwitch and CPU entities) are ignored, and so are
  families whose name does not start with ``DCGM_``.
* MIG instances repeat the parent's ``UUID`` and ``gpu`` and add ``GPU_I_ID``/``GPU_I_PROFILE``, so
  they fold into their physical GPU. When several series of one GPU carry the same field (MIG
  instances, or one series per pod when a GPU is time-sliced) the highest value is kept, the worst
  for every field we judge; the clock-event bitmask is OR-ed instead.
* ``prometheus_client`` renames the samples of a ``counter`` family ``<name>_total``; fields are
  matched with that suffix removed.
* ``DCGM_FI_DEV_XID_ERRORS`` is the LAST XID code seen, not a count: a new event shows only as a
  change of value, and the same code twice in a row is invisible (a limit of the exporter).
* A GPU that falls off the bus simply disappears from the text, hence ``health.assess``'s
  ``expected_gpus``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from prometheus_client.parser import text_string_to_metric_families

from monitor.probes.gpus.readings import GpuReading, GpuSnapshot, order_readings

_FIELDS: Mapping[str, str] = {
    "DCGM_FI_DEV_GPU_UTIL": "utilization_pct",
    "DCGM_FI_DEV_GPU_TEMP": "temperature_c",
    "DCGM_FI_DEV_MEMORY_TEMP": "memory_temperature_c",
    "DCGM_FI_DEV_POWER_USAGE": "power_w",
    "DCGM_FI_DEV_XID_ERRORS": "xid",
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": "ecc_dbe_volatile",
    "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL": "ecc_dbe_aggregate",
    "DCGM_FI_DEV_ROW_REMAP_FAILURE": "row_remap_failure",
    "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS": "uncorrectable_remapped_rows",
    "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS": "clock_event_reasons",  # before DCGM 3.3
    "DCGM_FI_DEV_CLOCKS_EVENT_REASONS": "clock_event_reasons",
}
_BITMASKS = frozenset({"clock_event_reasons"})
_UUID_LABELS = ("UUID", "uuid")
_HOST_LABELS = ("Hostname", "hostname")
_MIG_LABELS = ("GPU_I_ID", "GPU_I_PROFILE")


@dataclass(slots=True)
class _Gathered:
    """A GPU's series while the text is being read (mutable; never leaves this module)."""

    key: str
    labels: dict[str, str] = field(default_factory=dict)
    mig: set[str] = field(default_factory=set)
    values: dict[str, float] = field(default_factory=dict)
    masks: dict[str, int] = field(default_factory=dict)


def parse_dcgm(text: str) -> GpuSnapshot:
    """Read one dcgm-exporter scrape (Prometheus text format) into a ``GpuSnapshot``.

    Empty text gives a snapshot of 0 GPUs. Raises ``ValueError("unreadable DCGM metrics: …")``
    when the text is not Prometheus exposition text, and no other exception.
    """
    gathered: dict[str, _Gathered] = {}
    for name, labels, value in _samples(text):
        key = _gpu_key(labels)
        if key is None or not name.startswith("DCGM_"):
            continue
        gpu = gathered.setdefault(key, _Gathered(key))
        _absorb(gpu, name, labels, value)
    return GpuSnapshot(order_readings(map(_reading, gathered.values())))


def _samples(text: str) -> list[tuple[str, dict[str, str], float]]:
    try:
        return [
            (sample.name, sample.labels, sample.value)
            for family in text_string_to_metric_families(text)
            for sample in family.samples
        ]
    # The parser raises ValueError for what we fed it (fuzzed), but it is a hand-written scanner
    # with no documented error contract; whatever it raises means "unreadable" to the caller.
    except Exception as exc:
        raise ValueError(f"unreadable DCGM metrics: {str(exc) or type(exc).__name__}") from exc


def _label(labels: Mapping[str, str], names: Iterable[str]) -> str | None:
    return next((labels[n] for n in names if labels.get(n)), None)


def _gpu_key(labels: Mapping[str, str]) -> str | None:
    uuid = _label(labels, _UUID_LABELS)
    if uuid is not None:
        return uuid
    index = labels.get("gpu")
    if not index:
        return None
    return f"{_label(labels, _HOST_LABELS) or ''}/{index}"


def _absorb(gpu: _Gathered, name: str, labels: Mapping[str, str], value: float) -> None:
    for label, text in labels.items():  # a label missing from one series may be on another
        if text:
            gpu.labels.setdefault(label, text)
    mig = _label(labels, _MIG_LABELS)
    if mig is not None:
        gpu.mig.add(mig)
    attribute = _FIELDS.get(name) or _FIELDS.get(name.removesuffix("_total"))
    if attribute is None or not math.isfinite(value):
        return
    if attribute in _BITMASKS:
        gpu.masks[attribute] = gpu.masks.get(attribute, 0) | int(value)
    else:
        # float(): the parser hands integral values over as int, and readings are floats.
        gpu.values[attribute] = max(float(value), gpu.values.get(attribute, -math.inf))


def _reading(gpu: _Gathered) -> GpuReading:
    values = gpu.values

    def whole(attribute: str) -> int | None:
        value = values.get(attribute)
        return None if value is None else int(value)

    remap = values.get("row_remap_failure")
    return GpuReading(
        key=gpu.key,
        index=gpu.labels.get("gpu") or None,
        uuid=_label(gpu.labels, _UUID_LABELS),
        hostname=_label(gpu.labels, _HOST_LABELS),
        model=gpu.labels.get("modelName") or None,
        mig_instances=tuple(sorted(gpu.mig)),
        utilization_pct=values.get("utilization_pct"),
        temperature_c=values.get("temperature_c"),
        memory_temperature_c=values.get("memory_temperature_c"),
        power_w=values.get("power_w"),
        xid=whole("xid"),
        ecc_dbe_volatile=whole("ecc_dbe_volatile"),
        ecc_dbe_aggregate=whole("ecc_dbe_aggregate"),
        row_remap_failure=None if remap is None else remap != 0,
        uncorrectable_remapped_rows=whole("uncorrectable_remapped_rows"),
        clock_event_reasons=gpu.masks.get("clock_event_reasons"),
    )
