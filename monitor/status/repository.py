"""The status page's queries: each reads one table for every live target at once (joined to
``targets`` or naming their ids, never one query per target), so the page costs the same handful
of statements at ten targets or a thousand. Rows come back as plain values for the pure rules in
``monitor.status.history`` and ``monitor.status.health``."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select, union_all
from sqlalchemy.orm import Session

from monitor.db.dialect import among
from monitor.db.models import Alert, Feed, ProbeRollup, Provider, Target, TargetState
from monitor.history import incidents
from monitor.history.incidents import ProviderIncident
from monitor.history.spans import TargetSpans, outage_rows
from monitor.history.spans import spans as history_spans
from monitor.probes.quorum import QUORUM_VANTAGE
from monitor.probes.rollup import HOUR, floor_to
from monitor.sla.intervals import Span
from monitor.status.health import FeedFacts

LIVE = Target.retired_at.is_(None)


@dataclass(frozen=True, slots=True)
class TargetRow:
    id: int
    name: str
    kind: str
    pool: str | None
    provider: str | None
    region: str | None
    interval_s: float
    timeout_s: float


@dataclass(frozen=True, slots=True)
class Verdict:
    """The quorum's verdict per series, and when a vantage last reported on the target."""

    reachable: str | None = None
    usable: str | None = None
    last_probe_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class ProviderRow:
    slug: str
    name: str
    incidents: tuple[ProviderIncident, ...]  # open and relevant, newest first
    feeds: tuple[FeedFacts, ...]


@dataclass(frozen=True, slots=True)
class AlertRow:
    rule: str
    severity: str
    summary: str
    since: datetime


# a TargetRow's columns, in its fields' order
TARGET_COLUMNS = (
    Target.id,
    Target.name,
    Target.kind,
    Target.pool,
    Target.provider,
    Target.region,
    Target.interval_s,
    Target.timeout_s,
)


def live_targets(session: Session) -> list[TargetRow]:
    """Targets in service, by name."""
    query = select(*TARGET_COLUMNS).where(LIVE).order_by(Target.name)
    return [TargetRow(*r) for r in session.execute(query)]


def verdicts(session: Session) -> dict[int, Verdict]:
    """Each live target's quorum states and its freshest vantage report, from one read of
    ``target_states`` (the quorum row's own stamp moves only on a transition)."""
    query = (
        select(
            TargetState.target_id,
            TargetState.vantage,
            TargetState.series,
            TargetState.state,
            TargetState.last_probe_at,
        )
        .join(Target, Target.id == TargetState.target_id)
        .where(LIVE)
    )
    states: dict[int, dict[str, str]] = defaultdict(dict)
    latest: dict[int, datetime] = {}
    for target_id, vantage, series, state, last_probe_at in session.execute(query):
        if vantage == QUORUM_VANTAGE:
            states[target_id][series] = state
        elif last_probe_at is not None:
            latest[target_id] = max(last_probe_at, latest.get(target_id, last_probe_at))
    return {
        tid: Verdict(states[tid].get("reachable"), states[tid].get("usable"), latest.get(tid))
        for tid in set(states) | set(latest)
    }


def latency_samples(
    session: Session, target_ids: Sequence[int], now: datetime
) -> dict[int, list[tuple[float, int]]]:
    """(p50, successful probes) samples of ``target_ids`` over the last 24 h, from rollups (never
    raw probes): one per closed hour bucket, and one for the hour still open (its hour bucket
    does not exist until it closes): its minute buckets' p50s averaged, weighted by their
    successful probes, in SQL, so a target costs about 25 rows, not 85.

    The ids are named (``among``), not joined: ``probe_rollups`` holds every minute bucket of
    the raw retention (20 M rows at 1,000 targets and 14 days), and only its primary key
    (target, resolution, bucket start) finds a target's last day without scanning them all."""
    successes = ProbeRollup.count - ProbeRollup.failures - ProbeRollup.unknown
    rollups = select(ProbeRollup.target_id).where(
        among(session, ProbeRollup.target_id, target_ids),
        ProbeRollup.latency_p50_ms.is_not(None),
    )
    hours = rollups.add_columns(ProbeRollup.latency_p50_ms, successes).where(
        ProbeRollup.resolution == "hour",
        ProbeRollup.bucket_start >= now - timedelta(hours=24),
    )
    weight = func.sum(successes)
    open_hour = (
        rollups.add_columns(
            func.sum(ProbeRollup.latency_p50_ms * successes) / func.nullif(weight, 0), weight
        )
        .where(ProbeRollup.resolution == "minute", ProbeRollup.bucket_start >= floor_to(now, HOUR))
        .group_by(ProbeRollup.target_id)
    )
    found: dict[int, list[tuple[float, int]]] = defaultdict(list)
    if not target_ids:
        return found
    for target_id, p50, n in session.execute(union_all(hours, open_hour)):
        if p50 is not None:
            found[target_id].append((float(p50), int(n)))
    return found


def providers(session: Session) -> list[ProviderRow]:
    """Every provider with its open relevant incidents (newest first) and its feeds."""
    names = dict(
        session.execute(select(Provider.slug, Provider.name).order_by(Provider.slug)).all()
    )
    open_now = incidents.open_by_provider(session)
    feeds = _feeds(session)
    return [
        ProviderRow(slug, name, tuple(open_now.get(slug, ())), tuple(feeds[slug]))
        for slug, name in names.items()
    ]


def _feeds(session: Session, only: str | None = None) -> dict[str, list[FeedFacts]]:
    """Every provider's feeds by slug (or only those of the provider ``only``)."""
    query = select(
        Provider.slug,
        Feed.enabled,
        Feed.last_polled_at,
        Feed.last_success_at,
        Feed.consecutive_failures,
        Feed.last_error,
    ).where(Provider.id == Feed.provider_id)
    if only is not None:
        query = query.where(Provider.slug == only)
    found: dict[str, list[FeedFacts]] = defaultdict(list)
    for slug, enabled, polled, succeeded, failures, error in session.execute(query):
        found[slug].append(FeedFacts(enabled, polled, succeeded, failures, error))
    return found


def firing_alerts(session: Session) -> list[AlertRow]:
    query = select(Alert).where(Alert.state == "firing").order_by(Alert.started_at.desc())
    return [AlertRow(a.rule, a.severity, a.summary, a.started_at) for a in session.scalars(query)]


# --------------------------------------------------------------------------- the linked pages
# One target's or one provider's page (``/targets/NAME``, ``/providers/SLUG``: where alerts link).
# Each reads one row's history by its key; kept together so they can move as one.


@dataclass(frozen=True, slots=True)
class TargetPageRow:
    target: TargetRow
    retired_at: datetime | None
    ended_by: str | None = None  # with retired_at, where a discovery sweep said who ended it
    end_detail: str | None = None
    capacity: str = "unknown"


@dataclass(frozen=True, slots=True)
class OutageRow:
    series: str  # reachable | usable
    start: datetime
    end: datetime | None  # None: still open
    cause: str | None
    detail: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ProviderIncidentRow:
    title: str
    impact: str
    status: str
    is_maintenance: bool
    started_at: datetime | None
    resolved_at: datetime | None
    url: str | None


@dataclass(frozen=True, slots=True)
class ProviderPageRow:
    slug: str
    name: str
    incidents: tuple[ProviderIncidentRow, ...]  # relevant, open or recent, newest first
    feeds: tuple[FeedFacts, ...]


def page_target(session: Session, name: str) -> TargetPageRow | None:
    """The target named ``name``, live or retired; None when there is none."""
    life = (Target.retired_at, Target.ended_by, Target.end_detail, Target.capacity)
    query = select(*TARGET_COLUMNS, *life).where(Target.name == name)
    row = session.execute(query).one_or_none()
    if row is None:
        return None
    values: tuple[Any, ...] = tuple(row)
    retired_at, ended_by, end_detail, capacity = values[-len(life) :]
    target = TargetRow(*values[: -len(life)])
    return TargetPageRow(target, retired_at, ended_by, end_detail, capacity)


def page_verdict(session: Session, target_id: int) -> Verdict:
    """One target's quorum states and its freshest vantage report (as ``verdicts`` for all)."""
    query = select(
        TargetState.vantage, TargetState.series, TargetState.state, TargetState.last_probe_at
    ).where(TargetState.target_id == target_id)
    states: dict[str, str] = {}
    latest: datetime | None = None
    for vantage, series, state, last_probe_at in session.execute(query):
        if vantage == QUORUM_VANTAGE:
            states[series] = state
        elif last_probe_at is not None:
            latest = last_probe_at if latest is None else max(latest, last_probe_at)
    return Verdict(states.get("reachable"), states.get("usable"), latest)


def page_spans(session: Session, target_id: int, since: datetime, now: datetime) -> TargetSpans:
    """One target's observed windows and outage spans in ``[since, now)``, as the fleet's."""
    return history_spans(session, [target_id], Span(since, now), now).get(target_id, TargetSpans())


def page_outages(
    session: Session,
    target_id: int,
    series: Sequence[str],
    since: datetime,
    now: datetime,
    limit: int,
) -> list[OutageRow]:
    """The target's outages of ``series`` that began before ``now`` and were open at some
    point after ``since`` (every open one, however old), newest first, at most ``limit``."""
    return [
        OutageRow(o.series, o.start, o.end, o.cause, o.detail)
        for o in outage_rows(session, target_id, series, since, now, limit)
    ]


def page_provider(
    session: Session, slug: str, since: datetime, limit: int
) -> ProviderPageRow | None:
    """The provider ``slug`` with its relevant incidents open now or resolved after ``since``
    (newest first, at most ``limit``) and its feeds; None when there is no such provider."""
    name = session.scalar(select(Provider.name).where(Provider.slug == slug))
    if name is None:
        return None
    found = tuple(
        ProviderIncidentRow(
            i.title, i.impact, i.status, i.is_maintenance, i.started_at, i.resolved_at, i.url
        )
        for i in incidents.of_provider(session, slug, since, limit)
    )
    return ProviderPageRow(slug, name, found, tuple(_feeds(session, slug).get(slug, [])))
