"""Everything the status page shows, as frozen values: read by ``build_view`` in a handful of
batched queries (``monitor.status.repository``, ``monitor.status.account``) plus the month's SLA
report, shaped by the pure rules in ``monitor.status.history`` and ``monitor.status.health``.
The template only formats."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.orm import Session

from monitor.alerts.channel_state import ChannelState, channel_states
from monitor.config import Config
from monitor.history import notices
from monitor.history.account_events import AccountEventView
from monitor.history.generation import READ_MAX_AGE, ReadCache
from monitor.history.incidents import ProviderIncident
from monitor.history.notices import NoticeView
from monitor.history.spans import REACHABLE, USABLE, TargetSpans
from monitor.history.spans import spans as history_spans
from monitor.probes.vantages import VantageHealth, vantage_health
from monitor.reports.model import LedgerRow, MonthlyReport, ProviderReport, WorkRow
from monitor.reports.service import month_to_date
from monitor.sla.intervals import Span
from monitor.status import repository
from monitor.status.account import (
    PROVIDER_KINDS,
    AccountSourceHealth,
    account_sources,
    current_events,
    current_order,
    on_targets,
)
from monitor.status.health import (
    PoolHealth,
    ProviderHealth,
    VantageRow,
    fresh,
    pool_health,
    provider_health,
    target_state,
    vantage_state,
)
from monitor.status.history import (
    DOWN,
    UNKNOWN,
    UNUSABLE,
    UP,
    Bucket,
    Uptime,
    bucket_edges,
    history_bar,
    timeline,
    uptime,
    weighted_median,
)

BUCKETS = 48
BUCKET_WIDTH = timedelta(minutes=30)  # 48 x 30 min: the last 24 h
WINDOWS = (timedelta(days=1), timedelta(days=7), timedelta(days=30))
SEVERITY = {DOWN: 0, UNUSABLE: 1, UNKNOWN: 2, UP: 3}  # the fleet lists trouble first


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
    health: ProviderHealth
    incidents: tuple[IncidentView, ...]


@dataclass(frozen=True, slots=True)
class TargetView:
    name: str
    kind: str
    state: str  # up | unusable | down | unknown
    pool: str | None
    provider: str | None
    region: str | None
    bar: tuple[Bucket, ...]  # the last 24 h, equal adjacent buckets joined
    uptime: tuple[Uptime, ...]  # over WINDOWS
    latency_ms: float | None  # median over the last 24 h
    month_pct: float | None = None  # month to date over observed time, as the report counts it
    # the provider's maintenance, retirements, preemptions and issues on it, open or upcoming
    # (open first): told beside its state, never instead of it
    events: tuple[AccountEventView, ...] = ()


@dataclass(frozen=True, slots=True)
class AlertView:
    rule: str
    severity: str
    summary: str
    since: datetime


@dataclass(frozen=True, slots=True)
class ChannelView:
    """A notification channel its receiver disabled: alerts are not reaching it."""

    name: str
    kind: str
    disabled_at: datetime | None
    last_error: str | None  # redacted when stored


@dataclass(frozen=True, slots=True)
class SlaView:
    slug: str
    name: str
    uptime_pct: float | None  # None: no data this month
    target_pct: float | None
    credit_pct: float


@dataclass(frozen=True, slots=True)
class WorkView:
    """Price / performance / stability of one provider and instance type, month to date."""

    provider: str
    instance_type: str
    unit: str
    availability_pct: float | None
    hours_lost: float  # down + unusable + slow
    slow_hours: float
    work_millions: float
    list_price_per_million: float | None
    effective_price_per_million: float | None


@dataclass(frozen=True, slots=True)
class LedgerView:
    """The interruption ledger's row for one provider, instance type and capacity, month to
    date: its instances taken away (preempted or ended by the provider) per 1,000 hours."""

    provider: str
    instance_type: str
    capacity: str
    instance_hours: float
    preemptions: int
    provider_ends: int
    median_lifetime_h: float | None
    per_1000h: float | None
    low: float | None  # the exact 95 % interval, per 1,000 instance-hours
    high: float | None
    small_sample: bool


@dataclass(frozen=True, slots=True)
class Summary:
    """The banner: the fleet's worst state and how many targets are in each."""

    state: str
    counts: dict[str, int]


@dataclass(frozen=True, slots=True)
class StatusView:
    now: datetime
    month: str
    providers: tuple[ProviderView, ...]
    fleet: tuple[TargetView, ...]
    pools: tuple[PoolHealth, ...]
    alerts: tuple[AlertView, ...]
    sla: tuple[SlaView, ...]
    vantages: tuple[VantageRow, ...] = ()
    history_start: datetime | None = None  # the bar's left edge
    channels: tuple[ChannelView, ...] = ()  # the disabled notification channels only
    work: tuple[WorkView, ...] = ()  # the report's price per unit of work
    ledger: tuple[LedgerView, ...] = ()  # the report's interruption ledger
    # the provider's events on live targets, open or upcoming, and the sources that poll them
    account_events: tuple[AccountEventView, ...] = ()
    account_sources: tuple[AccountSourceHealth, ...] = ()
    notices: tuple[NoticeView, ...] = ()  # the operators': current, then upcoming
    # the month-to-date report the month's figures are from (the badges' SLA, pool pages)
    report: MonthlyReport | None = None

    @property
    def summary(self) -> Summary:
        return summary_of(self.fleet)


# --------------------------------------------------------------------------- pure shaping


def target_view(
    row: repository.TargetRow,
    verdict: repository.Verdict | None,
    spans: TargetSpans | None,
    latency: Sequence[tuple[float, int]],
    edges: Sequence[datetime],
    now: datetime,
    month_pct: float | None = None,
    events: Sequence[AccountEventView] = (),
) -> TargetView:
    """One fleet row: displayed state, history bar, uptimes, median latency and the provider's
    events on it (which never change its state)."""
    verdict = verdict or repository.Verdict()
    spans = spans or TargetSpans()
    is_fresh = fresh(verdict.last_probe_at, row.interval_s, row.timeout_s, now)
    line = timeline(spans.observed, spans.of(REACHABLE), spans.of(USABLE))
    return TargetView(
        name=row.name,
        kind=row.kind,
        state=target_state(verdict.reachable, verdict.usable, is_fresh),
        pool=row.pool,
        provider=row.provider,
        region=row.region,
        bar=history_bar(line, edges),
        uptime=tuple(uptime(line, now, w) for w in WINDOWS),
        latency_ms=weighted_median(latency),
        month_pct=month_pct,
        events=tuple(events),
    )


def pools_of(fleet: Iterable[TargetView], min_up: Mapping[str, int]) -> tuple[PoolHealth, ...]:
    """Every pool named by a live target or by the config, its members counted by displayed
    state against ``min_up`` (default 1): only usable members count. A configured pool with no
    live member is down, not absent."""
    members: dict[str, list[str]] = defaultdict(list)
    for name in min_up:
        members[name] = []
    for target in fleet:
        if target.pool:
            members[target.pool].append(target.state)
    return tuple(
        pool_health(name, min_up.get(name, 1), states) for name, states in sorted(members.items())
    )


def provider_view(
    row: repository.ProviderRow, now: datetime, stale_after: timedelta
) -> ProviderView:
    incidents = tuple(_incident(i) for i in row.incidents)
    maintenance = sum(i.is_maintenance for i in row.incidents)
    health = provider_health(row.feeds, len(incidents) - maintenance, maintenance, now, stale_after)
    return ProviderView(row.slug, row.name, health, incidents)


def _incident(row: ProviderIncident) -> IncidentView:
    url = row.url if row.url and row.url.lower().startswith(("http://", "https://")) else None
    impact = "maintenance" if row.is_maintenance else row.impact
    return IncidentView(row.title, impact, row.started_at, url)


def vantage_rows(health: Iterable[VantageHealth]) -> tuple[VantageRow, ...]:
    return tuple(
        VantageRow(
            h.vantage,
            vantage_state(h.last_probe_at, h.disagreeing, h.blind_since is not None),
            h.last_probe_at,
            h.targets,
            h.disagreeing,
            h.last_agreed_at,
            h.blind_since,
        )
        for h in health
    )


def work_of(
    providers: Iterable[ProviderView], reports: Iterable[ProviderReport], rows: Iterable[WorkRow]
) -> tuple[WorkView, ...]:
    """The report's work rows as the page shows them: provider names, hours, millions."""
    names = {p.slug: p.name for p in providers} | {r.slug: r.name for r in reports}
    return tuple(
        WorkView(
            provider=names.get(w.provider or "", w.provider or "(no provider)"),
            instance_type=w.instance_type or "—",
            unit=w.work_unit,
            availability_pct=w.availability_pct,
            hours_lost=(w.downtime_s + w.unusable_s + w.slow_s) / 3600,
            slow_hours=w.slow_s / 3600,
            work_millions=w.work_done / 1e6,
            list_price_per_million=w.list_price_per_million,
            effective_price_per_million=w.effective_price_per_million,
        )
        for w in rows
    )


def ledger_of(
    providers: Iterable[ProviderView], reports: Iterable[ProviderReport], rows: Iterable[LedgerRow]
) -> tuple[LedgerView, ...]:
    """The report's interruption ledger as the page shows it: provider names, dashes."""
    names = {p.slug: p.name for p in providers} | {r.slug: r.name for r in reports}
    return tuple(
        LedgerView(
            provider=names.get(r.provider or "", r.provider or "(no provider)"),
            instance_type=r.instance_type or "—",
            capacity=r.capacity,
            instance_hours=r.instance_hours,
            preemptions=r.preemptions,
            provider_ends=r.provider_ends,
            median_lifetime_h=r.median_lifetime_h,
            per_1000h=r.per_1000h,
            low=r.low,
            high=r.high,
            small_sample=r.small_sample,
        )
        for r in rows
    )


def sla_of(
    providers: Iterable[ProviderView], reports: Iterable[ProviderReport]
) -> tuple[SlaView, ...]:
    """One row per known provider (and per reported one); a provider without a report row has
    no data."""
    by_slug = {r.slug: r for r in reports}
    names = {p.slug: p.name for p in providers} | {r.slug: r.name for r in by_slug.values()}
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


def disabled_channels(states: Iterable[ChannelState]) -> tuple[ChannelView, ...]:
    """The channels to warn about: those disabled, by name."""
    return tuple(
        ChannelView(c.name, c.kind, c.disabled_at, c.last_error) for c in states if not c.enabled
    )


def events_on_fleet(
    current: Iterable[AccountEventView], fleet: Iterable[TargetView]
) -> tuple[AccountEventView, ...]:
    """The events about at least one target of ``fleet``, open first, then the soonest."""
    live = {t.name for t in fleet}
    return current_order(v for v in current if live.intersection(v.targets))


def summary_of(fleet: Iterable[TargetView]) -> Summary:
    """The worst displayed state in the fleet (unknown for an empty one) and the counts."""
    counts = dict.fromkeys((UP, UNUSABLE, DOWN, UNKNOWN), 0)
    for target in fleet:
        counts[target.state] += 1
    worst = min((s for s, n in counts.items() if n), key=SEVERITY.__getitem__, default=UNKNOWN)
    return Summary(worst, counts)


def in_order(fleet: Iterable[TargetView]) -> tuple[TargetView, ...]:
    """Trouble first (down, unusable, unknown, up), then by name."""
    return tuple(sorted(fleet, key=lambda t: (SEVERITY[t.state], t.name)))


# --------------------------------------------------------------------------- the one read


def build_view(session: Session, config: Config, now: datetime) -> StatusView:
    """Everything the page shows: a fixed few batched queries whatever the fleet's size (the
    account events are two: ``monitor.history.account_events`` reads them and the targets they
    may be about; their sources one, when any is configured), plus the month-to-date report
    (``month_to_date``) its SLA, work, ledger and per-target month figures are."""
    edges = bucket_edges(now, BUCKETS, BUCKET_WIDTH)
    since = min(edges[0], now - max(WINDOWS))
    targets = repository.live_targets(session)
    verdicts = repository.verdicts(session)
    spans = history_spans(session, [t.id for t in targets], Span(since, now), now)
    latency = repository.latency_samples(session, [t.id for t in targets], now)
    report = month_to_date(session, config, now)
    month = {r.name: r.observed_uptime_pct for r in report.targets}
    current = current_events(session, PROVIDER_KINDS)
    marks = on_targets(current, (t.name for t in targets))
    fleet = in_order(
        target_view(
            t,
            verdicts.get(t.id),
            spans.get(t.id),
            latency.get(t.id, ()),
            edges,
            now,
            month.get(t.name),
            marks.get(t.name, ()),
        )
        for t in targets
    )
    stale_after = timedelta(seconds=config.alerts.feed_stale_after)
    providers = tuple(provider_view(p, now, stale_after) for p in repository.providers(session))
    alerts = repository.firing_alerts(session)
    return StatusView(
        now=now,
        month=report.month,
        providers=providers,
        fleet=fleet,
        pools=pools_of(fleet, {p.name: p.min_up for p in config.pools}),
        alerts=tuple(AlertView(a.rule, a.severity, a.summary, a.since) for a in alerts),
        sla=sla_of(providers, report.providers),
        vantages=vantage_rows(vantage_health(session, now)),
        history_start=edges[0],
        channels=disabled_channels(channel_states(session, config)),
        work=work_of(providers, report.providers, report.work),
        ledger=ledger_of(providers, report.providers, report.ledger),
        account_events=events_on_fleet(current, fleet),
        account_sources=account_sources(session, config),
        notices=notices.shown(session, now),
        report=report,
    )


# The view as last built, until something happened (``monitor.history.generation``) or it is
# ``READ_MAX_AGE`` old: the status page, the pool and fleet pages and the badges read one build
# between writes, so they show the same figures (a thousand targets take about a second).
VIEWS: ReadCache[StatusView] = ReadCache(READ_MAX_AGE)


def current_view(session: Session, config: Config, now: datetime) -> StatusView:
    """``build_view``'s view as of ``now``, or the one kept since the last write."""
    return VIEWS.get(session, id(config), now, lambda: build_view(session, config, now)).value
