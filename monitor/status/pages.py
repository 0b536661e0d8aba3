"""The pages alerts link to, as frozen values: one target's (``/targets/NAME``: 30 days of
history bars, its uptimes, its outages with their causes and what its provider told the account
about it) and one provider's (``/providers/SLUG``: its feed's health, its incidents, open and
recent, and its account events with their sources). Read through the ``page_*`` queries of
``monitor.status.repository`` and ``monitor.status.account``, and shaped by the same pure rules
as the status page (``monitor.status.history``, ``monitor.status.health``), so a target's page
and its fleet row agree: unknown time is unknown, never up."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy.orm import Session

from monitor.config import Config
from monitor.history import notices
from monitor.history.notices import NoticeView
from monitor.history.spans import REACHABLE, USABLE
from monitor.probes.kinds import usable_matters
from monitor.status import repository
from monitor.status.account import (
    NO_EVENTS,
    AccountSourceHealth,
    PageEvents,
    account_sources,
    page_events,
)
from monitor.status.health import ProviderHealth, fresh, provider_health, target_state
from monitor.status.history import Bucket, Uptime, bucket_edges, history_bar, timeline, uptime
from monitor.status.view import WINDOWS

DAYS = 30
DAY = timedelta(days=1)  # a target page's bars: 30 × 1 day
HISTORY = DAYS * DAY  # how far back outages and incidents are listed (open ones always)
MAX_OUTAGES = 200
MAX_INCIDENTS = 100
RETIRED = "retired"


@dataclass(frozen=True, slots=True)
class OutageView:
    series: str  # reachable (down) | usable (reachable, not usable)
    start: datetime
    end: datetime | None  # None: still open
    duration: timedelta  # until now while open
    cause: str | None
    detail: str  # what the outage row recorded (the vantages that agreed…), "" when nothing

    @property
    def open(self) -> bool:
        return self.end is None


@dataclass(frozen=True, slots=True)
class TargetPage:
    now: datetime
    name: str
    kind: str
    state: str  # up | unusable | down | unknown | retired
    pool: str | None
    provider: str | None
    region: str | None
    retired_at: datetime | None
    history_start: datetime
    bar: tuple[Bucket, ...]  # DAYS daily buckets, equal adjacent ones joined
    uptime: tuple[Uptime, ...]  # over WINDOWS
    outages: tuple[OutageView, ...]  # newest first
    ended_by: str | None = None  # how the life ended: user | preempted | provider | unknown
    end_detail: str | None = None  # the cloud's own words
    capacity: str = "unknown"
    # what its provider told the account about it: upcoming and open, then closed this month
    account_events: PageEvents = NO_EVENTS
    notices: tuple[NoticeView, ...] = ()  # the operators' about it (or everything), as shown

    @property
    def end_words(self) -> str | None:
        """The end of the life as the page says it: never an outage."""
        if self.retired_at is None or self.ended_by is None:
            return None
        return END_WORDS.get(self.ended_by, self.ended_by)


END_WORDS = {
    "user": "stopped by the account",
    "preempted": "reclaimed by its provider (spot / preemptible capacity; not downtime)",
    "provider": "ended by its provider (a retirement or a host failure)",
    "unknown": "ended; no one said why",
}


@dataclass(frozen=True, slots=True)
class IncidentPageView:
    title: str
    impact: str  # the provider's impact, or "maintenance"
    status: str
    started_at: datetime | None
    resolved_at: datetime | None  # None: open
    url: str | None  # the provider's own page for it, http(s) only

    @property
    def open(self) -> bool:
        return self.resolved_at is None

    @property
    def lasted(self) -> timedelta | None:
        """From start to resolution, once resolved (never negative: feeds back-date)."""
        if self.started_at is None or self.resolved_at is None:
            return None
        return max(self.resolved_at - self.started_at, timedelta(0))


@dataclass(frozen=True, slots=True)
class ProviderPage:
    now: datetime
    slug: str
    name: str
    health: ProviderHealth
    incidents: tuple[IncidentPageView, ...]  # open and resolved in the last DAYS, newest first
    # what it told the account: upcoming and open, then closed this month
    account_events: PageEvents = NO_EVENTS
    account_sources: tuple[AccountSourceHealth, ...] = ()  # the configured ones of its kinds
    notices: tuple[NoticeView, ...] = ()  # the operators' about its targets (or everything)


# --------------------------------------------------------------------------- pure shaping


def outage_view(row: repository.OutageRow, now: datetime) -> OutageView:
    until = now if row.end is None else min(row.end, now)
    lasted = max(until - row.start, timedelta(0))
    return OutageView(row.series, row.start, row.end, lasted, row.cause, detail_text(row.detail))


def detail_text(detail: Mapping[str, object]) -> str:
    """An outage's stored detail on one line: ``vantages: east, west; line: 12``."""
    parts = []
    for key, value in sorted(detail.items()):
        if isinstance(value, list | tuple):
            shown = ", ".join(str(v) for v in value) or "none"
        else:
            shown = str(value)
        parts.append(f"{key}: {shown}")
    return "; ".join(parts)


def http_only(url: str | None) -> str | None:
    return url if url and url.lower().startswith(("http://", "https://")) else None


def incident_view(row: repository.ProviderIncidentRow) -> IncidentPageView:
    impact = "maintenance" if row.is_maintenance else row.impact
    return IncidentPageView(
        row.title, impact, row.status, row.started_at, row.resolved_at, http_only(row.url)
    )


def page_state(row: repository.TargetPageRow, verdict: repository.Verdict, now: datetime) -> str:
    """What the target's page says it is now: the fleet row's rule, or ``retired``."""
    if row.retired_at is not None:
        return RETIRED
    target = row.target
    is_fresh = fresh(verdict.last_probe_at, target.interval_s, target.timeout_s, now)
    return target_state(verdict.reachable, verdict.usable, is_fresh)


# --------------------------------------------------------------------------- the reads


class Placed(Protocol):
    """Where a target is: a page's target row or a fleet row of the status page."""

    @property
    def name(self) -> str: ...
    @property
    def provider(self) -> str | None: ...
    @property
    def region(self) -> str | None: ...
    @property
    def pool(self) -> str | None: ...


def scope_labels(target: Placed) -> dict[str, str]:
    """What a maintenance window's or a notice's scope is matched against (as the report's)."""
    pairs = (("target", target.name), ("provider", target.provider), ("region", target.region))
    return {k: v for k, v in (*pairs, ("pool", target.pool)) if v}


def target_page(session: Session, name: str, now: datetime) -> TargetPage | None:
    """The page of the target named ``name`` (live or retired); None when there is none."""
    row = repository.page_target(session, name)
    if row is None:
        return None
    target = row.target
    edges = bucket_edges(now, DAYS, DAY)
    since = min(edges[0], now - max(WINDOWS))
    spans = repository.page_spans(session, target.id, since, now)
    line = timeline(spans.observed, spans.of(REACHABLE), spans.of(USABLE))
    # a kind whose usable series only mirrors reachability (http, tcp) has nothing to add
    series = ("reachable", "usable") if usable_matters(target.kind) else ("reachable",)
    outages = repository.page_outages(session, target.id, series, now - HISTORY, now, MAX_OUTAGES)
    return TargetPage(
        now=now,
        name=target.name,
        kind=target.kind,
        state=page_state(row, repository.page_verdict(session, target.id), now),
        pool=target.pool,
        provider=target.provider,
        region=target.region,
        retired_at=row.retired_at,
        history_start=edges[0],
        bar=history_bar(line, edges),
        uptime=tuple(uptime(line, now, w) for w in WINDOWS),
        outages=tuple(outage_view(o, now) for o in outages),
        ended_by=row.ended_by,
        end_detail=row.end_detail,
        capacity=row.capacity,
        account_events=page_events(session, now, target=target.name),
        notices=notices.about(notices.shown(session, now), scope_labels(target)),
    )


def provider_page(
    session: Session,
    slug: str,
    now: datetime,
    stale_after: timedelta,
    config: Config | None = None,
) -> ProviderPage | None:
    """The page of the provider ``slug``; None when slamon knows no such provider. Its health
    is the status page's verdict on it (feeds judged stale after ``stale_after``); its account
    event sources are those of ``config`` whose kind reads this provider."""
    row = repository.page_provider(session, slug, now - HISTORY, MAX_INCIDENTS)
    if row is None:
        return None
    incidents = tuple(incident_view(i) for i in row.incidents)
    live = [i for i in incidents if i.open]
    maintenance = sum(i.impact == "maintenance" for i in live)
    health = provider_health(row.feeds, len(live) - maintenance, maintenance, now, stale_after)
    sources = account_sources(session, config) if config is not None else ()
    return ProviderPage(
        now,
        row.slug,
        row.name,
        health,
        incidents,
        page_events(session, now, provider=row.slug),
        tuple(s for s in sources if s.provider == row.slug),
        notices.of_provider(notices.shown(session, now), row.slug),
    )
