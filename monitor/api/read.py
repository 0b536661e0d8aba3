"""The read side of the API: providers, incidents, outages, alerts, notification channels and
month-to-date SLA.

Every list answers one page, ``{"items", "total", "limit", "offset", "next_offset"}``, in a
stable order (``next_offset`` is null on the last page). Times in filters are ISO 8601 with an
offset; a naive or malformed time is a 422 naming the parameter.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import AfterValidator, AwareDatetime, BaseModel, BeforeValidator, StringConstraints
from sqlalchemy import ColumnElement, Select, func, or_, select
from sqlalchemy.orm import Session

from monitor.alerts.channel_state import channel_states
from monitor.api.auth import DbSession, ReadToken
from monitor.api.deps import AppState, app_state
from monitor.api.errors import error_responses
from monitor.api.targets import DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET, Filter
from monitor.db.base import utcnow
from monitor.db.models import Alert, Feed, Incident, Outage, Provider, Target
from monitor.feeds.model import CLOSED_STATUSES
from monitor.probes.vantages import vantage_health
from monitor.reports.service import build_monthly, month_to_date
from monitor.sla.months import month_bounds, month_of

router = APIRouter(prefix="/api/v1", responses=error_responses(401, 403, 422, 429))


def _in_utc(value: datetime) -> datetime:
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError("the time is out of range once converted to UTC") from None


def _month(value: str | None) -> str | None:
    if value is not None:
        try:
            month_bounds(value)
        except (ValueError, OverflowError):
            raise ValueError("not a month slamon can report on (YYYY-MM)") from None
    return value


def _iso_text(value: object) -> object:
    """Only ISO 8601 text, as the schema says (``type: string, format: date-time``): pydantic
    would also read ``0.5`` or ``0`` as seconds since 1970."""
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not ISO_DATETIME.match(value):
        raise ValueError("not an ISO 8601 date-time with an offset (e.g. 2026-05-01T00:00:00Z)")
    return value


ISO_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}")
Instant = Annotated[AwareDatetime, BeforeValidator(_iso_text), AfterValidator(_in_utc)]
# years 1000-9999 (the report's range); in the schema, so an empty or odd month is invalid there
Month = Annotated[str, StringConstraints(pattern=r"^[1-9]\d{3}-(0[1-9]|1[0-2])$")]
TimeFilter = Annotated[
    Instant | None, Query(description="ISO 8601 with an offset, e.g. 2026-05-01T00:00:00Z")
]
Limit = Annotated[int, Query(ge=1, le=MAX_LIMIT)]
Offset = Annotated[int, Query(ge=0, le=MAX_OFFSET)]


# --------------------------------------------------------------------------- response models


class FeedOut(BaseModel):
    kind: str
    url: str
    enabled: bool
    last_success_at: datetime | None
    consecutive_failures: int
    last_error: str | None


class ProviderOut(BaseModel):
    slug: str
    name: str
    sla_policy: str | None
    regions: list[str]
    feeds: list[FeedOut]
    open_incidents: int


class IncidentOut(BaseModel):
    provider: str
    source_id: str
    title: str
    status: str
    impact: str
    is_maintenance: bool
    started_at: datetime | None
    acknowledged_at: datetime | None
    resolved_at: datetime | None
    regions: list[str]
    components: list[str]
    relevant: bool
    url: str | None


class OutageOut(BaseModel):
    target: str
    series: str
    start: datetime
    end: datetime | None
    cause: str | None
    source: str


class AlertOut(BaseModel):
    fingerprint: str
    rule: str
    severity: str
    labels: dict[str, Any]
    summary: str
    state: str
    started_at: datetime
    resolved_at: datetime | None
    suppressed: bool


class ProviderPage(BaseModel):
    items: list[ProviderOut]
    total: int
    limit: int
    offset: int
    next_offset: int | None


class IncidentPage(BaseModel):
    items: list[IncidentOut]
    total: int
    limit: int
    offset: int
    next_offset: int | None


class OutagePage(BaseModel):
    items: list[OutageOut]
    total: int
    limit: int
    offset: int
    next_offset: int | None


class AlertPage(BaseModel):
    items: list[AlertOut]
    total: int
    limit: int
    offset: int
    next_offset: int | None


class ProviderSla(BaseModel):
    slug: str
    name: str
    sla: str | None
    uptime_pct: float | None
    target_pct: float | None
    credit_pct: float
    credit_amount: float
    unknown_s: float
    observed_downtime_s: float
    acknowledged_downtime_s: float
    sla_downtime_s: float
    incidents: int


class TargetSla(BaseModel):
    name: str
    provider: str | None
    region: str | None
    pool: str | None
    sla: str | None
    uptime_pct: float | None
    target_pct: float | None
    credit_pct: float
    observed_s: float
    unknown_s: float
    downtime_s: float
    sla_downtime_s: float
    usable_downtime_s: float


class PoolSla(BaseModel):
    name: str
    members: int
    min_up: int
    availability_pct: float | None
    unknown_s: float


class SlaOut(BaseModel):
    month: str
    period_start: datetime
    period_end: datetime
    generated_at: datetime
    policy_hash: str
    providers: list[ProviderSla]
    targets: list[TargetSla]
    pools: list[PoolSla]


# --------------------------------------------------------------------------- helpers


def _page(
    session: Session,
    query: Select[*tuple[Any, ...]],
    order: Sequence[Any],
    limit: int,
    offset: int,
    out: Callable[[Sequence[Any]], list[dict[str, Any]]],
) -> dict[str, Any]:
    total = session.scalar(select(func.count()).select_from(query.subquery())) or 0
    rows = session.execute(query.order_by(*order).limit(limit).offset(offset)).all()
    following = offset + limit
    return {
        "items": out(rows),
        "total": total,
        "limit": limit,
        "offset": offset,
        "next_offset": following if following < total else None,
    }


def _json_list_has(session: Session, column: Any, value: str) -> ColumnElement[bool]:
    """Whether the JSON list in ``column`` holds the string ``value`` (either dialect)."""
    if session.get_bind().dialect.name == "postgresql":
        elements = func.json_array_elements_text(column).table_valued("value")
    else:
        elements = func.json_each(column).table_valued("value")
    return select(1).select_from(elements).where(elements.c.value == value).exists()


def _open_incident() -> ColumnElement[bool]:
    return Incident.status.not_in(sorted(CLOSED_STATUSES))


# --------------------------------------------------------------------------- providers


@router.get("/providers", response_model=ProviderPage, tags=["providers"])
def list_providers(
    _token: ReadToken, session: DbSession, limit: Limit = DEFAULT_LIMIT, offset: Offset = 0
) -> dict[str, Any]:
    """Providers by slug, with their feeds' polling health and how many incidents are open."""
    open_count = (
        select(func.count(Incident.id))
        .where(Incident.provider_id == Provider.id, _open_incident())
        .correlate(Provider)
        .scalar_subquery()
    )
    query = select(Provider, open_count.label("open_incidents"))

    def out(rows: Sequence[Any]) -> list[dict[str, Any]]:
        ids = [row[0].id for row in rows]
        feeds: dict[int, list[Feed]] = {}
        if ids:
            for feed in session.scalars(
                select(Feed).where(Feed.provider_id.in_(ids)).order_by(Feed.id)
            ):
                feeds.setdefault(feed.provider_id, []).append(feed)
        return [
            {
                "slug": provider.slug,
                "name": provider.name,
                "sla_policy": provider.sla_policy,
                "regions": list(provider.regions or []),
                "feeds": [
                    {
                        "kind": f.kind,
                        "url": f.url,
                        "enabled": f.enabled,
                        "last_success_at": f.last_success_at,
                        "consecutive_failures": f.consecutive_failures,
                        "last_error": f.last_error,
                    }
                    for f in feeds.get(provider.id, [])
                ],
                "open_incidents": count or 0,
            }
            for provider, count in rows
        ]

    return _page(session, query, [Provider.slug], limit, offset, out)


# --------------------------------------------------------------------------- incidents


@router.get("/incidents", response_model=IncidentPage, tags=["incidents"])
def list_incidents(
    _token: ReadToken,
    session: DbSession,
    limit: Limit = DEFAULT_LIMIT,
    offset: Offset = 0,
    provider: Filter = None,
    region: Filter = None,
    status: Literal["open", "resolved", "any"] = "any",
    since: TimeFilter = None,
    until: TimeFilter = None,
    relevant: bool | None = None,
) -> dict[str, Any]:
    """Provider incidents, newest first. ``since``/``until`` keep the incidents that overlap
    that span (an open incident lasts until now); ``status=open`` is every unresolved one."""
    started = func.coalesce(Incident.started_at, Incident.first_seen_at)
    query = select(Incident, Provider.slug).join(Provider, Provider.id == Incident.provider_id)
    if provider is not None:
        query = query.where(Provider.slug == provider)
    if region is not None:
        query = query.where(_json_list_has(session, Incident.regions, region))
    if status == "open":
        query = query.where(_open_incident())
    elif status == "resolved":
        query = query.where(Incident.status.in_(sorted(CLOSED_STATUSES)))
    if since is not None:
        query = query.where(or_(Incident.resolved_at.is_(None), Incident.resolved_at >= since))
    if until is not None:
        query = query.where(started < until)
    if relevant is not None:
        query = query.where(Incident.relevant.is_(relevant))

    def out(rows: Sequence[Any]) -> list[dict[str, Any]]:
        return [
            {
                "provider": slug,
                "source_id": i.source_id,
                "title": i.title,
                "status": i.status,
                "impact": i.impact,
                "is_maintenance": i.is_maintenance,
                "started_at": i.started_at,
                "acknowledged_at": i.acknowledged_at,
                "resolved_at": i.resolved_at,
                "regions": list(i.regions or []),
                "components": list(i.components or []),
                "relevant": i.relevant,
                "url": i.url,
            }
            for i, slug in rows
        ]

    return _page(session, query, [started.desc(), Incident.id.desc()], limit, offset, out)


# --------------------------------------------------------------------------- outages


@router.get("/outages", response_model=OutagePage, tags=["outages"])
def list_outages(
    _token: ReadToken,
    session: DbSession,
    limit: Limit = DEFAULT_LIMIT,
    offset: Offset = 0,
    target: Filter = None,
    provider: Filter = None,
    series: Literal["reachable", "usable"] | None = None,
    since: TimeFilter = None,
    until: TimeFilter = None,
    open: bool | None = None,
) -> dict[str, Any]:
    """Confirmed outages, newest first; ``since``/``until`` keep those overlapping the span
    (an open outage lasts until now), ``open=true`` only those still going on."""
    query = select(Outage, Target.name).join(Target, Target.id == Outage.target_id)
    if target is not None:
        query = query.where(Target.name == target)
    if provider is not None:
        query = query.where(Target.provider == provider)
    if series is not None:
        query = query.where(Outage.series == series)
    if since is not None:
        query = query.where(or_(Outage.end.is_(None), Outage.end > since))
    if until is not None:
        query = query.where(Outage.start < until)
    if open is not None:
        query = query.where(Outage.end.is_(None) if open else Outage.end.is_not(None))

    def out(rows: Sequence[Any]) -> list[dict[str, Any]]:
        return [
            {
                "target": name,
                "series": o.series,
                "start": o.start,
                "end": o.end,
                "cause": o.cause,
                "source": o.source,
            }
            for o, name in rows
        ]

    return _page(session, query, [Outage.start.desc(), Outage.id.desc()], limit, offset, out)


# --------------------------------------------------------------------------- alerts


@router.get("/alerts", response_model=AlertPage, tags=["alerts"])
def list_alerts(
    _token: ReadToken,
    session: DbSession,
    limit: Limit = DEFAULT_LIMIT,
    offset: Offset = 0,
    state: Literal["firing", "resolved", "any"] = "any",
    rule: Filter = None,
) -> dict[str, Any]:
    """Alerts, newest first, by state and rule."""
    query = select(Alert)
    if state != "any":
        query = query.where(Alert.state == state)
    if rule is not None:
        query = query.where(Alert.rule == rule)

    def out(rows: Sequence[Any]) -> list[dict[str, Any]]:
        return [
            {
                "fingerprint": a.fingerprint,
                "rule": a.rule,
                "severity": a.severity,
                "labels": a.labels or {},
                "summary": a.summary,
                "state": a.state,
                "started_at": a.started_at,
                "resolved_at": a.resolved_at,
                "suppressed": a.suppressed,
            }
            for (a,) in rows
        ]

    order = [Alert.started_at.desc(), Alert.id.desc()]
    return _page(session, query, order, limit, offset, out)


# --------------------------------------------------------------------------- channels


class ChannelOut(BaseModel):
    name: str
    kind: str
    state: Literal["enabled", "disabled"]
    enabled: bool
    disabled_at: datetime | None
    last_error: str | None
    configured: bool


@router.get("/channels", response_model=list[ChannelOut], tags=["alerts"])
def list_channels(
    _token: ReadToken, session: DbSession, state: Annotated[AppState, Depends(app_state)]
) -> list[dict[str, Any]]:
    """Every notification channel the config names or slamon has sent to, by name: enabled, or
    disabled (``disabled_at``) because its receiver said it is dead, with that answer as
    ``last_error`` (redacted). A disabled channel holds its deliveries until its config changes
    or `slamon alerts enable NAME`. Not a page: a handful of channels."""
    return [
        {
            "name": c.name,
            "kind": c.kind,
            "state": c.state,
            "enabled": c.enabled,
            "disabled_at": c.disabled_at,
            "last_error": c.last_error,
            "configured": c.configured,
        }
        for c in channel_states(session, state.config)
    ]


# --------------------------------------------------------------------------- vantages


class VantageOut(BaseModel):
    vantage: str
    state: Literal["agrees", "disagrees", "blind", "unknown"]
    last_probe_at: datetime | None
    targets: int
    disagreeing: int
    last_agreed_at: datetime | None
    blind_since: datetime | None


@router.get("/vantages", response_model=list[VantageOut], tags=["vantages"])
def list_vantages(_token: ReadToken, session: DbSession) -> list[dict[str, Any]]:
    """Every probing vantage as the alert evaluator last judged it: blind (it disagrees with
    the quorum on nearly every target, for long enough: ``vantage_blind`` fires), disagreeing
    (not yet that long, or on fewer targets), agreeing, or unknown (no current verdict)."""
    return [
        {
            "vantage": v.vantage,
            "state": _vantage_state(v.blind_since, v.disagreeing, v.targets),
            "last_probe_at": v.last_probe_at,
            "targets": v.targets,
            "disagreeing": v.disagreeing,
            "last_agreed_at": v.last_agreed_at,
            "blind_since": v.blind_since,
        }
        for v in vantage_health(session)
    ]


def _vantage_state(blind_since: datetime | None, disagreeing: int, targets: int) -> str:
    """``unknown`` for a vantage with no current verdict to compare: silence agrees with
    nothing."""
    if blind_since is not None:
        return "blind"
    if not targets:
        return "unknown"
    return "disagrees" if disagreeing else "agrees"


# --------------------------------------------------------------------------- SLA


@router.get("/sla", response_model=SlaOut, tags=["sla"], responses=error_responses(404))
def month_to_date_sla(
    _token: ReadToken,
    session: DbSession,
    state: Annotated[AppState, Depends(app_state)],
    month: Annotated[
        Month | None,
        AfterValidator(_month),
        Query(description="YYYY-MM (UTC); default this month"),
    ] = None,
) -> dict[str, Any]:
    """The month's SLA so far (the whole month once it is over) per provider, target and
    pool, as the monthly report counts it. Not a list: one month, not paginated. 404 for a
    month that has not begun."""
    now = utcnow()
    if month is None or month == month_of(now):
        report = month_to_date(session, state.config, now)
    else:
        report = build_monthly(session, month, now, state.config)
    return {
        "month": report.month,
        "period_start": report.period_start,
        "period_end": report.period_end,
        "generated_at": report.generated_at,
        "policy_hash": report.policy_hash,
        "providers": [
            {
                "slug": p.slug,
                "name": p.name,
                "sla": p.sla,
                "uptime_pct": p.uptime_pct,
                "target_pct": p.target_pct,
                "credit_pct": p.credit_pct,
                "credit_amount": p.credit_amount,
                "unknown_s": p.unknown_s,
                "observed_downtime_s": p.observed_downtime_s,
                "acknowledged_downtime_s": p.acknowledged_downtime_s,
                "sla_downtime_s": p.sla_downtime_s,
                "incidents": p.incidents,
            }
            for p in report.providers
        ],
        "targets": [
            {
                "name": t.name,
                "provider": t.provider,
                "region": t.region,
                "pool": t.pool,
                "sla": t.sla,
                "uptime_pct": t.uptime_pct,
                "target_pct": t.target_pct,
                "credit_pct": t.credit_pct,
                "observed_s": t.observed_s,
                "unknown_s": t.unknown_s,
                "downtime_s": t.downtime_s,
                "sla_downtime_s": t.sla_downtime_s,
                "usable_downtime_s": t.usable_downtime_s,
            }
            for t in report.targets
        ],
        "pools": [
            {
                "name": p.name,
                "members": p.members,
                "min_up": p.min_up,
                "availability_pct": p.availability_pct,
                "unknown_s": p.unknown_s,
            }
            for p in report.pools
        ],
    }
