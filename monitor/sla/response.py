"""Incident response times (docs/DESIGN.md, "Incident response times"): time to acknowledge,
to resolve, status-page lag, and the percentiles they are summarised with.

Pure functions over plain values; the database hands in rows, the report renders the result.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

# an incident in one of these states is over, however its feed says it (the normalized statuses)
CLOSED_STATUSES = frozenset({"resolved", "postmortem", "completed"})


class Update(Protocol):
    """One public update of an incident: when it was posted and the status it gave."""

    @property
    def at(self) -> datetime: ...

    @property
    def status(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Lifecycle:
    """When an incident started, was acknowledged, identified and resolved (None: not yet)."""

    started_at: datetime | None
    acknowledged_at: datetime | None
    identified_at: datetime | None
    resolved_at: datetime | None


def lifecycle(
    started_at: datetime | None, resolved_at: datetime | None, updates: Sequence[Update]
) -> Lifecycle:
    """Acknowledged = the provider's first public update; identified = first "identified"."""
    ordered = sorted(updates, key=lambda u: u.at)
    acknowledged = ordered[0].at if ordered else None
    identified = next((u.at for u in ordered if u.status == "identified"), None)
    return Lifecycle(started_at, acknowledged, identified, resolved_at)


def time_to_acknowledge(life: Lifecycle) -> timedelta | None:
    if life.started_at is None or life.acknowledged_at is None:
        return None
    return max(timedelta(0), life.acknowledged_at - life.started_at)


def time_to_resolve(life: Lifecycle) -> timedelta | None:
    if life.started_at is None or life.resolved_at is None:
        return None
    return max(timedelta(0), life.resolved_at - life.started_at)


def status_page_lag(
    acknowledged_at: datetime | None, detected_at: datetime | None
) -> timedelta | None:
    """How late the provider told the world, after our own earliest detection (may be < 0 when
    the provider was first)."""
    if acknowledged_at is None or detected_at is None:
        return None
    return acknowledged_at - detected_at


def detected_at(*candidates: datetime | None) -> datetime | None:
    """The earliest of our probe detection, the incident's start and when we first saw it."""
    present = [c for c in candidates if c is not None]
    return min(present) if present else None


@dataclass(frozen=True, slots=True)
class Summary:
    """Count, median and 90th percentile of a set of durations (seconds)."""

    count: int
    median_s: float | None
    p90_s: float | None


def summarize(durations: Iterable[timedelta | None]) -> Summary:
    values = sorted(d.total_seconds() for d in durations if d is not None)
    return Summary(len(values), percentile(values, 50), percentile(values, 90))


def percentile(sorted_values: Sequence[float], pct: float) -> float | None:
    """Linear-interpolated percentile (the "inclusive" method numpy uses by default)."""
    if not sorted_values:
        return None
    rank = (len(sorted_values) - 1) * pct / 100
    low, high = math.floor(rank), math.ceil(rank)
    fraction = rank - low
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * fraction
