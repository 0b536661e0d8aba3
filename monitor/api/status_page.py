"""The status page at ``/``: one server-rendered HTML page, read-only and unauthenticated.

Providers with their open relevant incidents, the fleet's quorum state, pools, firing alerts and
month-to-date SLA per provider. Inline CSS, no scripts, no external resources; it refreshes itself
every ``REFRESH_S`` seconds. Every value is escaped by Jinja2's autoescape; incident links are
kept only when they are http(s).
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from importlib import resources
from typing import Annotated

import jinja2
from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse
from sqlalchemy import and_, select
from sqlalchemy.orm import Session

from monitor.api.deps import app_state, db_session
from monitor.config import Config
from monitor.db.base import utcnow
from monitor.db.models import Alert, Incident, Provider, Target, TargetState
from monitor.reports.model import ProviderReport
from monitor.reports.service import build_monthly

REFRESH_S = 30
TEMPLATE = "status.html.j2"

router = APIRouter()


@dataclass(frozen=True, slots=True)
class IncidentView:
    title: str
    impact: str
    started_at: datetime | None
    url: str | None  # http(s) only


@dataclass(frozen=True, slots=True)
class ProviderView:
    slug: str
    name: str
    incidents: tuple[IncidentView, ...]


@dataclass(frozen=True, slots=True)
class TargetView:
    name: str
    state: str  # up | down | unknown
    pool: str | None
    provider: str | None
    region: str | None


@dataclass(frozen=True, slots=True)
class PoolView:
    name: str
    up: int
    total: int
    min_up: int

    @property
    def state(self) -> str:
        return "up" if self.up >= self.min_up else "down"


@dataclass(frozen=True, slots=True)
class AlertView:
    rule: str
    severity: str
    summary: str
    since: datetime


@dataclass(frozen=True, slots=True)
class SlaView:
    slug: str
    name: str
    uptime_pct: float | None  # None: no data this month
    target_pct: float | None
    credit_pct: float


@dataclass(frozen=True, slots=True)
class StatusView:
    now: datetime
    month: str
    providers: tuple[ProviderView, ...]
    fleet: tuple[TargetView, ...]
    pools: tuple[PoolView, ...]
    alerts: tuple[AlertView, ...]
    sla: tuple[SlaView, ...]


# --------------------------------------------------------------------------- queries


def _providers(session: Session) -> tuple[ProviderView, ...]:
    """Every provider with its open (unresolved) relevant incidents, newest first."""
    query = (
        select(Provider, Incident)
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
    names: dict[str, str] = {}
    incidents: dict[str, list[IncidentView]] = defaultdict(list)
    for provider, incident in session.execute(query):
        names[provider.slug] = provider.name
        if incident is not None:
            incidents[provider.slug].append(_incident(incident))
    return tuple(ProviderView(s, n, tuple(incidents[s])) for s, n in names.items())


def _incident(row: Incident) -> IncidentView:
    url = row.url if row.url and row.url.lower().startswith(("http://", "https://")) else None
    impact = "maintenance" if row.is_maintenance else row.impact
    return IncidentView(row.title, impact, row.started_at, url)


def _fleet(session: Session) -> tuple[TargetView, ...]:
    """Targets in service with the quorum's verdict on reachability (vantage ``*``)."""
    query = (
        select(Target, TargetState.state)
        .join(
            TargetState,
            and_(
                TargetState.target_id == Target.id,
                TargetState.vantage == "*",
                TargetState.series == "reachable",
            ),
            isouter=True,
        )
        .where(Target.retired_at.is_(None))
        .order_by(Target.name)
    )
    return tuple(
        TargetView(t.name, _state(state), t.pool, t.provider, t.region)
        for t, state in session.execute(query)
    )


def _state(state: str | None) -> str:
    return state if state in ("up", "down") else "unknown"


def _alerts(session: Session) -> tuple[AlertView, ...]:
    query = select(Alert).where(Alert.state == "firing").order_by(Alert.started_at.desc())
    return tuple(
        AlertView(a.rule, a.severity, a.summary, a.started_at) for a in session.scalars(query)
    )


# --------------------------------------------------------------------------- pure shaping


def pools_of(fleet: tuple[TargetView, ...], config: Config) -> tuple[PoolView, ...]:
    """Members up / total per pool named by a target; ``min_up`` from the config (default 1)."""
    min_up = {p.name: p.min_up for p in config.pools}
    members: dict[str, list[TargetView]] = defaultdict(list)
    for target in fleet:
        if target.pool:
            members[target.pool].append(target)
    return tuple(
        PoolView(name, sum(t.state == "up" for t in rows), len(rows), min_up.get(name, 1))
        for name, rows in sorted(members.items())
    )


def sla_of(
    providers: tuple[ProviderView, ...], reports: tuple[ProviderReport, ...]
) -> tuple[SlaView, ...]:
    """One row per known provider (and per reported one); a provider without a report row has
    no data."""
    by_slug = {r.slug: r for r in reports}
    names = {p.slug: p.name for p in providers} | {r.slug: r.name for r in reports}
    rows = []
    for slug, name in sorted(names.items()):
        report = by_slug.get(slug)
        if report is None:
            rows.append(SlaView(slug, name, None, None, 0.0))
        else:
            rows.append(
                SlaView(slug, name, report.uptime_pct, report.target_pct, report.credit_pct)
            )
    return tuple(rows)


def build_view(session: Session, config: Config, now: datetime) -> StatusView:
    """Everything the page shows, read in a handful of queries (plus the month's report)."""
    month = now.strftime("%Y-%m")
    providers = _providers(session)
    fleet = _fleet(session)
    report = build_monthly(session, month, now, config)
    return StatusView(
        now=now,
        month=month,
        providers=providers,
        fleet=fleet,
        pools=pools_of(fleet, config),
        alerts=_alerts(session),
        sla=sla_of(providers, report.providers),
    )


# --------------------------------------------------------------------------- rendering


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else "—"


def _pct(value: float | None) -> str:
    return "no data" if value is None else f"{value:.3f}%"


@functools.cache
def _template() -> jinja2.Template:
    source = resources.files("monitor.api").joinpath("templates", TEMPLATE).read_text("utf-8")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    env.filters["when"] = _when
    env.filters["pct"] = _pct
    return env.from_string(source)


def render(view: StatusView) -> str:
    return _template().render(view=view, refresh_s=REFRESH_S)


@router.get("/", response_class=HTMLResponse, tags=["status"], include_in_schema=False)
def status_page(request: Request, session: Annotated[Session, Depends(db_session)]) -> HTMLResponse:
    view = build_view(session, app_state(request).config, utcnow())
    return HTMLResponse(render(view), headers={"Cache-Control": "no-store"})
