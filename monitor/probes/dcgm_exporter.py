"""GPU health from NVIDIA dcgm-exporter ``/metrics`` text: pure functions, no I/O.

Two steps, both pure:

* ``parse_dcgm(text)`` reads one scrape into a ``GpuSnapshot``: one ``GpuReading`` per physical GPU.
* ``assess(snapshot, previous, expected_gpus)`` judges it into a ``GpuHealth`` and returns the
  ``GpuCounters`` to hand to the next call (stored as JSON between probes).

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
* A GPU that falls off the bus simply disappears from the text, hence ``expected_gpus``.

Decisions in ``assess`` (each documented at its rule):

* First sight: a GPU with no previous record (or ``previous=None``) takes its XID and counters as
  the baseline. A non-zero XID or ECC count seen then happened before we watched; it is recorded,
  not reported, so a box with an old, harmless XID 13 is not flagged forever.
* A value that goes DOWN (exporter or driver restart, GPU reset) becomes the new baseline without
  an event; for XID that includes going back to 0.
* Results are exclusive: healthy (usable, not degraded), degraded (usable, with warnings) or not
  usable; ``fatal`` marks the not-usable results caused by a hardware fault.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from prometheus_client.parser import text_string_to_metric_families

# NVML clock event ("throttle") reason bits, from nvml.h ``nvmlClocksEventReason*``.
CLOCK_GPU_IDLE = 0x1
CLOCK_SW_POWER_CAP = 0x4
CLOCK_HW_SLOWDOWN = 0x8
CLOCK_SW_THERMAL = 0x20
CLOCK_HW_THERMAL = 0x40
CLOCK_HW_POWER_BRAKE = 0x80
THERMAL_REASONS = CLOCK_SW_THERMAL | CLOCK_HW_THERMAL
POWER_REASONS = CLOCK_SW_POWER_CAP | CLOCK_HW_POWER_BRAKE
# HW slowdown fires on over-temperature or on the external power brake, so it is both. The
# software power cap is left out: a healthy GPU under full training load sits at its power cap.
THROTTLE_REASONS = THERMAL_REASONS | CLOCK_HW_POWER_BRAKE | CLOCK_HW_SLOWDOWN

# XIDs after which the GPU needs a reset, a reboot or service (NVIDIA's Xid catalog, "resolution
# bucket" RESET_GPU / RESTART_BM / CONTACT_SUPPORT). 94 is kept although the catalog only asks to
# restart the application: on a rented GPU the job died of a hardware fault. Application faults
# (13, 31, 43, 45…) and 92 (a high single-bit ECC rate: corrected, a warning sign) only degrade.
FATAL_XIDS: Mapping[int, str] = {
    46: "GPU stopped processing",
    48: "double-bit ECC error",
    62: "internal micro-controller halt",
    63: "row remap pending (ECC page retirement): reset needed",
    64: "row remap failure",
    74: "NVLink error",
    79: "GPU has fallen off the bus",
    94: "contained ECC error: the job on that GPU died",
    95: "uncontained ECC error",
    119: "GSP RPC timeout",
    120: "GSP error",
    140: "unrecovered ECC error",
}

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


# --- parsing ------------------------------------------------------------------------------------


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


def order_readings(readings: Iterable[GpuReading]) -> tuple[GpuReading, ...]:
    """Readings in a snapshot's order (whatever their source: a scrape or an agent's push)."""
    return tuple(sorted(readings, key=_order))


def _order(gpu: GpuReading) -> tuple[str, int, str, str]:
    """Host, then ``gpu`` index (shorter first, so GPU 10 comes after GPU 9), then key."""
    index = gpu.index or ""
    return gpu.hostname or "", len(index), index, gpu.key


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


# --- memory between scrapes ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GpuMemory:
    """What one GPU's next scrape is compared with: baselines of the sticky or counting fields."""

    key: str
    xid: int | None = None
    ecc_dbe_volatile: int | None = None
    ecc_dbe_aggregate: int | None = None
    uncorrectable_remapped_rows: int | None = None
    throttle_streak: int = 0  # consecutive scrapes with a throttle bit set, this one included
    # A fatal XID or ECC double-bit error is an event the exporter shows once, but the GPU stays
    # broken until it is reset: the fault is remembered (``fault``: its reason; ``fault_kind``:
    # ``xid`` or ``ecc``) until a reset shows — the XID code back at 0, the volatile ECC count
    # falling — or, where no volatile count is exported, ``fault_hold_scrapes`` clean scrapes.
    fault: str | None = None
    fault_kind: str | None = None
    fault_scrapes: int = 0  # scrapes since the fault was first seen


_MEMORY_INTS = ("xid", "ecc_dbe_volatile", "ecc_dbe_aggregate", "uncorrectable_remapped_rows")
_MEMORY_REST = ("throttle_streak", "fault", "fault_kind", "fault_scrapes")
FAULT_KINDS = ("xid", "ecc")


@dataclass(frozen=True, slots=True)
class GpuCounters:
    """The memory of every GPU of the last scrape; ``assess`` returns the next one.

    A GPU absent from a scrape is forgotten: should it come back, it starts from a new baseline.
    """

    gpus: tuple[GpuMemory, ...] = ()

    def get(self, key: str) -> GpuMemory | None:
        return next((m for m in self.gpus if m.key == key), None)

    def to_json(self) -> dict[str, Any]:
        """A JSON-serialisable dict; ``from_json`` reads it back."""
        return {
            "version": 1,
            "gpus": {
                m.key: {name: getattr(m, name) for name in (*_MEMORY_INTS, *_MEMORY_REST)}
                for m in self.gpus
            },
        }

    @classmethod
    def from_json(cls, data: object) -> GpuCounters:
        """Read what ``to_json`` wrote. Raises ``ValueError`` for anything else."""
        if not isinstance(data, dict) or data.get("version") != 1:
            raise ValueError("unreadable GPU counters: not a version 1 document")
        gpus = data.get("gpus")
        if not isinstance(gpus, dict):
            raise ValueError("unreadable GPU counters: 'gpus' is not an object")
        return cls(tuple(_memory_from_json(key, entry) for key, entry in gpus.items()))


def _memory_from_json(key: object, entry: object) -> GpuMemory:
    if not isinstance(key, str) or not isinstance(entry, dict):
        raise ValueError(f"unreadable GPU counters: bad entry for {key!r}")
    ints = {name: entry.get(name) for name in _MEMORY_INTS}
    streak, held = entry.get("throttle_streak", 0), entry.get("fault_scrapes", 0)
    known = all(v is None or _is_int(v) for v in ints.values())
    if not (known and _is_int(streak) and _is_int(held)):
        raise ValueError(f"unreadable GPU counters: non-integer value for {key!r}")
    fault, kind = entry.get("fault"), entry.get("fault_kind")
    if fault is not None and (not isinstance(fault, str) or kind not in FAULT_KINDS):
        raise ValueError(f"unreadable GPU counters: bad fault for {key!r}")
    return GpuMemory(
        key,
        **ints,
        throttle_streak=max(streak, 0),
        fault=fault,
        fault_kind=kind if fault is not None else None,
        fault_scrapes=max(held, 0) if fault is not None else 0,
    )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


# --- assessment ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GpuThresholds:
    max_temp_c: float = 90.0  # at or above: not usable
    throttle_scrapes: int = 3  # a throttle bit in this many consecutive scrapes: not usable
    throttle_reasons: int = THROTTLE_REASONS  # the clock-event bits that count as throttling
    fatal_xids: frozenset[int] = frozenset(FATAL_XIDS)
    fault_hold_scrapes: int = 60  # a fault with no reset to watch for clears after this many


DEFAULT_THRESHOLDS = GpuThresholds()


@dataclass(frozen=True, slots=True)
class GpuHealth:
    """The verdict on one scrape. ``reasons`` are short, stable texts, worst first per GPU."""

    usable: bool
    degraded: bool  # usable, with something worth a warning
    fatal: bool  # not usable because of a hardware fault (missing GPU, fatal XID, ECC, remap)
    reasons: tuple[str, ...]
    counters: GpuCounters


Severity = Literal["warning", "unusable", "fatal"]


@dataclass(frozen=True, slots=True)
class _Finding:
    severity: Severity
    reason: str
    kind: str | None = None  # xid | ecc: a fault that holds until the GPU is reset


def assess(
    snapshot: GpuSnapshot,
    previous: GpuCounters | None,
    expected_gpus: int,
    thresholds: GpuThresholds = DEFAULT_THRESHOLDS,
) -> GpuHealth:
    """Judge one scrape against the memory of the previous one (None on the first scrape).

    Not usable: fewer GPUs than ``expected_gpus`` (fatal), a new fatal XID, an ECC double-bit
    counter increase, a row remap failure (all fatal), a throttle bit held for
    ``thresholds.throttle_scrapes`` scrapes, a temperature at or above ``thresholds.max_temp_c``.
    Degraded: a new non-fatal XID, a shorter throttle streak, new uncorrectable remapped rows.
    """
    findings: list[_Finding] = []
    missing = expected_gpus - snapshot.gpus_seen
    if missing > 0:
        findings.append(_Finding("fatal", f"{missing} of {expected_gpus} GPUs missing"))
    names = _display_names(snapshot.gpus)
    memories: list[GpuMemory] = []
    for reading in snapshot.gpus:
        # A GPU with no record starts from a blank memory: its values become the baseline.
        before = (previous and previous.get(reading.key)) or GpuMemory(reading.key)
        memory, found = _assess_gpu(reading, before, f"GPU {names[reading.key]}", thresholds)
        memories.append(memory)
        findings.extend(found)
    return _verdict(findings, GpuCounters(tuple(memories)))


def _verdict(findings: list[_Finding], counters: GpuCounters) -> GpuHealth:
    severities = {f.severity for f in findings}
    usable = severities <= {"warning"}
    return GpuHealth(
        usable=usable,
        degraded=usable and bool(severities),
        fatal="fatal" in severities,
        reasons=tuple(f.reason for f in findings),
        counters=counters,
    )


def _display_names(readings: tuple[GpuReading, ...]) -> dict[str, str]:
    """``gpu`` index of each GPU, with its host added where two hosts share an index."""
    base = {r.key: r.index or r.uuid or r.key for r in readings}
    taken = [base[r.key] for r in readings]
    return {
        r.key: base[r.key]
        if taken.count(base[r.key]) == 1
        else f"{base[r.key]} ({r.hostname or r.key})"
        for r in readings
    }


def _assess_gpu(
    reading: GpuReading, before: GpuMemory, name: str, thresholds: GpuThresholds
) -> tuple[GpuMemory, list[_Finding]]:
    streak, throttle = _throttle(reading, before, name, thresholds)
    events = _faults(reading, before, name, thresholds)
    held, kept = _held_fault(reading, before, events, thresholds)
    findings = [*events, *kept, *throttle, *_temperature(reading, name, thresholds)]
    return replace(_remember(reading, before, streak), **held), findings


def _held_fault(
    reading: GpuReading, before: GpuMemory, events: list[_Finding], thresholds: GpuThresholds
) -> tuple[dict[str, Any], list[_Finding]]:
    """The fault to remember after this scrape, and the finding it still makes.

    A new fatal XID or ECC event starts a fault; a remembered one holds (and is reported again,
    so confirmation re-probes and later scrapes see the GPU as broken) until the GPU shows a
    reset, or ``thresholds.fault_hold_scrapes`` scrapes where no reset can be seen.
    """
    fresh = [f for f in events if f.severity == "fatal" and f.kind in FAULT_KINDS]
    if fresh:
        first = fresh[0]
        return {"fault": first.reason, "fault_kind": first.kind, "fault_scrapes": 1}, []
    clear: dict[str, Any] = {"fault": None, "fault_kind": None, "fault_scrapes": 0}
    if before.fault is None or _was_reset(reading, before, thresholds):
        return clear, []
    held = {"fault": before.fault, "fault_kind": before.fault_kind}
    return {**held, "fault_scrapes": before.fault_scrapes + 1}, [
        _Finding("fatal", before.fault, before.fault_kind)
    ]


def _was_reset(reading: GpuReading, before: GpuMemory, thresholds: GpuThresholds) -> bool:
    if before.fault_kind == "xid":
        return reading.xid == 0  # the exporter shows 0 again after a reset or reboot
    volatile, then = reading.ecc_dbe_volatile, before.ecc_dbe_volatile
    if volatile is not None and then is not None:
        return volatile < then  # the volatile count starts again from 0 after a reset
    return before.fault_scrapes >= thresholds.fault_hold_scrapes


def _faults(
    reading: GpuReading, before: GpuMemory, name: str, thresholds: GpuThresholds
) -> list[_Finding]:
    """New XID, ECC and row-remap events: changes since ``before``, never the sticky values."""
    findings: list[_Finding] = []
    xid = _xid_event(before.xid, reading.xid)
    if xid is not None:
        severity: Severity = "fatal" if xid in thresholds.fatal_xids else "warning"
        findings.append(_Finding(severity, f"XID {xid} on {name}", "xid"))
    dbe = max(
        _increase(before.ecc_dbe_volatile, reading.ecc_dbe_volatile),
        _increase(before.ecc_dbe_aggregate, reading.ecc_dbe_aggregate),
    )
    if dbe:
        findings.append(_Finding("fatal", f"ECC double-bit errors +{dbe} on {name}", "ecc"))
    if reading.row_remap_failure:  # a state, not an event: it holds until the GPU is serviced
        findings.append(_Finding("fatal", f"row remap failure on {name}"))
    rows = _increase(before.uncorrectable_remapped_rows, reading.uncorrectable_remapped_rows)
    if rows:
        # A remap that worked after an uncorrectable error: the row is spared at the next reset.
        findings.append(_Finding("warning", f"uncorrectable remapped rows +{rows} on {name}"))
    return findings


def _xid_event(before: int | None, now: int | None) -> int | None:
    """The XID code that is new in this scrape, if any.

    Only a change counts: the exporter repeats the last code forever. A first sight (no earlier
    value) is the baseline, and a fall back to 0 is a restart or reset, not an event.
    """
    if before is None or now is None or now == before or now == 0:
        return None
    return now


def _increase(before: int | None, now: int | None) -> int:
    """How much a counter grew; 0 on first sight and when it went down (a reset)."""
    if before is None or now is None or now <= before:
        return 0
    return now - before


def _throttle(
    reading: GpuReading, before: GpuMemory, name: str, thresholds: GpuThresholds
) -> tuple[int, list[_Finding]]:
    bits = (reading.clock_event_reasons or 0) & thresholds.throttle_reasons
    if not bits:
        return 0, []
    streak = before.throttle_streak + 1
    severity: Severity = "unusable" if streak >= thresholds.throttle_scrapes else "warning"
    return streak, [_Finding(severity, f"{_throttle_kind(bits)} throttling on {name}")]


def _throttle_kind(bits: int) -> str:
    kinds = [
        kind
        for kind, mask in (("thermal", THERMAL_REASONS), ("power", POWER_REASONS))
        if bits & mask
    ]
    return " and ".join(kinds) or "hardware slowdown"


def _temperature(reading: GpuReading, name: str, thresholds: GpuThresholds) -> list[_Finding]:
    temp = reading.temperature_c
    if temp is None or temp < thresholds.max_temp_c:
        return []
    shown = str(int(temp)) if temp.is_integer() else f"{temp:.1f}"
    # At the limit a GPU throttles its clocks: training on it runs slow or not at all, and a
    # box that is this hot needs someone (a warning nobody reads fixes nothing)
    return [_Finding("unusable", f"temperature {shown} °C on {name}")]


def _remember(reading: GpuReading, before: GpuMemory, streak: int) -> GpuMemory:
    """The new baselines: this scrape's values, or the old ones where this scrape has none."""

    def keep(now: int | None, then: int | None) -> int | None:
        return now if now is not None else then

    return GpuMemory(
        key=reading.key,
        xid=keep(reading.xid, before.xid),
        ecc_dbe_volatile=keep(reading.ecc_dbe_volatile, before.ecc_dbe_volatile),
        ecc_dbe_aggregate=keep(reading.ecc_dbe_aggregate, before.ecc_dbe_aggregate),
        uncorrectable_remapped_rows=keep(
            reading.uncorrectable_remapped_rows, before.uncorrectable_remapped_rows
        ),
        throttle_streak=streak,
    )
