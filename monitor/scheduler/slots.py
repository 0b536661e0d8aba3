"""The periodic tasks' slots: pure arithmetic on an epoch-aligned grid."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta


def interval_slot(now: datetime, period_s: float) -> datetime:
    """The latest slot at or before ``now`` of a task run every ``period_s`` seconds: slot k is
    k periods after the epoch, so every scheduler computes the same slots, whoever leads."""
    k = math.floor(now.timestamp() / period_s)
    return datetime.fromtimestamp(k * period_s, UTC)


def seconds_to_next_slot(now: datetime, period_s: float) -> float:
    """How long until the slot after ``now``'s."""
    slot = interval_slot(now, period_s)
    return max(0.0, (slot + timedelta(seconds=period_s) - now).total_seconds())


@dataclass(frozen=True, slots=True)
class Term:
    """How long this scheduler may act as leader after one successful hold of the lease.

    ``asked_at`` is the local monotonic time just *before* the hold was asked for: the lease
    runs ``lease_s`` from the database's clock at the hold, which is no earlier, so the term
    ends no later than the lease does however slow the answer was."""

    asked_at: float
    lease_s: float

    def leads_at(self, monotonic_now: float) -> bool:
        return monotonic_now < self.asked_at + self.lease_s

    def renew_at(self) -> float:
        """When to renew: a third into the lease, so two renewals may fail before it ends."""
        return self.asked_at + self.lease_s / 3
