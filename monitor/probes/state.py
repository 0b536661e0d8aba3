"""The target state machine (pure): confirmed transitions between up and down, and the quorum
of vantages that turns per-vantage verdicts into the target's.

A transition is dated to the first probe of the streak that confirmed it, not the confirming
probe: an outage starts at its first failing probe and ends at its first successful one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime

UP, DOWN, UNKNOWN = "up", "down", "unknown"


@dataclass(frozen=True, slots=True)
class Streak:
    """One series' memory at one vantage."""

    state: str = UNKNOWN
    since: datetime | None = None  # when ``state`` began (dated to its first probe)
    failures: int = 0
    successes: int = 0
    failure_started_at: datetime | None = None
    success_started_at: datetime | None = None
    last_probe_at: datetime | None = None

    @property
    def unconfirmed(self) -> bool:
        """A streak is running against the state: confirm it soon, not an interval later."""
        return (self.failures > 0 and self.state != DOWN) or (
            self.successes > 0 and self.state == DOWN
        )


@dataclass(frozen=True, slots=True)
class Transition:
    previous: str
    state: str
    at: datetime


def advance(
    streak: Streak,
    ok: bool,
    at: datetime,
    confirmations: int,
    recovery_confirmations: int | None = None,
) -> tuple[Streak, Transition | None]:
    """Feed one probe verdict into ``streak``; the transition it confirms, if any.

    ``confirmations`` consecutive failures confirm down; ``recovery_confirmations`` successes
    (by default as many) confirm recovery from down. From unknown, the first success is enough
    to call it up.
    """
    if ok:
        started = (
            streak.success_started_at if streak.success_started_at and streak.successes else at
        )
        new = replace(
            streak,
            successes=streak.successes + 1,
            failures=0,
            success_started_at=started,
            failure_started_at=None,
            last_probe_at=at,
        )
        needed = (recovery_confirmations or confirmations) if streak.state == DOWN else 1
        target_state = UP if new.successes >= needed else streak.state
    else:
        started = streak.failure_started_at if streak.failure_started_at and streak.failures else at
        new = replace(
            streak,
            failures=streak.failures + 1,
            successes=0,
            failure_started_at=started,
            success_started_at=None,
            last_probe_at=at,
        )
        target_state = DOWN if new.failures >= confirmations else streak.state
    if target_state == streak.state:
        return new, None
    return replace(new, state=target_state, since=started), Transition(
        streak.state, target_state, started
    )


@dataclass(frozen=True, slots=True)
class VantageView:
    """What one vantage currently says about a target's series."""

    vantage: str
    state: str
    since: datetime | None
    last_probe_at: datetime | None


def quorum_size(active_vantages: int, configured: int | None = None) -> int:
    """A majority of the vantages that are probing (at least one), unless set explicitly."""
    if configured:
        return max(1, min(configured, active_vantages))
    return active_vantages // 2 + 1 if active_vantages else 1


def verdict(views: Iterable[VantageView], quorum: int) -> tuple[str, datetime | None]:
    """The target's state from its vantages, and since when.

    Down when at least ``quorum`` vantages say down, dated to when the quorum-th of them went
    down; otherwise up (dated to the latest recovery among the vantages that say up) or
    unknown when no vantage knows.
    """
    known = [v for v in views if v.state in (UP, DOWN)]
    down = sorted((v.since for v in known if v.state == DOWN and v.since), key=lambda t: t)
    if len(down) >= quorum:
        return DOWN, down[quorum - 1]
    ups = [v.since for v in known if v.state == UP and v.since]
    if ups:
        return UP, max(ups)
    return (UP, None) if known else (UNKNOWN, None)
