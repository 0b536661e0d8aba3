"""The GPU health rules: a ``GpuSnapshot`` judged against the ``GpuCounters`` of the previous
one into a ``GpuHealth``. Pure.

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

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from monitor.probes.gpus.counters import FAULT_KINDS, GpuCounters, GpuMemory
from monitor.probes.gpus.readings import (
    CLOCK_HW_POWER_BRAKE,
    CLOCK_HW_SLOWDOWN,
    CLOCK_HW_THERMAL,
    CLOCK_SW_POWER_CAP,
    CLOCK_SW_THERMAL,
    GpuReading,
    GpuSnapshot,
)

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
