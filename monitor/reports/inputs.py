"""Everything a monthly report needs, read from the database in a few queries (intervals and
windows, never raw probe rows), as plain values for the pure assembly step."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from sqlalchemy import and_, func, or_, select
from sqlalchemy.orm import Session
from sqlalchemy.sql.selectable import ScalarSelect

from monitor.config.models import Config, MaintenanceConfig
from monitor.db.models import (
    Alert,
    Heartbeat,
    Incident,
    MaintenanceWindow,
    ObservedWindow,
    Outage,
    Provider,
    Target,
)
from monitor.probes.kinds.heartbeat import work_unit
from monitor.sla.intervals import Span
from monitor.sla.maintenance import windows_for
from monitor.sla.months import month_bounds


@dataclass(frozen=True, slots=True)
class TargetInput:
    name: str
    provider: str | None
    region: str | None
    zone: str | None
    pool: str | None
    sla: str | None
    gpus: int
    hourly_price: float
    lifetime: Span | None  # the part of the period the target existed (None: not at all)
    observed: tuple[Span, ...]  # known time (probe coverage, imported history, outages)
    outages: tuple[tuple[str, Span, bool], ...]  # (series, span clipped to period, still open)
    maintenance: tuple[Span, ...]
    instance_type: str | None = None
    # the training job's throughput series (heartbeats), its unit and the silence that ends a
    # stretch of work (the target's grace), and its training_slowdown spans
    throughput: tuple[tuple[datetime, float], ...] = ()
    work_unit: str | None = None
    work_gap_s: float = 60.0
    slow: tuple[Span, ...] = ()


@dataclass(frozen=True, slots=True)
class IncidentInput:
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


@dataclass(frozen=True, slots=True)
class ReportInputs:
    month: str
    period: Span
    now: datetime
    targets: tuple[TargetInput, ...]
    incidents: tuple[IncidentInput, ...]  # relevant, not maintenance, overlapping the period
    provider_names: dict[str, str] = field(default_factory=dict)
    provider_policies: dict[str, str | None] = field(default_factory=dict)
    pools: dict[str, int] = field(default_factory=dict)  # pool name -> min_up


def period_of(month: str, now: datetime) -> Span | None:
    """The month up to ``now`` (a running month is reported so far); None for a future month."""
    start, end = month_bounds(month)
    end = min(end, now)
    return Span(start, end) if end > start else None


def gather(session: Session, month: str, now: datetime, config: Config) -> ReportInputs:
    period = period_of(month, now)
    if period is None:
        from monitor.errors import MonthNotStarted

        raise MonthNotStarted(month)
    rows = list(session.execute(_targets_alive_in(period)))
    ids = [t.id for t, _ in rows]
    observed = _observed(session, ids, period)
    outages = _outages(session, ids, period)
    maintenance = _maintenance(session, period)
    throughput = _throughput(session, ids, period)
    slow = _slow(session, [t.name for t, _ in rows], period)
    targets = tuple(
        replace(
            _target(
                t, born, period, observed[t.id], outages[t.id], maintenance, config.maintenance
            ),
            throughput=tuple(throughput[t.id][0]),
            work_unit=throughput[t.id][1],
            work_gap_s=_grace(t),
            slow=tuple(slow[t.name]),
        )
        for t, born in rows
    )
    providers = {p.slug: p for p in session.scalars(select(Provider))}
    return ReportInputs(
        month=month,
        period=period,
        now=now,
        targets=targets,
        incidents=_incidents(session, period),
        provider_names={slug: p.name for slug, p in providers.items()},
        provider_policies={slug: p.sla_policy for slug, p in providers.items()},
        pools={p.name: p.min_up for p in config.pools},
    )


def _first_observed() -> ScalarSelect[datetime]:
    """Per target row (correlated): the start of its earliest observed window, any source
    (probe coverage or imported history); NULL without one."""
    return (
        select(func.min(ObservedWindow.start))
        .where(ObservedWindow.target_id == Target.id)
        .correlate(Target)
        .scalar_subquery()
    )


def born(created_at: datetime, first_observed_at: datetime | None) -> datetime:
    """When a target starts to exist for the SLA figures: its registration, or its earliest
    observed window when that is earlier (history imported for months before slamon knew the
    target counts as observed, and as existing, over the imported window)."""
    if first_observed_at is None:
        return created_at
    return min(created_at, first_observed_at)


def lifetime_starts(session: Session, ids: Sequence[int]) -> dict[int, datetime]:
    """:func:`born` of each target in ``ids``, in one query (what month-to-date figures
    outside the report need, e.g. the SLA breach alert and the uptime metric)."""
    query = select(Target.id, Target.created_at, _first_observed()).where(Target.id.in_(ids))
    return {i: born(created, first) for i, created, first in session.execute(query)}


def _targets_alive_in(period: Span):  # type: ignore[no-untyped-def]
    """(target, earliest observed-window start) for every target that existed in ``period``."""
    first = _first_observed()
    return (
        select(Target, first)
        .where(or_(Target.created_at < period.end, first < period.end))
        .where(or_(Target.retired_at.is_(None), Target.retired_at > period.start))
        .order_by(Target.name)
    )


def _observed(session: Session, ids: list[int], period: Span) -> dict[int, list[Span]]:
    spans: dict[int, list[Span]] = defaultdict(list)
    query = select(ObservedWindow).where(
        ObservedWindow.target_id.in_(ids),
        ObservedWindow.start < period.end,
        ObservedWindow.end > period.start,
    )
    for w in session.scalars(query):
        spans[w.target_id].append(Span(max(w.start, period.start), min(w.end, period.end)))
    return spans


def _outages(
    session: Session, ids: list[int], period: Span
) -> dict[int, list[tuple[str, Span, bool]]]:
    found: dict[int, list[tuple[str, Span, bool]]] = defaultdict(list)
    query = select(Outage).where(
        Outage.target_id.in_(ids),
        Outage.start < period.end,
        or_(Outage.end.is_(None), Outage.end > period.start),
    )
    for o in session.scalars(query.order_by(Outage.start)):
        end = period.end if o.end is None else min(o.end, period.end)
        start = max(o.start, period.start)
        if end > start:
            found[o.target_id].append(
                (o.series, Span(start, end), o.end is None or o.end > period.end)
            )
    return found


def _throughput(
    session: Session, ids: list[int], period: Span
) -> dict[int, tuple[list[tuple[datetime, float]], str | None]]:
    """Each target's heartbeats with a throughput in the period (and the one just before, whose
    time starts the first interval), and the unit its job reports in."""
    found: dict[int, tuple[list[tuple[datetime, float]], str | None]] = defaultdict(
        lambda: ([], None)
    )
    query = (
        select(Heartbeat.target_id, Heartbeat.at, Heartbeat.throughput, Heartbeat.payload)
        .where(
            Heartbeat.target_id.in_(ids),
            Heartbeat.throughput.is_not(None),
            Heartbeat.at >= period.start - timedelta(hours=1),
            Heartbeat.at <= period.end + timedelta(hours=1),
        )
        .order_by(Heartbeat.target_id, Heartbeat.at)
    )
    for target_id, at, rate, payload in session.execute(query):
        samples, unit = found[target_id]
        samples.append((at, float(rate)))
        found[target_id] = (samples, unit or work_unit(payload))
    return found


def _grace(target: Target) -> float:
    """The silence after which a heartbeat target is down: no work is counted across it."""
    grace = (target.settings or {}).get("grace_s")
    return float(grace) if isinstance(grace, int | float) else 2 * target.interval_s


def _slow(session: Session, names: list[str], period: Span) -> dict[str, list[Span]]:
    """``training_slowdown`` alerts' spans in the period, by target name."""
    spans: dict[str, list[Span]] = defaultdict(list)
    query = select(Alert.labels, Alert.started_at, Alert.resolved_at).where(
        Alert.rule == "training_slowdown",
        Alert.started_at < period.end,
        or_(Alert.resolved_at.is_(None), Alert.resolved_at > period.start),
    )
    wanted = set(names)
    for labels, start, end in session.execute(query):
        name = (labels or {}).get("target")
        span = _clipped(start, end or period.end, period)
        if name in wanted and span is not None:
            spans[name].append(span)
    return spans


def _maintenance(session: Session, period: Span) -> list[MaintenanceWindow]:
    query = select(MaintenanceWindow).where(
        MaintenanceWindow.starts_at < period.end, MaintenanceWindow.ends_at > period.start
    )
    return list(session.scalars(query))


def _target(
    row: Target,
    first_observed_at: datetime | None,
    period: Span,
    observed: list[Span],
    outages: list[tuple[str, Span, bool]],
    stored: list[MaintenanceWindow],
    configured: list[MaintenanceConfig],
) -> TargetInput:
    start = max(period.start, born(row.created_at, first_observed_at))
    end = min(period.end, row.retired_at) if row.retired_at else period.end
    lifetime = Span(start, end) if end > start else None
    labels = {
        k: v
        for k, v in (
            ("target", row.name),
            ("provider", row.provider),
            ("region", row.region),
            ("pool", row.pool),
        )
        if v
    }
    spans = [(m.starts_at, m.ends_at) for m in windows_for(labels, stored)]
    spans += [(m.start, m.end) for m in windows_for(labels, configured)]
    windows = [w for w in (_clipped(a, b, period) for a, b in spans) if w is not None]
    known = observed  # outages count where we watched; an unwatched open outage is unknown
    return TargetInput(
        name=row.name,
        provider=row.provider,
        region=row.region,
        zone=row.zone,
        pool=row.pool,
        sla=row.sla_policy,
        gpus=row.gpus,
        hourly_price=float(row.hourly_price or 0),
        instance_type=row.instance_type,
        lifetime=lifetime,
        observed=tuple(known),
        outages=tuple(outages),
        maintenance=tuple(windows),
    )


def _clipped(start: datetime, end: datetime, period: Span) -> Span | None:
    start, end = max(start, period.start), min(end, period.end)
    return Span(start, end) if end > start else None


def _incidents(session: Session, period: Span) -> tuple[IncidentInput, ...]:
    query = (
        select(Incident, Provider.slug)
        .join(Provider)
        .where(Incident.relevant.is_(True), Incident.is_maintenance.is_(False))
        .where(Incident.started_at < period.end)
        .where(or_(Incident.resolved_at.is_(None), Incident.resolved_at > period.start))
        .where(and_(Incident.started_at.is_not(None)))
        .order_by(Incident.started_at)
    )
    return tuple(
        IncidentInput(
            slug,
            i.source_id,
            i.title,
            i.impact,
            i.started_at,
            i.acknowledged_at,
            i.resolved_at,
            i.first_seen_at,
            tuple(i.regions or ()),
            i.url,
        )
        for i, slug in session.execute(query)
    )
