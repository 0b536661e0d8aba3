"""What the provider told the account, as the pages, the status page and ``/metrics`` show it:
account events read through ``monitor.history.account_events`` (the one reader), and how each
configured account event source's polls are going.

An event is *current* while it is upcoming or open; a page lists those first (open ones, then
the soonest to start), then those closed this month (UTC), newest end first. A closed event
counts in the month its window ended, or, with no end given (or one still ahead: a maintenance
canceled before it began), the month its last reading said it was over. A source never polled
is unknown, not fine: nothing heard from it is no news, not good news.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.account.kinds import KINDS
from monitor.config import Config
from monitor.db.models import AccountSource
from monitor.history.account_events import AccountEventView, events
from monitor.sla.intervals import Span
from monitor.sla.months import month_period

CURRENT = ("upcoming", "open")
CLOSED = "closed"
# the kinds that are the provider's doing: what the status page marks on a target
PROVIDER_KINDS = ("scheduled_maintenance", "retirement", "preemption", "issue")
# a closed event announced this far ahead (a maintenance canceled before it began) still counts
# in the month it was closed
AHEAD = timedelta(days=366)
MAX_EVENTS = 100  # a page's list of each: current, closed this month


@dataclass(frozen=True, slots=True)
class PageEvents:
    """One page's account events: ``current`` (open first, then the soonest upcoming) and
    ``closed`` this month (newest end first)."""

    current: tuple[AccountEventView, ...] = ()
    closed: tuple[AccountEventView, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.current or self.closed)


NO_EVENTS = PageEvents()


@dataclass(frozen=True, slots=True)
class AccountSourceHealth:
    """One configured account event source and what its polls left on record: never polled
    (``last_polled_at`` None: unknown), polling, or failing (its latest poll failed)."""

    name: str
    kind: str
    provider: str  # the kind's provider: aws, azure, gcp …
    every_s: float
    last_polled_at: datetime | None
    last_success_at: datetime | None
    consecutive_failures: int
    last_error: str | None
    events: int  # listed by the last clean poll

    @property
    def state(self) -> str:
        if self.last_polled_at is None:
            return "unknown"
        return "failing" if self.consecutive_failures else "ok"


# --------------------------------------------------------------------------- pure shaping


def closed_at(event: AccountEventView) -> datetime:
    """When a closed event was over: its end, unless that end had not come when slamon last
    read it (a maintenance canceled ahead of its window), or it gives none: then the provider's
    last update, else slamon's last reading."""
    if event.ends_at is not None and event.ends_at <= event.last_seen_at:
        return event.ends_at
    return event.updated_at or event.last_seen_at


def current_order(views: Iterable[AccountEventView]) -> tuple[AccountEventView, ...]:
    """Open events first (the longest-running first), then upcoming ones, soonest first."""
    return tuple(sorted(views, key=lambda v: (v.status != "open", v.start, v.id)))


def closed_since(
    views: Iterable[AccountEventView], since: datetime
) -> tuple[AccountEventView, ...]:
    """The closed events among ``views`` that were over after ``since`` (one over at ``since``
    itself ended in the month before), newest first."""
    over = [v for v in views if v.status == CLOSED and closed_at(v) > since]
    return tuple(sorted(over, key=lambda v: (closed_at(v), v.id), reverse=True))


def on_targets(
    views: Iterable[AccountEventView], names: Iterable[str]
) -> dict[str, tuple[AccountEventView, ...]]:
    """``views`` by each of the targets ``names`` they are about, in ``current_order``."""
    wanted = set(names)
    grouped: dict[str, list[AccountEventView]] = {}
    for view in views:
        for name in view.targets:
            if name in wanted:
                grouped.setdefault(name, []).append(view)
    return {name: current_order(found) for name, found in grouped.items()}


def month_start(now: datetime) -> datetime:
    return month_period(f"{now:%Y-%m}").start


def seconds_until(event: AccountEventView, now: datetime) -> float | None:
    """Seconds from ``now`` to an upcoming event's start; None when it gives no start or the
    start has passed (it is due, not ahead)."""
    if event.status != "upcoming" or event.starts_at is None or event.starts_at <= now:
        return None
    return (event.starts_at - now).total_seconds()


def source_health(
    config: Config, states: Iterable[AccountSource]
) -> tuple[AccountSourceHealth, ...]:
    """Every account event source in ``config``, in its order, with its stored poll state."""
    by_name = {state.name: state for state in states}
    found = []
    for source in config.account_events:
        kind = KINDS.get(source.kind)
        provider = kind.provider if kind is not None else ""
        state = by_name.get(source.name)
        found.append(
            AccountSourceHealth(
                source.name,
                source.kind,
                provider,
                source.every,
                state.last_polled_at if state else None,
                state.last_success_at if state else None,
                state.consecutive_failures if state else 0,
                state.last_error if state else None,
                state.events if state else 0,
            )
        )
    return tuple(found)


# --------------------------------------------------------------------------- the reads


def current_events(session: Session, kinds: Sequence[str] = ()) -> list[AccountEventView]:
    """Every stored event upcoming or open (of ``kinds``; any when empty)."""
    return events(session, kinds=kinds, statuses=CURRENT)


def closed_this_month(
    session: Session, now: datetime, *, target: str | None = None
) -> tuple[AccountEventView, ...]:
    """The events (about ``target``, when given) closed in the month of ``now``."""
    since = month_start(now)
    found = events(session, target=target, period=Span(since, now + AHEAD), statuses=(CLOSED,))
    return closed_since(found, since)


def page_events(
    session: Session, now: datetime, *, target: str | None = None, provider: str | None = None
) -> PageEvents:
    """A page's account events: about ``target``, or of ``provider``, or all of them."""
    current = events(session, target=target, statuses=CURRENT)
    closed = closed_this_month(session, now, target=target)
    if provider is not None:
        current = [v for v in current if v.provider == provider]
        closed = tuple(v for v in closed if v.provider == provider)
    return PageEvents(current_order(current)[:MAX_EVENTS], closed[:MAX_EVENTS])


def account_sources(session: Session, config: Config) -> tuple[AccountSourceHealth, ...]:
    """Every configured account event source with what its polls left on record (one query;
    none when no source is configured)."""
    if not config.account_events:
        return ()
    return source_health(config, session.scalars(select(AccountSource)))
