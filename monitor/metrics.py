"""Prometheus metrics read from the database at scrape time (one collector, a few grouped
queries): whatever process serves /metrics reports the whole deployment, not its own memory."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime, timedelta

from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    Metric,
    SummaryMetricFamily,
)
from prometheus_client.registry import Collector
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from monitor.account.model import EVENT_KINDS, EVENT_STATUSES
from monitor.alerts.prometheus_rules import DOWNTIME, OBJECTIVE, OBSERVED
from monitor.config import Config
from monitor.db.base import utcnow
from monitor.db.models import Alert, Delivery, Feed, ProbeRollup, Provider, Target, TaskStat
from monitor.fleet.health import source_health
from monitor.health.judge import judge
from monitor.health.model import DISPATCH_ENTRY, Bounds, Judgement, Snapshot
from monitor.health.read import read_snapshot
from monitor.history import heartbeats, incidents
from monitor.probes.vantages import vantage_health
from monitor.reports import cumulative
from monitor.reports.model import MonthlyReport
from monitor.reports.service import month_to_date
from monitor.sla.math import budget_left
from monitor.sla.months import month_period
from monitor.sla.policy import SlaPolicy
from monitor.sla.policy_config import policies_for
from monitor.status.account import (
    AccountSourceHealth,
    account_sources,
    closed_this_month,
    current_events,
    seconds_until,
)
from monitor.status.health import fresh
from monitor.status.repository import verdicts

TARGET_LABELS = ["target", "provider", "region", "pool"]
STATE_VALUE = {"up": 1.0, "down": 0.0}


class SlamonCollector(Collector):
    """Collects from ``session`` (one scrape's database session) as of ``now``; month-to-date
    figures are the running month's report under ``config`` (``reports.service.month_to_date``)."""

    def __init__(self, session: Session, config: Config, now: datetime | None = None) -> None:
        self.session = session
        self.config = config
        self.now = now

    def collect(self) -> Iterator[Metric]:
        now = self.now or utcnow()
        policies = policies_for(self.config.sla_policies)
        # month to date as the monthly report counts it, so /metrics, the page and the API agree
        report = month_to_date(self.session, self.config, now)
        yield from _targets(self.session, now, report, policies)
        yield from _availability(self.session, self.config, now, report, policies)
        yield from _ledger(report)
        yield _open_incidents(self.session)
        yield _feed_failures(self.session)
        yield from _feed_health(self.session)
        yield from _vantages(self.session)
        yield from _discovery(self.session, self.config, now)
        sources = account_sources(self.session, self.config)
        yield from _account_events(self.session, now, {s.provider for s in sources})
        yield from _account_sources(sources)
        yield _alerts(self.session)
        yield _deliveries(self.session)
        yield from _tasks(self.session)


def _labels(t: Target) -> list[str]:
    return [t.name, t.provider or "", t.region or "", t.pool or ""]


def _targets(
    session: Session, now: datetime, report: MonthlyReport, policies: Mapping[str, SlaPolicy]
) -> Iterator[Metric]:
    up = GaugeMetricFamily(
        "slamon_target_up",
        "1 when the target is up (quorum of vantages), 0 when down; absent while unknown",
        labels=TARGET_LABELS,
    )
    usable = GaugeMetricFamily(
        "slamon_target_usable", "1 when reachable and all GPUs healthy", labels=TARGET_LABELS
    )
    uptime_ratio = GaugeMetricFamily(
        "slamon_target_month_uptime_ratio",
        "Month-to-date share of the target's observed time not inside a reachable outage, as "
        "the monthly report counts it (absent while nothing was observed)",
        labels=TARGET_LABELS,
    )
    targets = {t.id: t for t in session.scalars(select(Target).where(Target.retired_at.is_(None)))}
    # the status page's rule: a verdict no vantage has refreshed lately is unknown (absent here)
    for target_id, seen in verdicts(session).items():
        target = targets.get(target_id)
        if target is None or not fresh(
            seen.last_probe_at, target.interval_s, target.timeout_s, now
        ):
            continue
        for family, state in ((up, seen.reachable), (usable, seen.usable)):
            if state in STATE_VALUE:
                family.add_metric(_labels(target), STATE_VALUE[state])
    budget = GaugeMetricFamily(
        "slamon_target_error_budget_left_seconds",
        "Downtime the target's SLA policy still allows this month (negative: missed)",
        labels=TARGET_LABELS,
    )
    month = month_period(report.month)
    by_name = {t.name: t for t in targets.values()}
    for row in report.targets:
        target = by_name.get(row.name)
        if target is None:
            continue  # retired: in the report, not in the scrape
        if row.observed_uptime_pct is not None:
            uptime_ratio.add_metric(_labels(target), row.observed_uptime_pct / 100)
        policy = policies.get(target.sla_policy or "")
        if policy is not None:
            spent = timedelta(seconds=row.sla_downtime_s)
            left = budget_left(policy, month.end - month.start, spent)
            budget.add_metric(_labels(target), left.total_seconds())
    yield from (up, usable, uptime_ratio, budget, _latency(session, targets))


def _availability(
    session: Session,
    config: Config,
    now: datetime,
    report: MonthlyReport,
    policies: Mapping[str, SlaPolicy],
) -> Iterator[Metric]:
    """Each target's observed time and SLA downtime over all stored history
    (``reports.cumulative``: counters that only grow, so any window's availability is
    ``1 − increase(downtime) / increase(observed)``), and the objective its burn rate is
    judged against where its policy is judged per instance (as ``sla_burn`` does)."""
    observed = CounterMetricFamily(
        OBSERVED,
        "Time slamon observed the target, all stored history, as the monthly report's "
        "denominator counts it (unknown time is not in it)",
        labels=TARGET_LABELS,
    )
    downtime = CounterMetricFamily(
        DOWNTIME,
        "Downtime the target's SLA policy counts against its uptime, all stored history, as "
        "the monthly report counts it (maintenance and what the policy excludes left out)",
        labels=TARGET_LABELS,
    )
    objective = GaugeMetricFamily(
        OBJECTIVE,
        "The target's SLA objective as a ratio (0.999 for 99.9 %), for targets under a policy "
        "judged per instance; its error budget is 1 minus it",
        labels=[*TARGET_LABELS, "sla"],
    )
    found = cumulative.totals(session, config, now, report)
    for target in session.scalars(select(Target).where(Target.retired_at.is_(None))):
        each = found.get(target.name, cumulative.Totals())
        observed.add_metric(_labels(target), each.observed_s)
        downtime.add_metric(_labels(target), each.downtime_s)
        policy = policies.get(target.sla_policy or "")
        if policy is not None and policy.scope == "instance":
            objective.add_metric([*_labels(target), policy.name], policy.target_pct / 100)
    yield from (observed, downtime, objective)


def _ledger(report: MonthlyReport) -> Iterator[Metric]:
    """The month-to-date interruption ledger, one series per provider, instance type and
    capacity class, as the report and the status page show it (its interval stays there)."""
    labels = ["provider", "instance_type", "capacity"]
    # seconds, not the report's hours: Prometheus' base unit (promtool check metrics)
    lived = GaugeMetricFamily(
        "slamon_ledger_instance_seconds",
        "Month to date: how long this provider's instances of this type and capacity existed, "
        "summed over the instances",
        labels=labels,
    )
    taken = GaugeMetricFamily(
        "slamon_ledger_interruptions",
        "Month to date: lives ended by a preemption or by the provider (a user's end is none)",
        labels=labels,
    )
    rate = GaugeMetricFamily(
        "slamon_ledger_interruptions_per_1000h",
        "Month to date: interruptions per 1,000 instance-hours (absent with no hours)",
        labels=labels,
    )
    for row in report.ledger:
        key = [row.provider or "", row.instance_type or "", row.capacity]
        lived.add_metric(key, row.instance_hours * 3600)
        taken.add_metric(key, row.preemptions + row.provider_ends)
        if row.per_1000h is not None:
            rate.add_metric(key, row.per_1000h)
    yield from (lived, taken, rate)


class TrainingCollector(Collector):
    """Each pushed target's latest heartbeat, from ``session``: read at every scrape (a job
    pushes every few seconds, which logs no change, so it is never kept with the rest)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def collect(self) -> Iterator[Metric]:
        yield from _training(self.session)


class HealthCollector(Collector):
    """Is slamon doing its job (``monitor.health``), from ``session``: read at every scrape
    (the schedule moves every second and logs no change), judged by ``config``'s bounds."""

    def __init__(self, session: Session, config: Config) -> None:
        self.session = session
        self.config = config

    def collect(self) -> Iterator[Metric]:
        snapshot = read_snapshot(self.session)
        judgement = judge(snapshot, Bounds.of(self.config))
        yield from _health(snapshot, judgement)
        yield from _leadership(judgement)
        yield from _schedule(snapshot, judgement)


def _health(snapshot: Snapshot, judgement: Judgement) -> Iterator[Metric]:
    healthy = GaugeMetricFamily(
        "slamon_healthy",
        "1 while slamon does its job (a scheduler leads, the schedule is on time, deliveries "
        "drain, feeds are polled), 0 with a reason on /healthz",
    )
    healthy.add_metric([], 1.0 if judgement.ok else 0.0)
    backlog = GaugeMetricFamily(
        "slamon_oldest_pending_delivery_seconds",
        "How long the oldest pending delivery has waited (0 when none is pending)",
    )
    backlog.add_metric([], judgement.backlog_s)
    ping = GaugeMetricFamily(
        "slamon_watchdog_last_ping_timestamp_seconds",
        "When the watchdog URL last took a ping (Unix time); absent if it never has",
    )
    if snapshot.ping is not None and snapshot.ping.pinged_at is not None:
        ping.add_metric([], snapshot.ping.pinged_at.timestamp())
    yield from (healthy, backlog, ping)


def _leadership(judgement: Judgement) -> Iterator[Metric]:
    leader = GaugeMetricFamily(
        "slamon_scheduler_leader_info",
        "1 for the scheduler that leads (host:pid); absent while none does",
        labels=["leader"],
    )
    if judgement.leader is not None:
        leader.add_metric([judgement.leader], 1.0)
    token = GaugeMetricFamily(
        "slamon_scheduler_fencing_token",
        "The lease's fencing token: one more at each change of leader; absent before any",
    )
    if judgement.lease is not None:
        token.add_metric([], float(judgement.lease.token))
    yield from (leader, token)


def _schedule(snapshot: Snapshot, judgement: Judgement) -> Iterator[Metric]:
    lag = GaugeMetricFamily(
        "slamon_schedule_lag_seconds",
        "How far the latest periodic task is past its slot (0: all on time); absent before any",
    )
    if judgement.lag_s is not None:
        lag.add_metric([], judgement.lag_s)
    entry_lag = GaugeMetricFamily(
        "slamon_schedule_entry_lag_seconds",
        "How far each periodic task is past its slot (0: on time)",
        labels=["entry"],
    )
    for name, seconds in judgement.lags:
        entry_lag.add_metric([name], seconds)
    dispatch = GaugeMetricFamily(
        "slamon_last_dispatch_timestamp_seconds",
        "When a worker last started the probes' dispatch (Unix time); absent if never",
    )
    refused = CounterMetricFamily(
        "slamon_schedule_refused",
        "Scheduled messages a worker refused: fenced (sent under a lost lease) or repeated (a "
        "slot already run)",
        labels=["entry", "reason"],
    )
    for slot in snapshot.slots:
        if slot.name == DISPATCH_ENTRY and slot.done_at is not None:
            dispatch.add_metric([], slot.done_at.timestamp())
        refused.add_metric([slot.name, "fenced"], float(slot.fenced))
        refused.add_metric([slot.name, "repeated"], float(slot.repeated))
    yield from (lag, entry_lag, dispatch, refused)


def _training(session: Session) -> Iterator[Metric]:
    """Each pushed target's latest step and throughput, as its job reported them."""
    step = GaugeMetricFamily(
        "slamon_training_step", "The step in the target's latest heartbeat", labels=TARGET_LABELS
    )
    rate = GaugeMetricFamily(
        "slamon_training_throughput",
        "Work per second in the target's latest heartbeat (unit: samples or tokens)",
        labels=[*TARGET_LABELS, "unit"],
    )
    beats = heartbeats.latest(session)  # every target in service that has pushed
    targets = {t.id: t for t in session.scalars(select(Target).where(Target.id.in_(beats)))}
    for target_id, beat in beats.items():
        labels = _labels(targets[target_id])
        if beat.step is not None:
            step.add_metric(labels, float(beat.step))
        if beat.throughput is not None:
            rate.add_metric([*labels, beat.unit or "samples"], beat.throughput)
    yield from (step, rate)


def _latency(session: Session, targets: dict[int, Target]) -> Metric:
    """Median probe latency of each target's latest rolled-up minute."""
    family = GaugeMetricFamily(
        "slamon_target_latency_seconds",
        "Median probe latency in the target's latest rolled-up minute",
        labels=TARGET_LABELS,
    )
    latest = (
        select(ProbeRollup.target_id, func.max(ProbeRollup.bucket_start).label("bucket"))
        .where(ProbeRollup.resolution == "minute", ProbeRollup.target_id.in_(targets))
        .group_by(ProbeRollup.target_id)
        .subquery()
    )
    query = (
        select(ProbeRollup.target_id, ProbeRollup.latency_p50_ms)
        .join(
            latest,
            (ProbeRollup.target_id == latest.c.target_id)
            & (ProbeRollup.bucket_start == latest.c.bucket),
        )
        .where(ProbeRollup.resolution == "minute")
    )
    for target_id, p50 in session.execute(query):
        if p50 is not None:
            family.add_metric(_labels(targets[target_id]), p50 / 1000)
    return family


def _open_incidents(session: Session) -> Metric:
    family = GaugeMetricFamily(
        "slamon_provider_open_incidents",
        "Open provider incidents touching your regions/components",
        labels=["provider"],
    )
    for slug, count in incidents.open_counts(session).items():  # 0 for one with none open
        family.add_metric([slug], float(count))
    return family


def _feed_failures(session: Session) -> Metric:
    family = GaugeMetricFamily(
        "slamon_feed_consecutive_failures",
        "Failed polls in a row per status feed",
        labels=["provider", "kind"],
    )
    for slug, kind, failures in session.execute(
        select(Provider.slug, Feed.kind, Feed.consecutive_failures)
        .join(Provider)
        .where(Feed.enabled.is_(True))
    ):
        family.add_metric([slug, kind], float(failures))
    return family


def _feed_health(session: Session) -> Iterator[Metric]:
    """Whether each feed's latest poll succeeded (absent until it has been polled: a feed
    nobody has read is unknown, not up) and when it last answered."""
    up = GaugeMetricFamily(
        "slamon_feed_up",
        "1 when the feed's latest poll succeeded, 0 while it fails; absent until first polled",
        labels=["provider", "kind"],
    )
    success = GaugeMetricFamily(
        "slamon_feed_last_success_timestamp_seconds",
        "When the feed last answered a poll (Unix time); absent if it never has",
        labels=["provider", "kind"],
    )
    query = (
        select(Provider.slug, Feed.kind, Feed.last_polled_at, Feed.last_success_at)
        .join(Provider)
        .add_columns(Feed.consecutive_failures)
        .where(Feed.enabled.is_(True))
    )
    for slug, kind, polled, succeeded, failures in session.execute(query):
        if polled is not None:
            up.add_metric([slug, kind], 0.0 if failures or succeeded is None else 1.0)
        if succeeded is not None:
            success.add_metric([slug, kind], succeeded.timestamp())
    yield from (up, success)


def _discovery(session: Session, config: Config, now: datetime) -> Iterator[Metric]:
    """Each discovery source's sweeps, judged as the alert is (``discovery_failing``); a source
    never swept has no ``up`` sample (unknown, not up)."""
    labels = ["source", "kind"]
    up = GaugeMetricFamily(
        "slamon_discovery_up",
        "1 while the source's sweeps succeed, 0 once they fail; absent until first swept",
        labels=labels,
    )
    failing = GaugeMetricFamily(
        "slamon_discovery_failing",
        "1 while discovery_failing fires for the source (its sweeps fail for too long)",
        labels=labels,
    )
    success = GaugeMetricFamily(
        "slamon_discovery_last_success_timestamp_seconds",
        "When the source last swept successfully (Unix time); absent if it never has",
        labels=labels,
    )
    listed = GaugeMetricFamily(
        "slamon_discovery_instances", "Instances the last good sweep listed", labels=labels
    )
    for source in source_health(session, config, now):
        key = [source.name, source.kind]
        if source.last_swept_at is not None:
            up.add_metric(key, 0.0 if source.consecutive_failures else 1.0)
            failing.add_metric(key, 1.0 if source.failing else 0.0)
        if source.last_success_at is not None:
            success.add_metric(key, source.last_success_at.timestamp())
            listed.add_metric(key, float(source.instances))
    yield from (up, failing, success, listed)


def _account_events(session: Session, now: datetime, polled: set[str]) -> Iterator[Metric]:
    """What the providers told the account (``monitor.status.account``, as the pages read it):
    the events by provider, kind and status (every provider of ``polled``, the providers the
    account event sources read, and any heard of), how soon each upcoming one on a target in
    service starts, and each preemption notice's deadline (its start: when the instance is
    taken)."""
    count = GaugeMetricFamily(
        "slamon_account_events",
        "Account events stored: every upcoming and open one, and those closed this month (UTC)",
        labels=["provider", "kind", "status"],
    )
    starts = GaugeMetricFamily(
        "slamon_account_event_starts_in_seconds",
        "Seconds until an upcoming account event on the target starts; absent once due",
        labels=["target", "provider", "kind", "event"],
    )
    deadline = GaugeMetricFamily(
        "slamon_interruption_notice_deadline_timestamp_seconds",
        "When an open or upcoming preemption notice takes the target (Unix time; the earliest)",
        labels=["target", "provider"],
    )
    current = current_events(session)
    counted = Counter((v.provider, v.kind, v.status) for v in current)
    counted.update((v.provider, v.kind, v.status) for v in closed_this_month(session, now))
    # every provider read from or heard of has all its series, 0 when none: a count that falls
    # to zero reads 0, not a series that went stale
    providers = {p for p, _, _ in counted} | polled
    for provider in sorted(providers):
        for kind in EVENT_KINDS:
            for status in EVENT_STATUSES:
                count.add_metric([provider, kind, status], float(counted[provider, kind, status]))
    live = set(session.scalars(select(Target.name).where(Target.retired_at.is_(None))))
    deadlines: dict[tuple[str, str], datetime] = {}
    for event in current:
        for name in sorted(live.intersection(event.targets)):
            left = seconds_until(event, now)
            if left is not None:
                starts.add_metric([name, event.provider, event.kind, event.key], left)
            if event.kind == "preemption" and event.starts_at is not None:
                known = deadlines.get((name, event.provider))
                if known is None or event.starts_at < known:
                    deadlines[name, event.provider] = event.starts_at
    for (name, provider), at in sorted(deadlines.items()):
        deadline.add_metric([name, provider], at.timestamp())
    yield from (count, starts, deadline)


def _account_sources(sources: Iterable[AccountSourceHealth]) -> Iterator[Metric]:
    """Each configured account event source's polls; one never polled has no ``up`` sample
    (unknown, not up)."""
    labels = ["source", "kind"]
    up = GaugeMetricFamily(
        "slamon_account_source_up",
        "1 when the account event source's latest poll succeeded, 0 while it fails; absent until "
        "first polled",
        labels=labels,
    )
    success = GaugeMetricFamily(
        "slamon_account_source_last_success_timestamp_seconds",
        "When the account event source last polled cleanly (Unix time); absent if it never has",
        labels=labels,
    )
    for source in sources:
        key = [source.name, source.kind]
        if source.last_polled_at is not None:
            up.add_metric(key, 0.0 if source.consecutive_failures else 1.0)
        if source.last_success_at is not None:
            success.add_metric(key, source.last_success_at.timestamp())
    yield from (up, success)


def _vantages(session: Session) -> Iterator[Metric]:
    """Each probing vantage's agreement with the quorum, as the alert evaluator last judged."""
    blind = GaugeMetricFamily(
        "slamon_vantage_blind",
        "1 while the vantage disagrees with the quorum on nearly every target (vantage_blind)",
        labels=["vantage"],
    )
    disagreeing = GaugeMetricFamily(
        "slamon_vantage_disagreeing_targets",
        "Targets on which the vantage's verdict differs from the quorum's",
        labels=["vantage"],
    )
    agreed = GaugeMetricFamily(
        "slamon_vantage_last_agreed_timestamp_seconds",
        "When the vantage last agreed with the quorum (Unix time)",
        labels=["vantage"],
    )
    for v in vantage_health(session):
        blind.add_metric([v.vantage], 1.0 if v.blind_since else 0.0)
        disagreeing.add_metric([v.vantage], float(v.disagreeing))
        if v.last_agreed_at is not None:
            agreed.add_metric([v.vantage], v.last_agreed_at.timestamp())
    yield from (blind, disagreeing, agreed)


def _alerts(session: Session) -> Metric:
    family = GaugeMetricFamily("slamon_alerts_firing", "Firing alerts", labels=["rule", "severity"])
    query = (
        select(Alert.rule, Alert.severity, func.count())
        .where(Alert.state == "firing")
        .group_by(Alert.rule, Alert.severity)
    )
    for rule, severity, count in session.execute(query):
        family.add_metric([rule, severity], float(count))
    return family


def _deliveries(session: Session) -> Metric:
    family = GaugeMetricFamily(
        "slamon_deliveries", "Notification deliveries by status", labels=["status"]
    )
    for status, count in session.execute(
        select(Delivery.status, func.count()).group_by(Delivery.status)
    ):
        family.add_metric([status], float(count))
    return family


def _tasks(session: Session) -> Iterator[Metric]:
    """Celery task runs and durations, as the workers added them to ``task_stats``."""
    durations = SummaryMetricFamily(
        "slamon_task_duration_seconds", "Time Celery tasks took, all runs", labels=["task"]
    )
    failures = CounterMetricFamily(
        "slamon_task_failures", "Celery task runs that failed or were retried", labels=["task"]
    )
    last = GaugeMetricFamily(
        "slamon_task_last_duration_seconds", "Time the latest run of a task took", labels=["task"]
    )
    finished = GaugeMetricFamily(
        "slamon_task_last_finished_timestamp_seconds",
        "When the latest run of a task finished (Unix time)",
        labels=["task"],
    )
    for stat in session.scalars(select(TaskStat).order_by(TaskStat.task)):
        durations.add_metric([stat.task], count_value=stat.runs, sum_value=stat.seconds_total)
        failures.add_metric([stat.task], float(stat.failures))
        last.add_metric([stat.task], stat.last_seconds)
        finished.add_metric([stat.task], stat.last_finished_at.timestamp())
    yield from (durations, failures, last, finished)
