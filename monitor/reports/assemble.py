"""From report inputs to the report (pure): three ledgers per provider, SLA math per target with
its own policy, causes, pools, response times, the interruption ledger and the provider
scorecard."""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from functools import lru_cache
from statistics import median
from typing import Any

from monitor.reports import evidence
from monitor.reports.causes import EventIndex, IncidentFact, OutageFact, classify
from monitor.reports.inputs import IncidentInput, ReportInputs, TargetInput
from monitor.reports.model import (
    IncidentRow,
    LedgerRow,
    MonthlyReport,
    OutageRow,
    PoolReport,
    ProviderReport,
    TargetReport,
    WorkRow,
)
from monitor.reports.work import nominal_rate, per_million, work_done
from monitor.sla.interruptions import (
    CONFIDENCE,
    PER_HOURS,
    SMALL_SAMPLE_EVENTS,
    SMALL_SAMPLE_HOURS,
    LedgerLine,
    combined,
)
from monitor.sla.intervals import Span, at_least, clip, intersect, merge, subtract, total
from monitor.sla.math import (
    claim_deadline,
    credit_pct,
    pool_availability,
    region_unavailable,
    sla_downtime,
    uptime_pct,
)
from monitor.sla.months import month_bounds
from monitor.sla.policy import SlaPolicy
from monitor.sla.response import percentile

HOUR = 3600.0
ACCOUNTING_VERSION = 1


def assemble(
    inputs: ReportInputs, policies: Mapping[str, SlaPolicy], generated_at: datetime
) -> MonthlyReport:
    alive = [_on_policy_provider(t, policies) for t in inputs.targets if t.lifetime is not None]
    region_spans = _region_downtime(alive, policies)
    facts = EventIndex(_outage_facts(alive))
    incidents = [_incident_fact(i, inputs.period.end) for i in inputs.incidents]
    providers = {t.provider for t in alive}
    targets = [
        _target_report(
            t, policies.get(t.sla or ""), region_spans, facts, incidents, len(alive), len(providers)
        )
        for t in alive
    ]
    provider_rows = _rank(_with_spot_rates(_providers(inputs, alive, targets, policies), inputs))
    work_rows = _work_rows(targets, provider_rows)
    accounting = _accounting(inputs, policies, alive)
    return MonthlyReport(
        month=inputs.month,
        period_start=inputs.period.start,
        period_end=inputs.period.end,
        generated_at=generated_at,
        policy=accounting,
        policy_hash=_hash(accounting),
        providers=tuple(provider_rows),
        targets=tuple(targets),
        pools=tuple(_pools(inputs, alive)),
        incidents=tuple(_incident_row(i, alive) for i in inputs.incidents),
        notes=tuple(_notes(inputs, targets)),
        work=tuple(work_rows),
        ledger=tuple(_ledger_row(line) for line in inputs.ledger),
    )


# --------------------------------------------------------------------------- targets


def _on_policy_provider(target: TargetInput, policies: Mapping[str, SlaPolicy]) -> TargetInput:
    """A target stored without a provider is on its SLA policy's (every policy names one): its
    credit is owed by that provider, and its impact is counted there."""
    policy = policies.get(target.sla or "")
    if target.provider or policy is None:
        return target
    return replace(target, provider=policy.provider)


@lru_cache(maxsize=8192)  # each is asked for several times per target and report
def _spans(target: TargetInput, series: str) -> list[Span]:
    """The series' outages, where we were watching: an open outage nobody probed since is
    unknown time after its last probe, not downtime."""
    return intersect(merge([span for s, span, _ in target.outages if s == series]), _known(target))


@lru_cache(maxsize=8192)
def _known(target: TargetInput) -> list[Span]:
    if target.lifetime is None:
        return []
    return merge(clip(list(target.observed), target.lifetime.start, target.lifetime.end))


def _seconds(spans: Sequence[Span]) -> float:
    return total(spans).total_seconds()


def _target_report(
    target: TargetInput,
    policy: SlaPolicy | None,
    region_spans: Mapping[tuple[str | None, str | None], list[Span]],
    facts: EventIndex,
    incidents: Sequence[IncidentFact],
    watched: int,
    providers: int,
) -> TargetReport:
    assert target.lifetime is not None
    lifetime = target.lifetime
    period = lifetime.end - lifetime.start
    unknown = period - total(_known(target))
    reach, usable = _spans(target, "reachable"), _spans(target, "usable")
    counted = _counted(target, policy, region_spans)
    excluded = evidence.exclusions(reach, target.maintenance, target.events, lifetime.end, policy)
    uptime = uptime_pct(counted, period, unknown)
    credit = credit_pct(uptime, policy) if policy and uptime is not None else 0.0
    hours_lost = _seconds(usable or reach) / HOUR
    spend = target.hourly_price * period.total_seconds() / HOUR
    # slow: up and usable, but training slower than its own median (down time is not slow)
    slow = subtract(merge(target.slow), merge([*reach, *usable]))
    samples = [s for s in target.throughput if lifetime.start <= s[0] <= lifetime.end]
    rate = nominal_rate(samples) if target.work_unit else None
    work = (
        work_done(target.throughput, lifetime, timedelta(seconds=target.work_gap_s))
        if target.work_unit
        else 0.0
    )
    return TargetReport(
        name=target.name,
        provider=target.provider,
        region=target.region,
        zone=target.zone,
        pool=target.pool,
        sla=target.sla,
        gpus=target.gpus,
        hourly_price=target.hourly_price,
        observed_s=(period - unknown).total_seconds(),
        unknown_s=unknown.total_seconds(),
        downtime_s=_seconds(reach),
        sla_downtime_s=counted.total_seconds(),
        usable_downtime_s=_seconds(usable),
        uptime_pct=uptime,
        target_pct=policy.target_pct if policy else None,
        credit_pct=credit,
        # the credit is a share of what the target cost while it existed in the period
        credit_amount=credit / 100 * target.hourly_price * period.total_seconds() / HOUR,
        gpu_hours_lost=hours_lost * target.gpus,
        cost_lost=hours_lost * target.hourly_price,
        outages=tuple(_evidence(target, policy, facts, incidents, watched, providers)),
        instance_type=target.instance_type,
        slow_s=_seconds(slow),
        work_unit=target.work_unit,
        work_done=work,
        nominal_rate=rate,
        list_price_per_million=per_million(target.hourly_price, rate * HOUR) if rate else None,
        effective_price_per_million=per_million(spend, work) if target.work_unit else None,
        observed_uptime_pct=observed_uptime_pct(period - unknown, total(reach)),
        exclusions=tuple(excluded),
    )


def observed_uptime_pct(observed: timedelta, down: timedelta) -> float | None:
    """The reachable share of the observed time, in percent; None when nothing was observed."""
    if observed <= timedelta(0):
        return None
    return 100 * (1 - down / observed)


# what a probe stores as a usable outage's cause (monitor.probes.model.UnusableCause, joined)
USABLE_CAUSES = frozenset({"gpu_hardware", "stalled_step", "gpu_hardware+stalled_step"})


def _counted(
    target: TargetInput,
    policy: SlaPolicy | None,
    region_spans: Mapping[tuple[str | None, str | None], list[Span]],
) -> timedelta:
    """Downtime as the target's policy counts it (no policy: observed minus maintenance and
    the provider's record of the user's own doing). Under a region policy the provider's
    record was already weighed per instance (``_region_downtime``)."""
    assert target.lifetime is not None
    spans = _spans(target, "reachable")
    if policy is not None and policy.scope == "region":
        spans = region_spans.get((target.provider, target.region), [])
        return sla_downtime(spans, list(target.maintenance), target.lifetime, policy)
    maintenance, user_initiated = _on_record(target)
    if policy is None:
        lifetime = clip(spans, target.lifetime.start, target.lifetime.end)
        return total(subtract(lifetime, [*maintenance, *user_initiated]))
    return sla_downtime(spans, maintenance, target.lifetime, policy, user_initiated)


def _on_record(target: TargetInput) -> tuple[list[Span], list[Span]]:
    """The target's maintenance (configured windows and the provider's maintenance the user
    accepted) and the provider's record of the user's own doing, before any policy."""
    assert target.lifetime is not None
    until = target.lifetime.end
    accepted = evidence.windows(target.events, until, "accepted_maintenance")
    user_initiated = evidence.windows(target.events, until, "user_initiated")
    return [*target.maintenance, *accepted], user_initiated


def _region_downtime(
    targets: Sequence[TargetInput], policies: Mapping[str, SlaPolicy]
) -> dict[tuple[str | None, str | None], list[Span]]:
    """Per provider and region: when at least the policy's number of zones holding our
    instances were down at once (a zone is down when all our instances in it are)."""
    groups: dict[tuple[str | None, str | None], list[TargetInput]] = defaultdict(list)
    for target in targets:
        policy = policies.get(target.sla or "")
        if policy is not None and policy.scope == "region":
            groups[(target.provider, target.region)].append(target)
    result = {}
    for key, members in groups.items():
        zones: dict[str, list[list[Span]]] = defaultdict(list)
        for member in members:
            # an instance down by the user's own doing, or in maintenance the user accepted,
            # does not make its zone down where its policy leaves that time out
            assert member.lifetime is not None
            own = evidence.excluded_spans(
                member.events, member.lifetime.end, policies[member.sla or ""]
            )
            zones[member.zone or member.name].append(subtract(_spans(member, "reachable"), own))
        zone_down = {zone: at_least(len(spans), spans) for zone, spans in zones.items()}
        # None: every zone holding our instances must be down (GCP multi-zone, Azure zones)
        min_zones = policies[members[0].sla or ""].region_min_zones
        result[key] = region_unavailable(zone_down, min_zones)
    return result


def _outage_facts(targets: Sequence[TargetInput]) -> list[OutageFact]:
    return [
        OutageFact(t.name, t.provider, t.region, t.zone, series, span.start, span.end)
        for t in targets
        for series, span, _ in t.outages
    ]


def _evidence(
    target: TargetInput,
    policy: SlaPolicy | None,
    facts: EventIndex,
    incidents: Sequence[IncidentFact],
    watched: int,
    providers: int,
) -> list[OutageRow]:
    """Each outage as a claim would cite it, counted only where we were watching, with the
    account events that overlap it as the provider's record of it."""
    assert target.lifetime is not None
    reach, known = _spans(target, "reachable"), _known(target)
    maintenance, user_initiated = _on_record(target)
    on_record = evidence.excluded_spans(target.events, target.lifetime.end, policy)
    taken = list(target.maintenance) if evidence.excludes(policy, "accepted_maintenance") else []
    rows = []
    for k, (series, raw, is_open) in enumerate(target.outages):
        seen = intersect([raw], known)
        if not seen:
            continue  # entirely in time we did not watch: unknown, not evidence
        span = Span(seen[0].start, seen[-1].end)
        if series == "usable" and any(r.start <= span.start and span.end <= r.end for r in reach):
            continue  # the usable copy of a reachable outage adds nothing
        fact = OutageFact(
            target.name, target.provider, target.region, target.zone, series, span.start, span.end
        )
        outside = subtract(seen, list(target.maintenance))
        counted = (
            sla_downtime(seen, maintenance, span, policy, user_initiated)
            if policy
            else total(subtract(seen, [*maintenance, *user_initiated]))
        )
        reachable_down = series == "usable" and _overlaps_any(span, reach)
        cause = classify(fact, facts.around(fact), incidents, watched, providers, reachable_down)
        stored = target.causes[k] if k < len(target.causes) else None
        if cause == "gpu_hardware" and stored in USABLE_CAUSES:
            cause = stored  # the probe knew why: a stalled step is the job's, not the GPUs'
        rows.append(
            OutageRow(
                start=span.start,
                end=None if is_open else span.end,
                duration_s=_seconds(seen),
                sla_counted_s=counted.total_seconds(),
                cause=cause,
                series=series,
                excluded_by_maintenance_s=_seconds(seen) - _seconds(outside),
                evidence=evidence.evidence(span, target.events),
                excluded_by_events_s=_seconds(subtract(intersect(seen, on_record), taken)),
            )
        )
    return rows


def _overlaps_any(span: Span, spans: Sequence[Span]) -> bool:
    return any(s.start < span.end and span.start < s.end for s in spans)


# --------------------------------------------------------------------------- providers


def _providers(
    inputs: ReportInputs,
    alive: Sequence[TargetInput],
    reports: Sequence[TargetReport],
    policies: Mapping[str, SlaPolicy],
) -> list[ProviderReport]:
    by_provider: dict[str, list[tuple[TargetInput, TargetReport]]] = defaultdict(list)
    for target, report in zip(alive, reports, strict=True):
        if target.provider:
            by_provider[target.provider].append((target, report))
    for incident in inputs.incidents:
        by_provider.setdefault(incident.provider, [])
    return [_provider(inputs, slug, rows, policies) for slug, rows in sorted(by_provider.items())]


def _provider(
    inputs: ReportInputs,
    slug: str,
    rows: Sequence[tuple[TargetInput, TargetReport]],
    policies: Mapping[str, SlaPolicy],
) -> ProviderReport:
    policy_name = _main_policy(slug, rows, inputs.provider_policies)
    policy = policies.get(policy_name or "")
    known = sum(r.observed_s for _, r in rows)
    counted = sum(r.sla_downtime_s for _, r in rows)
    spend = sum(_spend(r) for _, r in rows)
    credit = sum(r.credit_amount for _, r in rows)
    gpu_hours = sum(r.gpus * (r.observed_s + r.unknown_s) / HOUR for _, r in rows)
    lost = sum(r.gpu_hours_lost for _, r in rows)
    incidents = [
        i
        for i in inputs.incidents
        if i.provider == slug and i.started_at and i.started_at >= inputs.period.start
    ]
    tta = [_delta(i.started_at, i.acknowledged_at) for i in incidents]
    ttr = sorted(
        d for d in (_delta(i.started_at, i.resolved_at) for i in incidents) if d is not None
    )
    lags = [_lag(i, [t for t, _ in rows]) for i in incidents]
    first_outage = min((o.start for _, r in rows for o in r.outages), default=None)
    counted_outages = (
        (o.sla_counted_s, o.evidence)
        for _, r in rows
        if r.credit_pct > 0
        for o in r.outages
        if o.series == "reachable"
    )
    return ProviderReport(
        slug=slug,
        name=inputs.provider_names.get(slug, slug),
        sla=policy_name,
        target_pct=policy.target_pct if policy else None,
        uptime_pct=None if known <= 0 else max(0.0, min(100.0, 100 * (1 - counted / known))),
        credit_pct=100 * credit / spend
        if spend
        else max((r.credit_pct for _, r in rows), default=0.0),
        credit_amount=credit,
        claim_deadline=claim_deadline(
            policy, inputs.period.end, first_outage or inputs.period.start
        )
        if policy and credit > 0
        else None,
        observed_downtime_s=_seconds(merge([s for t, _ in rows for s in _spans(t, "reachable")])),
        acknowledged_downtime_s=_seconds(_incident_spans(incidents, inputs.period)),
        sla_downtime_s=counted,
        unknown_s=sum(r.unknown_s for _, r in rows),
        incidents=len(incidents),
        tta_median_s=_median(tta),
        ttr_median_s=_median(ttr),
        ttr_p90_s=percentile(ttr, 90),
        status_page_lag_median_s=_median(lags),
        spend=spend,
        gpu_hours=gpu_hours,
        gpu_hours_lost=lost,
        effective_price_per_gpu_hour=spend / (gpu_hours - lost) if gpu_hours - lost > 0 else None,
        **_provider_work([r for _, r in rows]),
        claim_event_ids=evidence.claim_event_ids(slug, counted_outages) if credit > 0 else (),
    )


def _provider_work(reports: Sequence[TargetReport]) -> dict[str, Any]:
    """The provider's effective price per million units of work, over its targets that report
    work in the unit most of them use (prices in different units do not add up)."""
    units = Counter(r.work_unit for r in reports if r.work_unit)
    if not units:
        return {}
    unit = units.most_common(1)[0][0]
    working = [r for r in reports if r.work_unit == unit]
    spend = sum(_spend(r) for r in working)
    done = sum(r.work_done for r in working)
    return {
        "work_unit": unit,
        "work_done": done,
        "effective_price_per_million": per_million(spend, done),
    }


def _spend(r: TargetReport) -> float:
    return r.hourly_price * (r.observed_s + r.unknown_s) / HOUR


def _work_rows(
    reports: Sequence[TargetReport], providers: Sequence[ProviderReport]
) -> list[WorkRow]:
    """Price / performance / stability per provider, instance type and unit of work."""
    groups: dict[tuple[str, str, str], list[TargetReport]] = defaultdict(list)
    for r in reports:
        if r.work_unit:
            groups[(r.provider or "", r.instance_type or "", r.work_unit)].append(r)
    ttr = {p.slug: p.ttr_median_s for p in providers}
    rows = []
    for (provider, instance_type, unit), members in sorted(groups.items()):
        observed = sum(r.observed_s for r in members)
        down = sum(r.downtime_s for r in members)
        unusable = sum(max(0.0, r.usable_downtime_s - r.downtime_s) for r in members)
        spend = sum(_spend(r) for r in members)
        work = sum(r.work_done for r in members)
        nominal_work = sum((r.nominal_rate or 0.0) * (r.observed_s + r.unknown_s) for r in members)
        rows.append(
            WorkRow(
                provider=provider or None,
                instance_type=instance_type or None,
                work_unit=unit,
                targets=len(members),
                availability_pct=100 * (1 - down / observed) if observed > 0 else None,
                usable_pct=100 * (1 - (down + unusable) / observed) if observed > 0 else None,
                ttr_median_s=ttr.get(provider),
                downtime_s=down,
                unusable_s=unusable,
                slow_s=sum(r.slow_s for r in members),
                spend=spend,
                work_done=work,
                list_price_per_million=per_million(spend, nominal_work),
                effective_price_per_million=per_million(spend, work),
            )
        )
    return rows


def _ledger_row(line: LedgerLine) -> LedgerRow:
    rate = line.interruptions
    return LedgerRow(
        provider=line.provider,
        instance_type=line.instance_type,
        capacity=line.capacity,
        instances=line.instances,
        instance_hours=line.instance_hours,
        preemptions=line.preemptions,
        provider_ends=line.provider_ends,
        ended=line.ended,
        median_lifetime_h=line.median_lifetime_h,
        per_1000h=rate.per_1000h,
        low=rate.low,
        high=rate.high,
        small_sample=rate.small_sample,
    )


def _with_spot_rates(rows: list[ProviderReport], inputs: ReportInputs) -> list[ProviderReport]:
    """Each provider's spot interruptions per 1,000 instance-hours: its spot lines together."""
    found = []
    for row in rows:
        spot = combined(
            line for line in inputs.ledger if line.provider == row.slug and line.capacity == "spot"
        )
        per_1000h = spot.per_1000h if spot is not None else None
        found.append(replace(row, spot_interruptions_per_1000h=per_1000h))
    return found


def _main_policy(
    slug: str,
    rows: Sequence[tuple[TargetInput, TargetReport]],
    configured: Mapping[str, str | None],
) -> str | None:
    used = Counter(t.sla for t, _ in rows if t.sla)
    return used.most_common(1)[0][0] if used else configured.get(slug)


def _incident_spans(incidents: Sequence[IncidentInput], period: Span) -> list[Span]:
    spans = [
        Span(i.started_at, i.resolved_at or period.end)
        for i in incidents
        if i.started_at and (i.resolved_at or period.end) > i.started_at
    ]
    return merge(clip(spans, period.start, period.end))


def _delta(start: datetime | None, end: datetime | None) -> float | None:
    return None if start is None or end is None else max(0.0, (end - start).total_seconds())


def _lag(incident: IncidentInput, targets: Sequence[TargetInput]) -> float | None:
    """Acknowledged − our earliest detection (outage on an affected target, start, first seen)."""
    if incident.acknowledged_at is None or incident.started_at is None:
        return None
    window_end = incident.resolved_at or incident.acknowledged_at
    probe_starts = [
        span.start
        for t in targets
        if not incident.regions or t.region in incident.regions
        for s, span, _ in t.outages
        if s == "reachable"
        and span.start <= window_end
        and span.end >= incident.started_at - timedelta(hours=1)
    ]
    detected = min([*probe_starts, incident.started_at, incident.first_seen_at])
    return (incident.acknowledged_at - detected).total_seconds()


def _median(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return median(present) if present else None


def _rank(rows: list[ProviderReport]) -> list[ProviderReport]:
    """Scorecard: the cheapest unit of training work actually delivered first (where providers
    report work in the same unit: downtime, unusable GPUs and slowdowns are priced in), then
    measured availability, faster resolution and cheaper available GPU-hours."""
    units = Counter(p.work_unit for p in rows if p.effective_price_per_million is not None)
    unit = units.most_common(1)[0][0] if units else None

    def key(p: ProviderReport) -> tuple[float, float, float, float]:
        per_unit = p.effective_price_per_million if p.work_unit == unit else None
        return (
            per_unit if per_unit is not None else float("inf"),
            -(p.uptime_pct if p.uptime_pct is not None else -1.0),
            p.ttr_median_s if p.ttr_median_s is not None else float("inf"),
            p.effective_price_per_gpu_hour or float("inf"),
        )

    ranked = sorted((p for p in rows if p.uptime_pct is not None), key=key)
    order = {p.slug: n for n, p in enumerate(ranked, start=1)}
    return [replace(p, rank=order.get(p.slug)) for p in rows]


# --------------------------------------------------------------------------- pools, incidents


def _pools(inputs: ReportInputs, alive: Sequence[TargetInput]) -> list[PoolReport]:
    members: dict[str, list[TargetInput]] = defaultdict(list)
    for target in alive:
        if target.pool:
            members[target.pool].append(target)
    names = sorted(set(members) | set(inputs.pools))
    return [
        _pool(name, members.get(name, []), inputs.pools.get(name, 1), inputs.period)
        for name in names
    ]


def _pool(name: str, members: Sequence[TargetInput], min_up: int, period: Span) -> PoolReport:
    known = merge([s for m in members for s in _known(m)])
    unknown = (period.end - period.start) - total(known)
    if not members or not known:
        return PoolReport(name, len(members), min_up, None, unknown.total_seconds())
    outages = [_spans(m, "reachable") for m in members]
    share = pool_availability(outages, min_up, period)
    return PoolReport(name, len(members), min_up, 100 * share, unknown.total_seconds())


def _incident_fact(incident: IncidentInput, period_end: datetime) -> IncidentFact:
    start = incident.started_at or incident.first_seen_at
    return IncidentFact(
        incident.provider, incident.regions, start, incident.resolved_at or period_end
    )


def _incident_row(incident: IncidentInput, targets: Sequence[TargetInput]) -> IncidentRow:
    return IncidentRow(
        provider=incident.provider,
        source_id=incident.source_id,
        title=incident.title,
        impact=incident.impact,
        started_at=incident.started_at,
        resolved_at=incident.resolved_at,
        regions=incident.regions,
        tta_s=_delta(incident.started_at, incident.acknowledged_at),
        ttr_s=_delta(incident.started_at, incident.resolved_at),
        status_page_lag_s=_lag(incident, [t for t in targets if t.provider == incident.provider]),
        url=incident.url,
    )


# --------------------------------------------------------------------------- accounting


def _accounting(
    inputs: ReportInputs, policies: Mapping[str, SlaPolicy], alive: Sequence[TargetInput]
) -> dict[str, Any]:
    """Every setting the numbers depend on, so a report can be reproduced and compared."""
    used = sorted(
        {t.sla for t in alive if t.sla} | {p for p in inputs.provider_policies.values() if p}
    )
    return {
        "version": ACCOUNTING_VERSION,
        "period": [inputs.period.start.isoformat(), inputs.period.end.isoformat()],
        "unknown_time": "excluded from the uptime denominator and reported apart, never as up",
        "observed_downtime": "reachable-series outage intervals confirmed by slamon's probes",
        "acknowledged_downtime": "relevant provider incidents (not maintenance), start to resolve",
        "provider_ledgers": "wall-clock union over the provider's targets; uptime fleet-weighted",
        "account_events": (
            "an account event about a target whose window overlaps an outage is its evidence; "
            "its overlap with the outage is left out of SLA downtime where the policy says: "
            "user_initiated under exclude_user_initiated, scheduled_maintenance the user "
            "accepted under exclude_maintenance; each second once"
        ),
        "training_impact": "usable-series downtime x GPUs (GPU-hours) and x hourly price (money)",
        "interruption_ledger": (
            f"(preempted + provider ends) per {PER_HOURS:g} instance-hours, exact "
            f"{CONFIDENCE:.0%} Poisson interval; small sample under {SMALL_SAMPLE_HOURS:g} "
            f"instance-hours or {SMALL_SAMPLE_EVENTS} interruptions"
        ),
        "policies": {name: policies[name].to_json() for name in used if name in policies},
        "maintenance": sorted(
            {f"{m.start.isoformat()}/{m.end.isoformat()}" for t in alive for m in t.maintenance}
        ),
    }


def _hash(accounting: Mapping[str, Any]) -> str:
    canonical = json.dumps(accounting, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _notes(inputs: ReportInputs, targets: Sequence[TargetReport]) -> list[str]:
    notes = []
    if not targets:
        notes.append("No targets were watched in this period: there is nothing to report on.")
    blind = [t.name for t in targets if t.uptime_pct is None]
    if blind:
        notes.append(
            f"{len(blind)} target(s) have no data for the period, so their uptime is "
            f"unknown (not 100%): {', '.join(blind[:10])}{'…' if len(blind) > 10 else ''}"
        )
    if inputs.period.end < month_bounds(inputs.month)[1]:
        notes.append(
            f"The month is still running: figures cover it up to {inputs.period.end.isoformat()}."
        )
    return notes
