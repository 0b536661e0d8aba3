"""What the health judgement reads and what it finds: frozen values, no database."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from monitor.config.models import Config
from monitor.scheduler.lease import LeaseView as Lease

__all__ = ["DISPATCH_ENTRY", "Bounds", "Judgement", "Lease", "Ping", "Reason", "Slot", "Snapshot"]

DISPATCH_ENTRY = "probes-dispatch"  # workers/schedule.py's name for the probes' dispatch


@dataclass(frozen=True, slots=True)
class Slot:
    """One periodic task's row of ``schedule_slots``: the last slot sent and the last one a
    worker admitted (``period_s`` None: a calendar entry, which is not judged)."""

    name: str
    period_s: float | None
    sent_slot: datetime | None = None
    sent_at: datetime | None = None
    done_slot: datetime | None = None
    done_at: datetime | None = None
    fenced: int = 0
    repeated: int = 0


@dataclass(frozen=True, slots=True)
class Ping:
    """The watchdog's last ping: when it was tried, when one was last taken, why the last
    attempt failed (None when it was taken)."""

    holder: str
    attempted_at: datetime
    pinged_at: datetime | None
    error: str | None


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What the judgement needs, read at ``now`` (the database's clock, which times the lease).

    ``oldest_pending`` is the creation time of the oldest delivery still pending (None when
    none is); ``feeds`` counts the enabled feeds and ``last_feed_poll`` is the newest poll
    attempt among them, failed or not (a feed never polled counts from when it was added)."""

    now: datetime
    lease: Lease | None = None
    slots: tuple[Slot, ...] = ()
    oldest_pending: datetime | None = None
    feeds: int = 0
    last_feed_poll: datetime | None = None
    ping: Ping | None = None


@dataclass(frozen=True, slots=True)
class Bounds:
    """How late is too late, in seconds (``watchdog.max_lag``, ``max_backlog``,
    ``max_feed_age``; the last 3 × ``schedule.feeds`` unless set)."""

    max_lag_s: float = 30.0
    max_backlog_s: float = 600.0
    max_feed_age_s: float = 360.0

    @classmethod
    def of(cls, config: Config) -> Bounds:
        watchdog = config.watchdog
        feed_age = watchdog.max_feed_age
        if feed_age is None:
            feed_age = 3 * config.schedule.feeds
        return cls(watchdog.max_lag, watchdog.max_backlog, feed_age)


@dataclass(frozen=True, slots=True)
class Reason:
    """One failing check: ``kind`` names the check and what it is about (``lag:probes-dispatch``,
    ``backlog``…), stable while the trouble lasts, so a change of trouble can be told apart
    from its figures growing; ``text`` is the sentence a person reads."""

    kind: str
    text: str


@dataclass(frozen=True, slots=True)
class Judgement:
    """What the checks found at ``now``: who leads (None: nobody), each judged entry's lag
    and the largest (None when no entry could be judged), how long the oldest pending
    delivery has waited (0 when none), how long since a feed was polled (None: no enabled
    feed), and a reason per failing check (none: healthy)."""

    now: datetime
    leader: str | None
    lease: Lease | None
    lags: tuple[tuple[str, float], ...]
    lag_s: float | None
    backlog_s: float
    feed_age_s: float | None
    reasons: tuple[Reason, ...]

    @property
    def ok(self) -> bool:
        return not self.reasons

    @property
    def kinds(self) -> tuple[str, ...]:
        return tuple(reason.kind for reason in self.reasons)
