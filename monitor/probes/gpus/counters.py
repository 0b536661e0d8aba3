"""What each GPU's next reading is compared with: the baselines of the sticky or counting
fields, the throttle streak and a fault held until a reset. ``health.assess`` returns the next
``GpuCounters``; the probe keeps them as JSON between probes (``to_json`` / ``from_json``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
