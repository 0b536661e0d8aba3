"""Tests for the SLA arithmetic (monitor/sla/math.py): worked examples from each provider's
terms, every tier boundary, month edges, maintenance, DST, and properties."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitor.sla import response
from monitor.sla.intervals import Span
from monitor.sla.math import (
    budget_left,
    burn_rate,
    claim_deadline,
    cost_lost,
    credit_pct,
    error_budget,
    gpu_hours_lost,
    pool_availability,
    pool_downtime,
    region_unavailable,
    sla_downtime,
    uptime_pct,
)
from monitor.sla.months import month_period
from monitor.sla.policy import SlaPolicy
from monitor.sla.policy_config import policy_from_config
from monitor.sla.response import status_page_lag, time_to_acknowledge, time_to_resolve
from monitor.sla.terms import BUILTIN_POLICIES

APRIL = month_period("2026-04")  # 30 days = 43,200 minutes
MAY = month_period("2026-05")  # 31 days = 44,640 minutes
MONTHS = {"30-day": APRIL, "31-day": MAY}
MIN = timedelta(minutes=1)
SEC = timedelta(seconds=1)


def down(period: Span, length: timedelta, at_minute: int = 600) -> Span:
    """An outage of ``length`` starting ``at_minute`` minutes into ``period``."""
    start = period.start + at_minute * MIN
    return Span(start, start + length)


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


def monthly(policy: SlaPolicy, period: Span, outages: list[Span]) -> tuple[float | None, float]:
    """Uptime % and credit % for an instance policy in ``period``."""
    uptime = uptime_pct(sla_downtime(outages, [], period, policy), period.duration)
    return uptime, credit_pct(uptime, policy)


def continuous(policy: SlaPolicy) -> SlaPolicy:
    return dataclasses.replace(policy, measurement="continuous", min_downtime_s=0)


# --- worked examples, one table per provider -------------------------------------------------


@pytest.mark.parametrize(
    ("month", "length", "uptime", "credit"),
    [
        pytest.param("30-day", 216 * MIN, 99.5, 0, id="30d-216min-exactly-99.5-no-credit"),
        pytest.param("30-day", 216 * MIN + SEC, 99.49996141975309, 10, id="30d-216min1s-10pct"),
        pytest.param("30-day", 432 * MIN, 99.0, 10, id="30d-432min-exactly-99-still-10pct"),
        pytest.param("30-day", 432 * MIN + SEC, 98.99996141975309, 30, id="30d-432min1s-30pct"),
        pytest.param("30-day", 36 * 60 * MIN, 95.0, 30, id="30d-36h-exactly-95-still-30pct"),
        pytest.param("30-day", 36 * 60 * MIN + SEC, 94.99996141975309, 100, id="30d-36h1s-100"),
        pytest.param("31-day", 223 * MIN + 12 * SEC, 99.5, 0, id="31d-223min12s-exactly-99.5"),
        pytest.param("31-day", 223 * MIN + 13 * SEC, 99.49996266427718, 10, id="31d-223min13s"),
        pytest.param("31-day", 216 * MIN + SEC, 99.51609169653524, 0, id="31d-30d-breach-is-ok"),
    ],
)
def test_aws_instance_level_worked_examples(
    month: str, length: timedelta, uptime: float, credit: float
) -> None:
    period = MONTHS[month]
    policy = BUILTIN_POLICIES["aws-ec2-instance"]
    assert monthly(policy, period, [down(period, length)]) == (uptime, credit)


def zone_downtime(
    period: Span, zones: dict[str, list[tuple[int, timedelta]]], min_zones: int | None
) -> list[Span]:
    outages = {z: [down(period, length, at) for at, length in spans] for z, spans in zones.items()}
    return region_unavailable(outages, min_zones)


@pytest.mark.parametrize(
    ("month", "zones", "counted", "credit"),
    [
        pytest.param(
            "30-day",
            {"a": [(600, 30 * MIN)], "b": [(610, 10 * MIN)], "c": []},
            10 * MIN,
            10,
            id="two-azs-overlap-10min-10pct",
        ),
        pytest.param(
            "30-day", {"a": [(600, 48 * 60 * MIN)], "b": [], "c": []}, 0 * MIN, 0, id="one-az-only"
        ),
        pytest.param(
            "30-day",
            {"a": [(600, 259 * SEC + timedelta(milliseconds=200))], "b": [(600, 10 * MIN)]},
            259.2 * SEC,
            0,
            id="30d-259.2s-exactly-99.99",
        ),
        pytest.param(
            "30-day",
            {"a": [(600, 260 * SEC)], "b": [(600, 10 * MIN)]},
            260 * SEC,
            10,
            id="30d-260s-below-99.99",
        ),
        pytest.param(
            "31-day",
            {"a": [(600, 267 * SEC + timedelta(milliseconds=840))], "b": [(600, 10 * MIN)]},
            267.84 * SEC,
            0,
            id="31d-267.84s-exactly-99.99",
        ),
        pytest.param(
            "30-day",
            {"a": [(600, 433 * MIN)], "b": [(600, 433 * MIN)], "c": [(0, 5 * MIN)]},
            433 * MIN,
            30,
            id="30d-433min-30pct",
        ),
    ],
)
def test_aws_region_level_counts_only_two_or_more_azs_down_at_once(
    month: str, zones: dict[str, list[tuple[int, timedelta]]], counted: timedelta, credit: float
) -> None:
    period = MONTHS[month]
    policy = BUILTIN_POLICIES["aws-ec2-region"]
    region = zone_downtime(period, zones, policy.region_min_zones)
    downtime = sla_downtime(region, [], period, policy)
    assert downtime == counted
    assert credit_pct(uptime_pct(downtime, period.duration), policy) == credit


@pytest.mark.parametrize(
    ("month", "outages", "uptime", "credit"),
    [
        pytest.param("30-day", [43 * MIN + 59 * SEC], 100 * (1 - 43 / 43200), 0, id="30d-43m59s"),
        pytest.param("30-day", [44 * MIN], 100 * (1 - 44 / 43200), 10, id="30d-44min-10pct"),
        pytest.param("31-day", [44 * MIN + 59 * SEC], 100 * (1 - 44 / 44640), 0, id="31d-44m59s"),
        pytest.param("31-day", [45 * MIN], 100 * (1 - 45 / 44640), 10, id="31d-45min-10pct"),
        pytest.param("30-day", [59 * SEC] * 45, 100.0, 0, id="45-blips-of-59s-count-nothing"),
        pytest.param("30-day", [90 * SEC] * 44, 100 * (1 - 44 / 43200), 10, id="44x90s-44min"),
        pytest.param("30-day", [2160 * MIN], 95.0, 10, id="30d-2160min-exactly-95-still-10"),
        pytest.param("30-day", [2161 * MIN], 100 * (1 - 2161 / 43200), 25, id="30d-2161min-25"),
        pytest.param("30-day", [4320 * MIN], 90.0, 25, id="30d-4320min-exactly-90-still-25"),
        pytest.param("30-day", [4321 * MIN], 100 * (1 - 4321 / 43200), 100, id="30d-4321min-100"),
    ],
)
def test_gcp_single_instance_counts_whole_minutes_of_downtime_periods(
    month: str, outages: list[timedelta], uptime: float, credit: float
) -> None:
    period = MONTHS[month]
    spans = [down(period, length, at_minute=10 * i) for i, length in enumerate(outages)]
    got_uptime, got_credit = monthly(BUILTIN_POLICIES["gcp-compute-single-vm"], period, spans)
    assert got_uptime == pytest.approx(uptime, abs=1e-12)
    assert got_credit == credit


@pytest.mark.parametrize(
    ("zones", "counted", "credit"),
    [
        pytest.param(
            {"a": [(600, 30 * MIN)], "b": [(600, 4 * MIN + 59 * SEC)]}, 4 * MIN, 0, id="4min59s"
        ),
        pytest.param({"a": [(600, 30 * MIN)], "b": [(600, 5 * MIN)]}, 5 * MIN, 10, id="5min-10"),
        pytest.param({"a": [(0, 30 * MIN)], "b": [(600, 5 * MIN)]}, 0 * MIN, 0, id="never-both"),
        pytest.param({"a": [(0, 432 * MIN)], "b": [(0, 432 * MIN)]}, 432 * MIN, 10, id="99-is-10"),
        pytest.param({"a": [(0, 433 * MIN)], "b": [(0, 433 * MIN)]}, 433 * MIN, 25, id="433-25"),
        pytest.param({"a": [(0, 2160 * MIN)], "b": [(0, 2160 * MIN)]}, 2160 * MIN, 25, id="95"),
        pytest.param({"a": [(0, 2161 * MIN)], "b": [(0, 2161 * MIN)]}, 2161 * MIN, 50, id="2161"),
    ],
)
def test_gcp_multizone_counts_whole_minutes_when_every_zone_is_down(
    zones: dict[str, list[tuple[int, timedelta]]], counted: timedelta, credit: float
) -> None:
    policy = BUILTIN_POLICIES["gcp-compute-multizone"]
    region = zone_downtime(APRIL, zones, policy.region_min_zones)
    downtime = sla_downtime(region, [], APRIL, policy)
    assert downtime == counted
    assert credit_pct(uptime_pct(downtime, APRIL.duration), policy) == credit


@pytest.mark.parametrize(
    ("month", "minutes", "credit"),
    [
        pytest.param("30-day", 43, 0, id="30d-43min-99.9005"),
        pytest.param("30-day", 44, 10, id="30d-44min-99.8981"),
        pytest.param("31-day", 44, 0, id="31d-44min-99.9014"),
        pytest.param("31-day", 45, 10, id="31d-45min-99.8992"),
        pytest.param("30-day", 432, 10, id="30d-432min-exactly-99"),
        pytest.param("30-day", 433, 25, id="30d-433min"),
        pytest.param("30-day", 2160, 25, id="30d-2160min-exactly-95"),
        pytest.param("30-day", 2161, 100, id="30d-2161min"),
    ],
)
def test_azure_single_instance_premium_ssd_worked_examples(
    month: str, minutes: int, credit: float
) -> None:
    period = MONTHS[month]
    policy = BUILTIN_POLICIES["azure-vm-single-premium"]
    outage = down(period, minutes * MIN + 30 * SEC)  # the partial minute is not counted
    uptime, got = monthly(policy, period, [outage])
    assert uptime == pytest.approx(100 * (1 - minutes / (period.duration / MIN)), abs=1e-12)
    assert got == credit


@pytest.mark.parametrize(
    ("both_down", "credit"),
    [
        pytest.param(21 * MIN, 0, id="21min-99.9514"),
        pytest.param(22 * MIN, 10, id="22min-99.9491"),
        pytest.param(432 * MIN, 10, id="432min-exactly-99"),
        pytest.param(433 * MIN, 25, id="433min"),
    ],
)
def test_azure_availability_set_counts_time_with_no_vm_reachable(
    both_down: timedelta, credit: float
) -> None:
    policy = BUILTIN_POLICIES["azure-vm-availability-set"]
    vm1 = [down(APRIL, both_down + 2 * MIN, at_minute=598), down(APRIL, 3 * 60 * MIN, 2000)]
    vm2 = [down(APRIL, both_down)]  # inside vm1's first outage; vm1 alone down later
    no_vm = pool_downtime([vm1, vm2], 1, APRIL)
    downtime = sla_downtime(no_vm, [], APRIL, policy)
    assert downtime == both_down
    assert credit_pct(uptime_pct(downtime, APRIL.duration), policy) == credit


@pytest.mark.parametrize(
    ("zones", "credit"),
    [
        pytest.param({"1": 4, "2": 4, "3": 4}, 0, id="all-three-4min"),
        pytest.param({"1": 5, "2": 5, "3": 5}, 10, id="all-three-5min"),
        pytest.param({"1": 600, "2": 600, "3": 0}, 0, id="two-of-three-never-counts"),
    ],
)
def test_azure_zones_counts_only_no_connectivity_in_the_region(
    zones: dict[str, int], credit: float
) -> None:
    policy = BUILTIN_POLICIES["azure-vm-zones"]
    region = zone_downtime(
        APRIL, {z: [(600, m * MIN)] if m else [] for z, m in zones.items()}, None
    )
    uptime = uptime_pct(sla_downtime(region, [], APRIL, policy), APRIL.duration)
    assert credit_pct(uptime, policy) == credit


# --- every tier boundary of every built-in ---------------------------------------------------

BOUNDARIES = [
    pytest.param(name, month, i, id=f"{name}-{month}-below-{tier.below_pct}")
    for name, policy in sorted(BUILTIN_POLICIES.items())
    for i, tier in enumerate(policy.tiers)
    for month in MONTHS
]


def leaving_up(period: Span, pct: float) -> timedelta:
    """The downtime that leaves exactly ``pct`` % of ``period`` up (a whole microsecond count)."""
    us = Fraction(period.duration // timedelta(microseconds=1)) * (100 - Fraction(str(pct))) / 100
    assert us.denominator == 1
    return timedelta(microseconds=int(us))


@pytest.mark.parametrize(("name", "month", "index"), BOUNDARIES)
def test_uptime_exactly_at_a_tier_boundary_earns_only_the_tier_above(
    name: str, month: str, index: int
) -> None:
    policy, period = BUILTIN_POLICIES[name], MONTHS[month]
    tier = policy.tiers[index]
    at_boundary = leaving_up(period, tier.below_pct)
    above = policy.tiers[index - 1].credit_pct if index else 0.0
    exact = continuous(policy)  # the tier thresholds themselves, free of minute rounding
    assert monthly(exact, period, [down(period, at_boundary)]) == (tier.below_pct, above)
    uptime, credit = monthly(exact, period, [down(period, at_boundary + timedelta(microseconds=1))])
    assert uptime is not None
    assert uptime < tier.below_pct
    assert credit == tier.credit_pct


# --- month edges, open outages, maintenance, DST ---------------------------------------------


def test_an_outage_across_the_month_boundary_is_split_between_the_months() -> None:
    outage = Span(utc("2026-04-30T23:00:00+00:00"), utc("2026-05-01T01:30:00+00:00"))
    policy = BUILTIN_POLICIES["aws-ec2-instance"]
    assert sla_downtime([outage], [], APRIL, policy) == 60 * MIN
    assert sla_downtime([outage], [], MAY, policy) == 90 * MIN


def test_an_open_outage_closed_at_now_counts_up_to_now() -> None:
    now = utc("2026-05-10T12:00:00+00:00")
    period = Span(MAY.start, now)  # the month so far
    still_open = Span(utc("2026-05-10T11:15:00+00:00"), now)
    policy = BUILTIN_POLICIES["gcp-compute-single-vm"]
    downtime = sla_downtime([still_open], [], period, policy)
    assert downtime == 45 * MIN
    assert uptime_pct(downtime, period.duration) == pytest.approx(
        100 * (1 - 45 / (9.5 * 24 * 60)), abs=1e-12
    )


@pytest.mark.parametrize(
    ("maintenance", "counted"),
    [
        pytest.param([], 120, id="none"),
        pytest.param([(30, 90)], 60, id="one-window"),
        pytest.param([(30, 90), (60, 105)], 45, id="overlapping-windows-not-double-subtracted"),
        pytest.param([(30, 90), (30, 90)], 60, id="duplicate-windows"),
        pytest.param([(-60, 200)], 0, id="covering-window"),
        pytest.param([(200, 300)], 120, id="window-elsewhere"),
    ],
)
def test_maintenance_is_excluded_once(maintenance: list[tuple[int, int]], counted: int) -> None:
    outage = down(APRIL, 120 * MIN)
    windows = [Span(outage.start + a * MIN, outage.start + b * MIN) for a, b in maintenance]
    policy = BUILTIN_POLICIES["aws-ec2-instance"]
    assert sla_downtime([outage], windows, APRIL, policy) == counted * MIN


def test_maintenance_counts_when_the_policy_does_not_exclude_it() -> None:
    outage = down(APRIL, 120 * MIN)
    window = Span(outage.start, outage.end)
    policy = dataclasses.replace(BUILTIN_POLICIES["aws-ec2-instance"], exclude_maintenance=False)
    assert sla_downtime([outage], [window], APRIL, policy) == 120 * MIN


@pytest.mark.parametrize(
    ("exclude_user_initiated", "exclude_maintenance", "counted"),
    [
        pytest.param(True, True, 30, id="both-excluded-the-overlap-once"),
        pytest.param(True, False, 60, id="only-the-user-s-own-doing"),
        pytest.param(False, True, 70, id="only-maintenance"),
        pytest.param(False, False, 120, id="nothing-excluded"),
    ],
)
def test_the_user_s_own_doing_is_excluded_where_the_policy_says(
    exclude_user_initiated: bool, exclude_maintenance: bool, counted: int
) -> None:
    outage = down(APRIL, 120 * MIN)
    # minutes 20-70 maintenance, 50-110 the user's own restart: 50-70 in both, left out once
    maintenance = [Span(outage.start + 20 * MIN, outage.start + 70 * MIN)]
    restart = [Span(outage.start + 50 * MIN, outage.start + 110 * MIN)]
    policy = dataclasses.replace(
        BUILTIN_POLICIES["aws-ec2-instance"],
        exclude_user_initiated=exclude_user_initiated,
        exclude_maintenance=exclude_maintenance,
    )
    assert sla_downtime([outage], maintenance, APRIL, policy, restart) == counted * MIN


def test_maintenance_splits_a_downtime_period_and_each_piece_is_floored() -> None:
    outage = down(APRIL, 10 * MIN)
    window = Span(outage.start + 90 * SEC, outage.start + 3 * MIN)  # leaves 1m30s and 7m
    policy = BUILTIN_POLICIES["gcp-compute-single-vm"]
    assert sla_downtime([outage], [window], APRIL, policy) == 8 * MIN


@pytest.mark.parametrize(
    ("outages", "counted"),
    [
        pytest.param([(0, 50), (40, 90)], 60, id="overlapping-blips-merge-to-90s-one-minute"),
        pytest.param([(0, 50), (120, 170)], 0, id="separate-blips-count-nothing"),
        pytest.param([(0, 60), (60, 120)], 120, id="touching-minutes-join"),
        pytest.param([(0, 179)], 120, id="2m59s-is-two-minutes"),
    ],
)
def test_whole_minutes_are_counted_per_merged_downtime_period(
    outages: list[tuple[int, int]], counted: int
) -> None:
    start = APRIL.start + 600 * MIN
    spans = [Span(start + a * SEC, start + b * SEC) for a, b in outages]
    policy = BUILTIN_POLICIES["azure-vm-single-premium"]
    assert sla_downtime(spans, [], APRIL, policy) == counted * SEC


def test_a_minimum_downtime_period_drops_shorter_outages() -> None:
    policy = policy_from_config(
        {"name": "gpu", "provider": "gpu", "target_pct": 99, "min_downtime_s": 300}
    )
    spans = [down(APRIL, 4 * MIN + 59 * SEC, 0), down(APRIL, 5 * MIN, 100), down(APRIL, 6 * MIN)]
    assert sla_downtime(spans, [], APRIL, policy) == 11 * MIN


def test_dst_named_outages_are_counted_in_utc_months() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    # 1 Nov 00:00–01:00 in Berlin (CET, +01:00) is 31 Oct 23:00–24:00 UTC: all October.
    outage = Span(datetime(2026, 11, 1, 0, tzinfo=berlin), datetime(2026, 11, 1, 1, tzinfo=berlin))
    policy = BUILTIN_POLICIES["aws-ec2-instance"]
    assert sla_downtime([outage], [], month_period("2026-10"), policy) == 60 * MIN
    assert sla_downtime([outage], [], month_period("2026-11"), policy) == timedelta(0)
    # 29 Mar 01:30–03:30 in Berlin spans the spring-forward gap: one real hour, not two.
    spring = Span(
        datetime(2026, 3, 29, 1, 30, tzinfo=berlin), datetime(2026, 3, 29, 3, 30, tzinfo=berlin)
    )
    assert sla_downtime([spring], [], month_period("2026-03"), policy) == 60 * MIN


# --- uptime, credit, budget, burn ------------------------------------------------------------


@pytest.mark.parametrize(
    ("unavailable", "period", "unknown", "expected"),
    [
        pytest.param(0, 100, 0, 100.0, id="never-down"),
        pytest.param(100, 100, 0, 0.0, id="always-down"),
        pytest.param(25, 100, 0, 75.0, id="quarter-down"),
        pytest.param(25, 100, 50, 50.0, id="unknown-left-out-of-the-denominator"),
        pytest.param(80, 100, 50, 0.0, id="more-down-than-known-clamps-to-0"),
        pytest.param(0, 100, 100, None, id="nothing-known-is-none-not-100"),
        pytest.param(0, 100, 150, None, id="more-unknown-than-period"),
        pytest.param(0, 0, 0, None, id="empty-period"),
        pytest.param(-5, 100, 0, 100.0, id="negative-clamps-to-100"),
    ],
)
def test_uptime_pct(unavailable: int, period: int, unknown: int, expected: float | None) -> None:
    assert uptime_pct(unavailable * MIN, period * MIN, unknown * MIN) == expected


def test_unknown_uptime_earns_no_credit() -> None:
    assert credit_pct(None, BUILTIN_POLICIES["aws-ec2-instance"]) == 0.0


def test_the_highest_applicable_credit_wins_whatever_order_tiers_were_written_in() -> None:
    policy = policy_from_config(
        {
            "name": "gpu",
            "provider": "gpu",
            "target_pct": 99.9,
            "tiers": [
                {"below_pct": 90, "credit_pct": 100},
                {"below_pct": 99.9, "credit_pct": 10},
                {"below_pct": 99, "credit_pct": 25},
            ],
        }
    )
    assert [credit_pct(u, policy) for u in (99.95, 99.5, 95.0, 50.0)] == [0, 10, 25, 100]


@pytest.mark.parametrize(
    ("name", "month", "budget"),
    [
        pytest.param("aws-ec2-instance", "30-day", 216 * MIN, id="99.5-30d-3h36m"),
        pytest.param("aws-ec2-instance", "31-day", 223 * MIN + 12 * SEC, id="99.5-31d"),
        pytest.param("gcp-compute-single-vm", "30-day", 43 * MIN + 12 * SEC, id="99.9-30d"),
        pytest.param("azure-vm-availability-set", "30-day", 21 * MIN + 36 * SEC, id="99.95-30d"),
        pytest.param("aws-ec2-region", "30-day", 259.2 * SEC, id="99.99-30d-4m19.2s"),
        pytest.param("aws-ec2-region", "31-day", 267.84 * SEC, id="99.99-31d"),
    ],
)
def test_error_budget_is_exact(name: str, month: str, budget: timedelta) -> None:
    assert error_budget(BUILTIN_POLICIES[name], MONTHS[month].duration) == budget


def test_budget_left_goes_negative_once_the_target_is_missed() -> None:
    policy = BUILTIN_POLICIES["gcp-compute-single-vm"]
    assert budget_left(policy, APRIL.duration, 40 * MIN) == 3 * MIN + 12 * SEC
    assert budget_left(policy, APRIL.duration, 50 * MIN) == -(6 * MIN + 48 * SEC)


@pytest.mark.parametrize(
    ("down_s", "window_s", "target", "rate"),
    [
        pytest.param(0, 3600, 99.9, 0.0, id="no-downtime"),
        pytest.param(3.6, 3600, 99.9, 1.0, id="exactly-sustainable"),
        pytest.param(51.84, 3600, 99.9, 14.4, id="fast-burn-page"),
        pytest.param(3600, 3600, 99.9, 1000.0, id="all-down"),
        pytest.param(2592, 30 * 86400, 99.9, 1.0, id="month-window-at-budget"),
        pytest.param(1, 3600, 100, float("inf"), id="no-budget-any-downtime"),
        pytest.param(0, 3600, 100, 0.0, id="no-budget-no-downtime"),
    ],
)
def test_burn_rate(down_s: float, window_s: float, target: float, rate: float) -> None:
    result = burn_rate(timedelta(seconds=down_s), timedelta(seconds=window_s), target)
    assert result == pytest.approx(rate, rel=1e-12)


def test_burn_rate_needs_a_window() -> None:
    with pytest.raises(ValueError, match="window must be positive"):
        burn_rate(timedelta(0), timedelta(0), 99.9)


# --- regions, pools, training impact ---------------------------------------------------------


@pytest.mark.parametrize(
    ("min_zones", "expected"),
    [
        pytest.param(None, [(20, 25)], id="all-zones"),
        pytest.param(1, [(0, 40)], id="any-zone"),
        pytest.param(2, [(10, 30)], id="two-or-more"),
        pytest.param(4, [], id="more-zones-than-we-use"),
    ],
)
def test_region_unavailable(min_zones: int | None, expected: list[tuple[int, int]]) -> None:
    start = APRIL.start

    def spans(*pairs: tuple[int, int]) -> list[Span]:
        return [Span(start + a * MIN, start + b * MIN) for a, b in pairs]

    zones = {"a": spans((0, 30)), "b": spans((10, 25)), "c": spans((20, 40))}
    assert region_unavailable(zones, min_zones) == spans(*expected)


def test_a_region_with_no_zones_is_never_unavailable() -> None:
    assert region_unavailable({}, None) == []
    assert region_unavailable({}, 2) == []


@pytest.mark.parametrize(
    ("k", "availability"),
    [
        pytest.param(1, 1 - 5 / 100, id="1-of-3-down-only-when-all-three-are"),
        pytest.param(2, 1 - 15 / 100, id="2-of-3-down-when-two-are"),
        pytest.param(3, 1 - 45 / 100, id="3-of-3-down-when-any-is"),
    ],
)
def test_pool_availability_is_the_share_with_k_of_n_up(k: int, availability: float) -> None:
    period = Span(APRIL.start, APRIL.start + 100 * MIN)

    def spans(*pairs: tuple[int, int]) -> list[Span]:
        return [Span(APRIL.start + a * MIN, APRIL.start + b * MIN) for a, b in pairs]

    members = [spans((10, 40)), spans((30, 50)), spans((35, 45), (-30, 5))]  # last clipped
    assert pool_availability(members, k, period) == pytest.approx(availability, abs=1e-15)


@pytest.mark.parametrize("k", [0, 4], ids=["zero", "more-than-members"])
def test_pool_k_must_fit_the_pool(k: int) -> None:
    with pytest.raises(ValueError, match="k must be between 1 and the 3 members"):
        pool_availability([[], [], []], k, APRIL)


def test_gpu_hours_and_money_lost_count_overlapping_outages_once() -> None:
    outages = [down(APRIL, 90 * MIN), down(APRIL, 60 * MIN, at_minute=660)]  # 2 h merged
    hours = gpu_hours_lost(outages, gpus=8)
    assert hours == 16.0
    assert cost_lost(hours, hourly_price_per_instance=98.32, gpus=8) == pytest.approx(196.64)


def test_an_instance_without_gpus_loses_no_gpu_hours() -> None:
    assert gpu_hours_lost([down(APRIL, 60 * MIN)], gpus=0) == 0.0
    assert cost_lost(0.0, 3.0, gpus=0) == 0.0
    with pytest.raises(ValueError, match="GPU-hours on an instance with 0 GPUs"):
        cost_lost(2.0, 3.0, gpus=0)


# --- claim deadlines -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "period", "incident", "deadline"),
    [
        pytest.param(
            "aws-ec2-instance", "2026-03", "2026-03-15T10:00:00+00:00", "2026-06-01", id="aws"
        ),
        pytest.param(
            "aws-ec2-region", "2026-12", "2026-12-31T23:59:00+00:00", "2027-03-01", id="aws-year"
        ),
        pytest.param(
            "azure-vm-zones", "2026-03", "2026-03-01T00:00:00+00:00", "2026-06-01", id="azure"
        ),
        pytest.param(
            "azure-vm-single-premium",
            "2026-04",
            "2026-03-31T23:30:00-05:00",  # 1 April 04:30 UTC: an April incident
            "2026-07-01",
            id="azure-incident-in-local-time",
        ),
        pytest.param("aws-ec2-instance", "2026-11", None, "2027-02-01", id="aws-no-incident"),
        pytest.param(
            "gcp-compute-single-vm", "2026-04", "2026-04-02T00:00:00+00:00", "2026-05-31", id="gcp"
        ),
        pytest.param("gcp-compute-multizone", "2026-12", None, "2027-01-31", id="gcp-year"),
    ],
)
def test_claim_deadline(name: str, period: str, incident: str | None, deadline: str) -> None:
    end = month_period(period).end
    at = utc(incident) if incident else None
    expected = datetime.fromisoformat(deadline).replace(tzinfo=UTC)
    assert claim_deadline(BUILTIN_POLICIES[name], end, at) == expected


def test_a_policy_without_a_claim_rule_has_no_deadline() -> None:
    policy = policy_from_config({"name": "gpu", "provider": "gpu", "target_pct": 99})
    assert claim_deadline(policy, APRIL.end, APRIL.start) is None


@pytest.mark.parametrize(
    ("month", "days"),
    [
        pytest.param("2026-02", 28, id="february"),
        pytest.param("2028-02", 29, id="leap-february"),
        pytest.param("2026-04", 30, id="april"),
        pytest.param("2026-12", 31, id="december-rolls-the-year"),
    ],
)
def test_month_period(month: str, days: int) -> None:
    period = month_period(month)
    assert period.start == datetime.fromisoformat(f"{month}-01").replace(tzinfo=UTC)
    assert period.duration == timedelta(days=days)


def test_month_period_refuses_other_spellings() -> None:
    with pytest.raises(ValueError, match="expected YYYY-MM"):
        month_period("April 2026")


def test_response_times_are_the_feeds_own_functions() -> None:
    assert time_to_acknowledge is response.time_to_acknowledge
    assert time_to_resolve is response.time_to_resolve
    assert status_page_lag is response.status_page_lag


# --- properties ------------------------------------------------------------------------------

POLICIES = st.sampled_from(sorted(BUILTIN_POLICIES.values(), key=lambda p: p.name))
SECONDS_IN_APRIL = 30 * 86400
outage = st.builds(
    lambda start, length: Span(
        APRIL.start + timedelta(seconds=start), APRIL.start + timedelta(seconds=start + length)
    ),
    st.integers(-3600, SECONDS_IN_APRIL),
    st.integers(1, 3 * 86400),
)
outages = st.lists(outage, max_size=10)
durations = st.timedeltas(min_value=timedelta(days=-40), max_value=timedelta(days=40))


@given(durations, durations, durations)
def test_uptime_is_in_0_to_100_or_unknown(
    unavailable: timedelta, period: timedelta, unknown: timedelta
) -> None:
    result = uptime_pct(unavailable, period, unknown)
    assert result is None or 0.0 <= result <= 100.0
    assert (result is None) == (period - unknown <= timedelta(0))


@given(POLICIES, outages, outages, outage)
def test_adding_an_outage_never_raises_uptime(
    policy: SlaPolicy, spans: list[Span], maintenance: list[Span], extra: Span
) -> None:
    before = uptime_pct(sla_downtime(spans, maintenance, APRIL, policy), APRIL.duration)
    after = uptime_pct(sla_downtime([*spans, extra], maintenance, APRIL, policy), APRIL.duration)
    assert before is not None
    assert after is not None
    assert after <= before


@given(POLICIES, outages, outages)
def test_maintenance_never_lowers_uptime(
    policy: SlaPolicy, spans: list[Span], maintenance: list[Span]
) -> None:
    without = uptime_pct(sla_downtime(spans, [], APRIL, policy), APRIL.duration)
    with_windows = uptime_pct(sla_downtime(spans, maintenance, APRIL, policy), APRIL.duration)
    assert without is not None
    assert with_windows is not None
    assert with_windows >= without


@given(POLICIES, outages, outages, st.integers(1, SECONDS_IN_APRIL - 1))
def test_splitting_the_period_and_recombining_keeps_the_unavailable_time(
    policy: SlaPolicy, spans: list[Span], maintenance: list[Span], cut_s: int
) -> None:
    exact = continuous(policy)
    cut = APRIL.start + timedelta(seconds=cut_s)
    first, second = Span(APRIL.start, cut), Span(cut, APRIL.end)
    parts = sla_downtime(spans, maintenance, first, exact) + sla_downtime(
        spans, maintenance, second, exact
    )
    assert parts == sla_downtime(spans, maintenance, APRIL, exact)


@given(POLICIES, outages)
def test_downtime_within_the_error_budget_earns_no_credit(
    policy: SlaPolicy, spans: list[Span]
) -> None:
    downtime = sla_downtime(spans, [], APRIL, policy)
    uptime = uptime_pct(downtime, APRIL.duration)
    if downtime <= error_budget(policy, APRIL.duration):
        assert credit_pct(uptime, policy) == 0.0
    else:
        assert credit_pct(uptime, policy) > 0.0


@given(st.lists(outages, min_size=1, max_size=4), st.data())
def test_pool_availability_is_a_share_and_falls_as_k_rises(
    members: list[list[Span]], data: st.DataObject
) -> None:
    k = data.draw(st.integers(1, len(members)))
    share = pool_availability(members, k, APRIL)
    assert 0.0 <= share <= 1.0
    if k > 1:
        assert share <= pool_availability(members, k - 1, APRIL)
