"""What the read routes take and answer: the shared query types (times, months, paging) and
the response models of providers, incidents, outages, alerts, channels, vantages and the SLA.

Every list answers one page, ``{"items", "total", "limit", "offset", "next_offset"}``, in a
stable order (``next_offset`` is null on the last page). Times in filters are ISO 8601 with an
offset; a naive or malformed time is a 422 naming the parameter.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import Query
from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    Field,
    StringConstraints,
)

from monitor.api.targets import MAX_LIMIT, MAX_OFFSET
from monitor.sla.months import month_bounds

# --------------------------------------------------------------------------- what they take


def _in_utc(value: datetime) -> datetime:
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ValueError("the time is out of range once converted to UTC") from None


def reportable_month(value: str | None) -> str | None:
    """``value`` unchanged when slamon can report on that month; ValueError otherwise."""
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


# --------------------------------------------------------------------------- what they answer


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


class ChannelOut(BaseModel):
    name: str
    kind: str
    state: Literal["enabled", "disabled"]
    enabled: bool
    disabled_at: datetime | None
    last_error: str | None
    configured: bool


class VantageOut(BaseModel):
    vantage: str
    state: Literal["agrees", "disagrees", "blind", "unknown"]
    last_probe_at: datetime | None
    targets: int
    disagreeing: int
    last_agreed_at: datetime | None
    blind_since: datetime | None


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
    observed_uptime_pct: float | None = Field(
        description="what was seen, before any policy: 100 x (1 - downtime_s / observed_s); "
        "null without observed time (the status page, /metrics and Grafana show this figure)"
    )
    slow_s: float = Field(
        description="time up and usable but slower than the training job's own trailing "
        "median (training_slowdown), from its heartbeats"
    )


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


class DiscoverySourceOut(BaseModel):
    name: str
    kind: str
    state: Literal["ok", "degraded", "failing", "unknown"]
    every: float
    last_swept_at: datetime | None
    last_success_at: datetime | None
    consecutive_failures: int
    last_error: str | None
    instances: int  # listed by the last good sweep
