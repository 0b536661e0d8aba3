"""The monthly report as data: one model, four renderers (HTML, PDF, CSV, JSON).

Numbers are plain floats/ints and times aware UTC datetimes; ``None`` means "not known" (a
target with no data has ``uptime_pct = None``, never 100).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True, slots=True)
class EvidenceRow:
    """An account event about an outage's target whose window overlaps the outage: the
    provider's own record of it (``monitor/history/account_events.py``)."""

    event_id: str  # the provider's key: an AWS Health event ARN, an Azure status id …
    provider: str
    kind: str  # scheduled_maintenance | retirement | preemption | issue | user_initiated
    source: str  # the account event source: aws_health, ec2_events, azure_resource_health …
    title: str  # the provider's words
    detail: str
    start: datetime
    end: datetime | None  # None: still open


@dataclass(frozen=True, slots=True)
class ExclusionRow:
    """Downtime the target's SLA policy leaves out on the provider's record: the part of an
    outage inside an account event's window, each second under one event only (the first to
    start), and none already inside a configured maintenance window the policy excludes."""

    start: datetime
    end: datetime
    seconds: float
    reason: str  # user_initiated | accepted_maintenance
    event_id: str
    provider_words: str  # the event's title and detail


@dataclass(frozen=True, slots=True)
class OutageRow:
    """One outage as evidence: when, how long, what the policy counted, and why."""

    start: datetime
    end: datetime | None  # None: still open at report time (counted up to the report's end)
    duration_s: float
    sla_counted_s: float
    # provider_wide | regional | single_instance | gpu_hardware | stalled_step |
    # gpu_hardware+stalled_step | vantage | unknown
    cause: str
    series: str = "reachable"
    excluded_by_maintenance_s: float = 0.0  # inside a configured maintenance window
    # the account events about the target that overlap it (the provider's own record), and
    # the time the policy leaves out on that record (user-initiated, accepted maintenance)
    evidence: tuple[EvidenceRow, ...] = ()
    excluded_by_events_s: float = 0.0


@dataclass(frozen=True, slots=True)
class TargetReport:
    name: str
    provider: str | None
    region: str | None
    zone: str | None
    pool: str | None
    sla: str | None
    gpus: int
    hourly_price: float
    observed_s: float  # the part of the month the target existed and we watched it
    unknown_s: float  # existed, but we did not know (no data, our monitor down)
    downtime_s: float  # observed ledger: our probes, reachable series
    sla_downtime_s: float  # what the target's SLA policy counts
    usable_downtime_s: float  # training's ledger: reachable and all GPUs healthy
    uptime_pct: float | None  # as the policy counts it; None without data
    target_pct: float | None
    credit_pct: float
    credit_amount: float  # credit_pct of what the target cost in the period (its own credit)
    gpu_hours_lost: float
    cost_lost: float
    outages: tuple[OutageRow, ...] = ()
    instance_type: str | None = None
    slow_s: float = 0.0  # training_slowdown time: up and usable, but slower than its own median
    # work: what the training job on it reported (heartbeats' throughput), in ``work_unit``
    work_unit: str | None = None  # samples | tokens; None: no throughput reported
    work_done: float = 0.0  # units processed in the period
    nominal_rate: float | None = None  # its median throughput, units a second
    list_price_per_million: float | None = None  # hourly price at the nominal rate, per M units
    effective_price_per_million: float | None = None  # what it cost / what it processed, per M
    # what was seen, before any policy: 100 x (1 - downtime_s / observed_s); None without data.
    # /metrics, /api/v1/sla, the status page and the dashboards show this figure per target.
    observed_uptime_pct: float | None = None
    # the time the policy left out of sla_downtime_s on the provider's record, and why
    exclusions: tuple[ExclusionRow, ...] = ()


@dataclass(frozen=True, slots=True)
class IncidentRow:
    """A provider incident that touched the user's regions/components."""

    provider: str
    source_id: str
    title: str
    impact: str
    started_at: datetime | None
    resolved_at: datetime | None
    regions: tuple[str, ...]
    tta_s: float | None
    ttr_s: float | None
    status_page_lag_s: float | None
    url: str | None


@dataclass(frozen=True, slots=True)
class ProviderReport:
    slug: str
    name: str
    sla: str | None
    target_pct: float | None
    uptime_pct: float | None  # SLA-eligible uptime at the policy's scope
    credit_pct: float
    credit_amount: float  # credit_pct of the month's spend on this provider's targets
    claim_deadline: datetime | None
    observed_downtime_s: float  # ledger 1: our probes
    acknowledged_downtime_s: float  # ledger 2: the provider's own incidents for our regions
    sla_downtime_s: float  # ledger 3: what the policy counts
    unknown_s: float
    incidents: int
    tta_median_s: float | None
    ttr_median_s: float | None
    ttr_p90_s: float | None
    status_page_lag_median_s: float | None
    spend: float
    gpu_hours: float
    gpu_hours_lost: float
    effective_price_per_gpu_hour: float | None  # spend / available GPU-hours
    rank: int | None = None
    work_unit: str | None = None  # the unit of work_done and effective_price_per_million
    work_done: float = 0.0  # over its targets that report in work_unit
    effective_price_per_million: float | None = None  # spend on working targets / their work
    # the stability leg for spot capacity: preemptions and provider ends of this provider's spot
    # instances per 1,000 instance-hours (the ledger's spot lines together); None: none observed
    spot_interruptions_per_1000h: float | None = None
    # the claim's evidence on the provider's record: the ids of this provider's account events
    # about the outages the credit counts (of targets owed a credit); empty without a credit
    claim_event_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class WorkRow:
    """Price / performance / stability for one provider and instance type: what a unit of
    training work actually cost, with the hours lost to downtime, unusable GPUs and slowdowns
    priced in, beside what it would have cost at the list price and the job's usual speed."""

    provider: str | None
    instance_type: str | None
    work_unit: str
    targets: int
    availability_pct: float | None  # observed reachable uptime of these targets
    usable_pct: float | None
    ttr_median_s: float | None  # the provider's incidents' time to resolve
    downtime_s: float
    unusable_s: float  # reachable, GPUs or progress not (usable downtime beyond downtime)
    slow_s: float
    spend: float
    work_done: float
    list_price_per_million: float | None
    effective_price_per_million: float | None


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """The interruption ledger for one provider, instance type and capacity class: how often its
    instances were taken away (preempted, or ended by the provider) per 1,000 instance-hours,
    with the exact 95 % Poisson interval (``monitor/sla/interruptions.py``)."""

    provider: str | None
    instance_type: str | None
    capacity: str  # on-demand | spot | reserved | unknown
    instances: int
    instance_hours: float  # the hours its instances existed in the period
    preemptions: int  # lives ended in the period by ``preempted``
    provider_ends: int  # lives ended in the period by ``provider``
    ended: int  # lives ended in the period, any cause
    median_lifetime_h: float | None  # of the lives that ended in the period, birth to end
    per_1000h: float | None  # (preemptions + provider_ends) per 1,000 instance-hours
    low: float | None  # the 95 % interval's bounds, per 1,000 instance-hours
    high: float | None
    small_sample: bool  # under 1,000 instance-hours or 3 interruptions: the interval is wide


@dataclass(frozen=True, slots=True)
class PoolReport:
    name: str
    members: int
    min_up: int
    availability_pct: float | None  # share of time at least min_up members were up
    unknown_s: float


@dataclass(frozen=True, slots=True)
class MonthlyReport:
    month: str  # YYYY-MM
    period_start: datetime
    period_end: datetime  # exclusive; the report's "now" when the month is still running
    generated_at: datetime
    policy: dict[str, Any]  # the accounting policy: every setting the numbers depend on
    policy_hash: str
    providers: tuple[ProviderReport, ...] = ()
    targets: tuple[TargetReport, ...] = ()
    pools: tuple[PoolReport, ...] = ()
    incidents: tuple[IncidentRow, ...] = ()
    notes: tuple[str, ...] = field(default=())  # e.g. "no probe data at all this month"
    work: tuple[WorkRow, ...] = ()
    ledger: tuple[LedgerRow, ...] = ()
