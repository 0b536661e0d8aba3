"""Provider incidents as the surfaces read them: the ones that touched the team in a period
(relevant, not maintenance), the ones open now, and the ones an alert still speaks for."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, func, or_, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.selectable import ScalarSelect

from monitor.db.dialect import json_list_has
from monitor.db.models import Incident, Provider
from monitor.sla.intervals import Span
from monitor.sla.response import CLOSED_STATUSES


@dataclass(frozen=True, slots=True)
class ProviderIncident:
    """One stored incident, as plain values."""

    provider: str
    source_id: str
    title: str
    impact: str
    started_at: datetime | None
    acknowledged_at: datetime | None
    resolved_at: datetime | None
    first_seen_at: datetime
    regions: tuple[str, ...]
    url: str | None
    is_maintenance: bool = False
    identified_at: datetime | None = None
    relevant: bool = True
    status: str = ""


def _facts(row: Incident, slug: str) -> ProviderIncident:
    return ProviderIncident(
        slug,
        row.source_id,
        row.title,
        row.impact,
        row.started_at,
        row.acknowledged_at,
        row.resolved_at,
        row.first_seen_at,
        tuple(row.regions or ()),
        row.url,
        row.is_maintenance,
        row.identified_at,
        row.relevant,
        row.status,
    )


def _touching() -> ColumnElement[bool]:
    return and_(Incident.relevant.is_(True), Incident.is_maintenance.is_(False))


def relevant_in(session: Session, period: Span) -> tuple[ProviderIncident, ...]:
    """Relevant incidents (not maintenance) with a start, overlapping ``period``, by start."""
    query = (
        select(Incident, Provider.slug)
        .join(Provider)
        .where(_touching(), Incident.started_at.is_not(None))
        .where(Incident.started_at < period.end)
        .where(or_(Incident.resolved_at.is_(None), Incident.resolved_at > period.start))
        .order_by(Incident.started_at)
    )
    return tuple(_facts(i, slug) for i, slug in session.execute(query))


def started_in(session: Session, period: Span) -> list[ProviderIncident]:
    """Every incident (relevant or not, not maintenance) that started in ``period``, by
    provider: what response-time statistics count."""
    query = (
        select(Incident, Provider.slug)
        .join(Provider)
        .where(Incident.is_maintenance.is_(False))
        .where(Incident.started_at >= period.start, Incident.started_at < period.end)
        .order_by(Provider.slug, Incident.started_at)
    )
    return [_facts(i, slug) for i, slug in session.execute(query)]


def open_by_provider(session: Session) -> dict[str, list[ProviderIncident]]:
    """Open relevant incidents (maintenance included, marked) per provider slug, newest first;
    every provider is present, with an empty list when nothing is open."""
    query = (
        select(Provider.slug, Incident)
        .join(
            Incident,
            and_(
                Incident.provider_id == Provider.id,
                Incident.resolved_at.is_(None),
                Incident.relevant.is_(True),
            ),
            isouter=True,
        )
        .order_by(Provider.slug, Incident.started_at.desc())
    )
    found: dict[str, list[ProviderIncident]] = defaultdict(list)
    for slug, incident in session.execute(query):
        kept = found[slug]
        if incident is not None:
            kept.append(_facts(incident, slug))
    return dict(found)


def open_counts(session: Session) -> dict[str, int]:
    """Open relevant incidents (not maintenance) per provider slug; 0 for a provider with none."""
    open_relevant = (Incident.provider_id == Provider.id) & Incident.resolved_at.is_(None)
    query = (
        select(Provider.slug, func.count(Incident.id))
        .join(Incident, open_relevant & _touching(), isouter=True)
        .group_by(Provider.slug)
    )
    return {slug: int(n) for slug, n in session.execute(query)}


def open_of(session: Session, provider: str) -> list[ProviderIncident]:
    """One provider's open relevant incidents (not maintenance)."""
    query = (
        select(Incident, Provider.slug)
        .join(Provider)
        .where(Provider.slug == provider, _touching(), Incident.resolved_at.is_(None))
    )
    return [_facts(i, slug) for i, slug in session.execute(query)]


def to_alert_on(
    session: Session, now: datetime, recently: timedelta, firing: Collection[str]
) -> list[ProviderIncident]:
    """What the provider_incident rule judges: open relevant incidents, those closed within
    ``recently``, and those whose source ids an alert still fires for (however long ago they
    ended: slamon was down, the feed unreachable, or the resolution back-dated)."""
    recent = Incident.resolved_at.is_(None) | (Incident.resolved_at > now - recently)
    wanted = recent | Incident.source_id.in_(set(firing)) if firing else recent
    query = select(Incident, Provider.slug).join(Provider).where(_touching(), wanted)
    return [_facts(i, slug) for i, slug in session.execute(query)]


def of_provider(
    session: Session, provider: str, since: datetime, limit: int
) -> list[ProviderIncident]:
    """One provider's relevant incidents (maintenance included) open now or resolved after
    ``since``, newest first, at most ``limit``: its page."""
    query = (
        select(Incident, Provider.slug)
        .join(Provider)
        .where(Provider.slug == provider, Incident.relevant.is_(True))
        .where(or_(Incident.resolved_at.is_(None), Incident.resolved_at > since))
        .order_by(func.coalesce(Incident.started_at, Incident.first_seen_at).desc())
        .limit(limit)
    )
    return [_facts(i, slug) for i, slug in session.execute(query)]


def recent(session: Session, since: datetime, limit: int) -> list[ProviderIncident]:
    """Every provider's relevant incidents (maintenance included) open now or resolved after
    ``since``, newest first, at most ``limit``: what the feed tells."""
    query = (
        select(Incident, Provider.slug)
        .join(Provider)
        .where(Incident.relevant.is_(True))
        .where(or_(Incident.resolved_at.is_(None), Incident.resolved_at > since))
        .order_by(func.coalesce(Incident.started_at, Incident.first_seen_at).desc())
        .limit(limit)
    )
    return [_facts(i, slug) for i, slug in session.execute(query)]


def unresolved() -> ColumnElement[bool]:
    """An incident whose status is not a closed one (what the API calls open)."""
    return Incident.status.not_in(sorted(CLOSED_STATUSES))


def unresolved_count() -> ScalarSelect[int]:
    """Per provider row (correlated): how many of its incidents are unresolved."""
    return (
        select(func.count(Incident.id))
        .where(Incident.provider_id == Provider.id, unresolved())
        .correlate(Provider)
        .scalar_subquery()
    )


def incident_listing(
    session: Session,
    *,
    provider: str | None = None,
    region: str | None = None,
    status: str = "any",
    since: datetime | None = None,
    until: datetime | None = None,
    relevant: bool | None = None,
) -> tuple[Select[*tuple[Any, ...]], tuple[Any, ...]]:
    """Incidents with their provider's slug, filtered, and the order to page them in (newest
    first). ``since``/``until`` keep those that overlap the span (an open incident lasts until
    now); ``status`` is ``open`` (unresolved), ``resolved`` or ``any``."""
    started = func.coalesce(Incident.started_at, Incident.first_seen_at)
    query = select(Incident, Provider.slug).join(Provider, Provider.id == Incident.provider_id)
    if provider is not None:
        query = query.where(Provider.slug == provider)
    if region is not None:
        query = query.where(json_list_has(session, Incident.regions, region))
    if status == "open":
        query = query.where(unresolved())
    elif status == "resolved":
        query = query.where(Incident.status.in_(sorted(CLOSED_STATUSES)))
    if since is not None:
        query = query.where(or_(Incident.resolved_at.is_(None), Incident.resolved_at >= since))
    if until is not None:
        query = query.where(started < until)
    if relevant is not None:
        query = query.where(Incident.relevant.is_(relevant))
    return query, (started.desc(), Incident.id.desc())
