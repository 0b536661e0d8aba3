"""Everything a monthly report needs, read through ``monitor.history`` (intervals and windows,
never raw probe rows), as plain values for the pure assembly step."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from monitor.config.models import Config
from monitor.db.models import Provider, Target
from monitor.history import account_events, heartbeats, ledger, lifetimes, maintenance, spans
from monitor.history.incidents import ProviderIncident, relevant_in
from monitor.history.spans import TargetSpans
from monitor.sla.interruptions import LedgerLine
from monitor.sla.intervals import Span
from monitor.sla.months import month_bounds

IncidentInput = ProviderIncident  # the report's name for a provider incident in its period


@dataclass(frozen=True, slots=True)
class AccountEventInput:
    """An account event about a target, as the report weighs it: evidence for the outages its
    window overlaps, and an exclusion where it is the user's own doing (``user_initiated``) or
    maintenance the user scheduled or accepted."""

    event_id: str  # the provider's key
    provider: str
    kind: str
    source: str
    title: str
    detail: str
    start: datetime
    end: datetime | None  # None: still open
    accepted: bool = False


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
    # what the probes stored as each outage's cause (aligned with ``outages``; a usable
    # outage's: gpu_hardware, stalled_step or both joined by "+"), None where none was stored
    causes: tuple[str | None, ...] = ()
    # the account events about it whose window overlaps the period, earliest first
    events: tuple[AccountEventInput, ...] = ()


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
    ledger: tuple[LedgerLine, ...] = ()  # the instances' interruptions in the period


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
    alive = lifetimes.alive_in(session, period)
    ids = [a.target.id for a in alive]
    timelines = spans.spans(session, ids, period, now)
    rule = config.alerts.slowdown_rule
    series = heartbeats.around(session, ids, period, lead=rule.span)
    stored = maintenance.stored_in(session, period)
    told = account_events.by_target(account_events.events(session, period=period))
    targets = tuple(
        _target(
            a,
            timelines.get(a.target.id, TargetSpans()),
            maintenance.target_windows(_labels(a.target), stored, config.maintenance, period),
            series.get(a.target.id, heartbeats.Throughput()),
            heartbeats.slow_in(series.get(a.target.id, heartbeats.Throughput()), period, now, rule),
            period,
            told.get(a.target.name, []),
        )
        for a in alive
    )
    providers = {p.slug: p for p in session.scalars(select(Provider))}
    return ReportInputs(
        month=month,
        period=period,
        now=now,
        targets=targets,
        incidents=relevant_in(session, period),
        provider_names={slug: p.name for slug, p in providers.items()},
        provider_policies={slug: p.sla_policy for slug, p in providers.items()},
        pools={p.name: p.min_up for p in config.pools},
        ledger=tuple(ledger.ledger_in(session, period)),
    )


def _grace(target: Target) -> float:
    """The silence after which a heartbeat target is down: no work is counted across it."""
    grace = (target.settings or {}).get("grace_s")
    return float(grace) if isinstance(grace, int | float) else 2 * target.interval_s


def _labels(row: Target) -> dict[str, str]:
    pairs = (("target", row.name), ("provider", row.provider), ("region", row.region))
    return {k: v for k, v in (*pairs, ("pool", row.pool)) if v}


def _target(
    alive: lifetimes.Alive,
    timeline: TargetSpans,
    windows: tuple[Span, ...],
    work: heartbeats.Throughput,
    slow: tuple[Span, ...],
    period: Span,
    events: list[account_events.AccountEventView],
) -> TargetInput:
    """One target's inputs (an unwatched open outage stays in: the assembly counts outages
    only where the target was observed)."""
    row = alive.target
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
        lifetime=alive.lifetime,
        observed=timeline.observed,
        outages=tuple((o.series, o.span, o.still_open) for o in timeline.outages),
        causes=tuple(o.cause for o in timeline.outages),
        maintenance=windows,
        throughput=tuple(s for s in work.samples if s[0] >= period.start - heartbeats.EDGE),
        work_unit=work.unit,
        work_gap_s=_grace(row),
        slow=slow,
        events=tuple(sorted((_event(e) for e in events), key=lambda e: (e.start, e.event_id))),
    )


def _event(view: account_events.AccountEventView) -> AccountEventInput:
    return AccountEventInput(
        event_id=view.key,
        provider=view.provider,
        kind=view.kind,
        source=view.source,
        title=view.title,
        detail=view.detail,
        start=view.start,
        end=view.ends_at,
        accepted=view.accepted,
    )
