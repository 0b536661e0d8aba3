"""What the status page says about a target, a pool, a provider and a vantage (pure).

One rule throughout: unknown is never up. A target is ``up`` only on a fresh quorum verdict that
it is reachable and usable; a pool counts only usable members; a provider is ``operational`` only
after a recent successful read of its status feed found no open relevant incident.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from monitor.probes.quorum import STALE_INTERVALS
from monitor.status.history import DOWN, UNKNOWN, UNUSABLE, UP

OPERATIONAL, INCIDENT, MAINTENANCE = "operational", "incident", "maintenance"
AGREES, DISAGREES, BLIND = "agrees", "disagrees", "blind"


def fresh(
    last_probe_at: datetime | None, interval_s: float, timeout_s: float, now: datetime
) -> bool:
    """Whether some vantage reported on the target recently enough to still vote: the cutoff
    the quorum itself uses (``monitor.probes.record``). The quorum row keeps its last verdict when
    every vantage falls silent, so the page must judge staleness itself."""
    if last_probe_at is None:
        return False
    return last_probe_at >= now - timedelta(seconds=interval_s * STALE_INTERVALS + timeout_s)


def target_state(reachable: str | None, usable: str | None, is_fresh: bool) -> str:
    """``up`` (reachable, and usable or of a kind with no usable verdict), ``unusable``
    (reachable, usable down: a GPU fell off the bus), ``down``, or ``unknown`` (no quorum
    verdict, or a stale one)."""
    if not is_fresh or reachable not in (UP, DOWN):
        return UNKNOWN
    if reachable == DOWN:
        return DOWN
    return UNUSABLE if usable == DOWN else UP


@dataclass(frozen=True, slots=True)
class PoolHealth:
    """A pool's members by displayed state, against the usable members it needs."""

    name: str
    min_up: int
    up: int
    unusable: int
    down: int
    unknown: int

    @property
    def total(self) -> int:
        return self.up + self.unusable + self.down + self.unknown

    @property
    def state(self) -> str:
        """``up`` with ``min_up`` usable members; ``unknown`` when the members we cannot see
        could make up the shortfall; ``down`` when even they could not."""
        if self.up >= self.min_up:
            return UP
        return UNKNOWN if self.up + self.unknown >= self.min_up else DOWN


def pool_health(name: str, min_up: int, states: Sequence[str]) -> PoolHealth:
    """Count a pool's members' displayed states (``target_state``)."""
    return PoolHealth(
        name,
        min_up,
        up=states.count(UP),
        unusable=states.count(UNUSABLE),
        down=states.count(DOWN),
        unknown=sum(s not in (UP, UNUSABLE, DOWN) for s in states),
    )


@dataclass(frozen=True, slots=True)
class FeedFacts:
    """What slamon knows about polling one status feed (a ``feeds`` row)."""

    enabled: bool
    last_polled_at: datetime | None
    last_success_at: datetime | None
    consecutive_failures: int
    last_error: str | None


# The feed's own health in one word, by the reason ``provider_health`` gives; only ``fresh`` is
# a feed the page vouches for.
FEED_STATES = {
    "polled": "fresh",
    "no public feed": "none",
    "feed disabled": "disabled",
    "feed never polled": "never-polled",
    "feed never answered": "never-answered",
    "feed unreachable since": "unreachable",
    "feed not polled since": "stale",
}


@dataclass(frozen=True, slots=True)
class ProviderHealth:
    """A provider's state, why (``reason``, followed by ``at`` when it names a time) and the
    feed facts behind it, for the page's detail line."""

    state: str  # operational | incident | maintenance | unknown
    reason: str
    at: datetime | None
    feed: FeedFacts | None  # the feed the verdict rests on (None: no enabled feed)

    @property
    def feed_state(self) -> str:
        """The feed apart from any incident: fresh, none, disabled, never-polled,
        never-answered, unreachable or stale."""
        return FEED_STATES[self.reason]


def provider_health(
    feeds: Sequence[FeedFacts],
    incidents: int,
    maintenance: int,
    now: datetime,
    stale_after: timedelta,
) -> ProviderHealth:
    """Judge a provider from its feeds and its open relevant incidents (``incidents``) and
    maintenances.

    The verdict rests on the enabled feed read successfully most recently. An open incident is
    evidence whatever the feed's health; ``operational`` needs a successful read no older than
    ``stale_after`` (the ``feed_stale`` alert's threshold). Everything else is ``unknown``,
    with the reason: no public feed, feed disabled, never polled, never answered, unreachable
    since its last successful poll, or not polled since (the feed worker stopped).
    """
    enabled = [f for f in feeds if f.enabled]
    best = max(enabled, key=_freshness, default=None)
    reason, at = _feed_reason(feeds, best, now, stale_after)
    if incidents:
        state = INCIDENT
    elif maintenance:
        state = MAINTENANCE
    else:
        state = OPERATIONAL if reason == "polled" else UNKNOWN
    return ProviderHealth(state, reason, at, best)


def _freshness(feed: FeedFacts) -> tuple[float, float]:
    """Sort key: the latest success first, then the latest attempt (never: minus infinity)."""
    return (_stamp(feed.last_success_at), _stamp(feed.last_polled_at))


def _stamp(at: datetime | None) -> float:
    return at.timestamp() if at is not None else float("-inf")


def _feed_reason(
    feeds: Sequence[FeedFacts], best: FeedFacts | None, now: datetime, stale_after: timedelta
) -> tuple[str, datetime | None]:
    if not feeds:
        return "no public feed", None
    if best is None:
        return "feed disabled", None
    if best.last_polled_at is None:
        return "feed never polled", None
    if best.last_success_at is None:
        return "feed never answered", None
    if now - best.last_success_at <= stale_after:
        return "polled", best.last_success_at
    if best.consecutive_failures:
        return "feed unreachable since", best.last_success_at
    return "feed not polled since", best.last_polled_at


@dataclass(frozen=True, slots=True)
class VantageRow:
    """One probing vantage as the page shows it (from ``VantageHealth``)."""

    vantage: str
    state: str  # agrees | disagrees | blind | unknown
    last_probe_at: datetime | None
    targets: int
    disagreeing: int
    last_agreed_at: datetime | None
    blind_since: datetime | None


def vantage_state(last_probe_at: datetime | None, disagreeing: int, blind: bool) -> str:
    """``blind`` first (it sees nothing), then ``unknown`` (never probed), then whether it
    disagrees with the quorum on any target."""
    if blind:
        return BLIND
    if last_probe_at is None:
        return UNKNOWN
    return DISAGREES if disagreeing else AGREES
