"""SLA arithmetic: from outage spans and maintenance windows to uptime, credits and budgets.

Pure functions over ``Span`` lists and ``SlaPolicy`` values; no I/O. Percentages are floats in
[0, 100]; they are computed from exact integer microseconds (``fractions.Fraction``) and rounded
once, so an uptime exactly on a tier boundary (216 minutes down in a 30-day month is exactly
99.5 %) compares equal to the tier's threshold instead of landing a hair either side.

Months are bounded in ``monitor.sla.months``; incident response times (time to acknowledge,
to resolve, status-page lag) are in ``monitor.sla.response``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from fractions import Fraction

from monitor.sla.intervals import Span, at_least, clip, merge, subtract, total
from monitor.sla.months import add_months
from monitor.sla.policy import SlaPolicy

_MINUTE = timedelta(minutes=1)
_HOUR_S = 3600.0


def sla_downtime(
    outages: Sequence[Span],
    maintenance: Sequence[Span],
    period: Span,
    policy: SlaPolicy,
    user_initiated: Sequence[Span] = (),
) -> timedelta:
    """The downtime ``policy`` counts in ``period``.

    Steps: clip the outages to the period and merge overlaps (one downtime period per merged
    span); subtract what the policy excludes: ``maintenance`` (configured windows and the
    provider's maintenance the user accepted) under ``exclude_maintenance``, ``user_initiated``
    (the provider's record of the user's own doing) under ``exclude_user_initiated``; all of
    them are merged first, so two overlapping windows never remove the same time twice; then
    measure each remaining downtime period on its own: one shorter than ``min_downtime_s``
    counts nothing, and under ``"whole_minutes"`` only its whole minutes count (floored per
    period).

    Per-period flooring is our reading of Google's "Downtime Period: one or more consecutive
    minutes of Downtime; partial minutes … not counted": a 90-second outage counts one minute,
    wherever it falls on the clock. Flooring the month's total instead would let many short
    blips add up to minutes the terms exclude; aligning to clock minutes would make the same
    outage count 0 or 1 minute depending on its start second.
    """
    spans = clip(outages, period.start, period.end)
    spans = subtract(spans, excluded(policy, maintenance, user_initiated))
    return sum((_measured(span.duration, policy) for span in spans), timedelta(0))


def excluded(
    policy: SlaPolicy, maintenance: Sequence[Span], user_initiated: Sequence[Span] = ()
) -> list[Span]:
    """The time ``policy`` leaves out of downtime, merged: ``maintenance`` when it excludes
    maintenance, ``user_initiated`` when it excludes the user's own doing."""
    spans = [*(maintenance if policy.exclude_maintenance else ())]
    spans.extend(user_initiated if policy.exclude_user_initiated else ())
    return merge(spans)


def _measured(downtime: timedelta, policy: SlaPolicy) -> timedelta:
    if downtime.total_seconds() < policy.min_downtime_s:
        return timedelta(0)
    if policy.measurement == "whole_minutes":
        return (downtime // _MINUTE) * _MINUTE
    return downtime


def uptime_pct(
    unavailable: timedelta, period_length: timedelta, unknown: timedelta = timedelta(0)
) -> float | None:
    """``100 × (1 − unavailable / (period − unknown))``, clamped to [0, 100].

    Unknown time (no data, our own monitor down) is left out of the denominator rather than
    counted as up. ``None`` when nothing is known (``period − unknown ≤ 0``): a report must say
    "no data", never 100 %.
    """
    known = _us(period_length) - _us(unknown)
    if known <= 0:
        return None
    share_up = 1 - Fraction(_us(unavailable), known)
    return float(min(Fraction(100), max(Fraction(0), 100 * share_up)))


def credit_pct(uptime: float | None, policy: SlaPolicy) -> float:
    """The credit owed: the highest ``credit_pct`` among tiers whose ``below_pct`` the uptime is
    strictly below; 0 when none applies or the uptime is unknown (``None``)."""
    if uptime is None:
        return 0.0
    return max((t.credit_pct for t in policy.tiers if uptime < t.below_pct), default=0.0)


def error_budget(policy: SlaPolicy, period_length: timedelta) -> timedelta:
    """The downtime the target allows in ``period_length`` (43.2 min for 99.9 % of 30 days),
    rounded to the microsecond."""
    allowed = 1 - _exact_pct(policy.target_pct) / 100
    return timedelta(microseconds=round(allowed * _us(period_length)))


def budget_left(policy: SlaPolicy, period_length: timedelta, unavailable: timedelta) -> timedelta:
    """Error budget minus downtime so far; negative once the target is missed."""
    return error_budget(policy, period_length) - unavailable


def burn_rate(unavailable_in_window: timedelta, window: timedelta, target_pct: float) -> float:
    """How fast ``window`` spent the error budget: its downtime share over the allowed share.

    1.0 spends the budget at exactly the pace that empties it at the end of the period; 14.4
    over one hour of a 30-day 99.9 % budget burns 2 % of the month's budget in that hour. A
    100 % target has no budget: any downtime burns at ``inf``, none at 0. Raises ``ValueError``
    for an empty window.
    """
    if window <= timedelta(0):
        raise ValueError(f"burn_rate: window must be positive, got {window}")
    allowed = 1 - _exact_pct(target_pct) / 100
    spent = Fraction(_us(unavailable_in_window), _us(window))
    if allowed <= 0:
        return float("inf") if spent > 0 else 0.0
    return float(spent / allowed)


def region_unavailable(
    zone_outages: Mapping[str, Sequence[Span]], min_zones: int | None
) -> list[Span]:
    """When at least ``min_zones`` of the zones holding the user's instances were down at once.

    ``zone_outages`` maps each such zone to the spans when that zone was down for the user (all
    the user's instances in it down; the caller decides). ``min_zones=None`` means every zone
    (Google's "all applicable running instances"; Azure's "no connectivity in the region").
    Fewer zones than ``min_zones`` can never make the region unavailable: ``[]``.
    """
    zones = list(zone_outages.values())
    if not zones:
        return []
    return at_least(len(zones) if min_zones is None else min_zones, zones)


def pool_downtime(member_outages: Sequence[Sequence[Span]], k: int, period: Span) -> list[Span]:
    """The times in ``period`` when fewer than ``k`` of the n members were up, i.e. when
    ``n − k + 1`` or more were down. Raises ``ValueError`` unless ``1 ≤ k ≤ n``."""
    n = len(member_outages)
    if not 1 <= k <= n:
        raise ValueError(f"pool: k must be between 1 and the {n} members, got {k}")
    clipped = [clip(member, period.start, period.end) for member in member_outages]
    return at_least(n - k + 1, clipped)


def pool_availability(member_outages: Sequence[Sequence[Span]], k: int, period: Span) -> float:
    """The share of ``period`` (0.0–1.0, not a percentage) when at least ``k`` of the n members
    were up. Raises ``ValueError`` unless ``1 ≤ k ≤ n``."""
    down = total(pool_downtime(member_outages, k, period))
    return float(1 - Fraction(_us(down), _us(period.duration)))


def gpu_hours_lost(outages: Sequence[Span], gpus: int) -> float:
    """Training impact: hours of (merged) outage × the instance's GPUs."""
    return total(outages).total_seconds() / _HOUR_S * gpus


def cost_lost(gpu_hours: float, hourly_price_per_instance: float, gpus: int) -> float:
    """Money lost: outage hours (``gpu_hours / gpus``) × the instance's hourly price.

    The price is per instance, not per GPU, so the GPU count divides back out. An instance with
    no GPUs has lost no GPU-hours and so, by this measure, no money; price its downtime as
    ``total(outages)`` hours × price instead. Raises ``ValueError`` for GPU-hours without GPUs.
    """
    if gpus <= 0:
        if gpu_hours:
            raise ValueError(f"cost_lost: {gpu_hours} GPU-hours on an instance with {gpus} GPUs")
        return 0.0
    return gpu_hours / gpus * hourly_price_per_instance


def claim_deadline(
    policy: SlaPolicy, period_end: datetime, incident_at: datetime | None = None
) -> datetime | None:
    """The instant (UTC, exclusive) by which a credit claim must reach the provider.

    ``end_of_month_after_incident:N``: the start of the month after the N-th calendar month
    following the incident's month (incident 15 March, N=2 → claims before 1 June 00:00 UTC).
    ``days_after_period:N``: ``period_end`` + N days (``period_end`` exclusive, e.g. 1 May 00:00
    for April). Without ``incident_at`` the incident is taken to be in the period's last month.
    Billing cycles are taken as UTC calendar months. ``None`` when the policy has no claim rule.
    """
    rule = policy.claim_deadline
    if rule is None:
        return None
    end = period_end.astimezone(UTC)
    if rule.kind == "days_after_period":
        return end + timedelta(days=rule.count)
    incident = (incident_at or end - timedelta(microseconds=1)).astimezone(UTC)
    month_start = incident.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    return add_months(month_start, rule.count + 1)


def _us(delta: timedelta) -> int:
    """A timedelta as exact integer microseconds."""
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _exact_pct(pct: float) -> Fraction:
    """The decimal a percentage was written as (99.99, not the binary float nearest to it)."""
    return Fraction(Decimal(repr(pct)))
