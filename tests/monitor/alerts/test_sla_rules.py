from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitor.alerts.rules import TargetFacts
from monitor.alerts.sla_rules import BURN_WINDOWS, breach_signal, burn_signal
from monitor.sla.intervals import Span
from monitor.sla.policy_config import policy_from_config
from monitor.sla.terms import BUILTIN_POLICIES

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
GPU = TargetFacts("gpu-0", "http", "aws", "us-east-1", "us-east-1a", None)
THREE_NINES = policy_from_config(
    {
        "name": "lambda-h100",
        "provider": "lambda",
        "target_pct": 99.9,
        "tiers": [{"below_pct": 99.9, "credit_pct": 10}],
    }
)
PAGE_SHORT, WARN_SHORT = (w.short for w in BURN_WINDOWS)


def down(minutes_ago: float, minutes: float) -> Span:
    start = NOW - timedelta(minutes=minutes_ago)
    return Span(start, start + timedelta(minutes=minutes))


@pytest.mark.parametrize(
    ("outages", "samples", "firing", "severity"),
    [
        pytest.param(
            [down(4, 4)],
            {PAGE_SHORT: 20, WARN_SHORT: 120},
            True,
            "critical",
            id="a-real-outage-with-15s-probes-pages",
        ),
        pytest.param(
            [down(4, 4)],
            {PAGE_SHORT: 5, WARN_SHORT: 30},
            True,
            "warning",
            id="one-minute-probes-warn-instead-of-paging",
        ),
        pytest.param(
            [down(25, 25)],
            {PAGE_SHORT: 5, WARN_SHORT: 30},
            True,
            "warning",
            id="but-a-sustained-burn-warns",
        ),
        pytest.param(
            [down(50, 2)],
            {PAGE_SHORT: 20, WARN_SHORT: 120},
            False,
            "warning",
            id="an-old-blip-has-left-the-short-window",
        ),
        pytest.param([], {PAGE_SHORT: 20, WARN_SHORT: 120}, False, "warning", id="healthy"),
    ],
)
def test_burn_alerts_need_both_windows_and_enough_samples(
    outages: list[Span], samples: dict[timedelta, int], firing: bool, severity: str
) -> None:
    signal = burn_signal(GPU, THREE_NINES, outages, NOW, samples, min_samples=10)
    assert (signal.firing, signal.severity, signal.rule) == (firing, severity, "sla_burn")


def test_a_breach_fires_with_the_credit_owed_and_is_scoped_to_the_month() -> None:
    policy = BUILTIN_POLICIES["aws-ec2-instance"]
    month_start = datetime(2026, 11, 1, tzinfo=UTC)
    outages = [Span(month_start + timedelta(days=1), month_start + timedelta(days=1, hours=10))]
    signal = breach_signal(GPU, policy, outages, [], month_start - timedelta(days=30), NOW)
    assert signal.firing
    assert signal.extra["credit_pct"] == 30.0  # 10 h of ~19.5 days: 97.9 %, the < 99 % tier
    assert signal.labels["month"] == "2026-11"
    later = breach_signal(GPU, policy, [], [], month_start, NOW + timedelta(days=15))
    assert not later.firing
    assert later.fingerprint != signal.fingerprint  # December starts clean


def test_a_breach_leaves_out_what_the_provider_records_as_the_user_s_doing() -> None:
    """The provider's record of a user's restart is left out of the month-to-date uptime as
    the monthly report leaves it out (``exclude_user_initiated``, on by default); accepted
    maintenance comes in with the maintenance windows."""
    policy = BUILTIN_POLICIES["aws-ec2-instance"]
    month_start = datetime(2026, 11, 1, tzinfo=UTC)
    outage = Span(month_start + timedelta(days=1), month_start + timedelta(days=1, hours=10))
    restart = [Span(outage.start, outage.start + timedelta(hours=9, minutes=30))]
    born = month_start - timedelta(days=30)
    counted = breach_signal(GPU, policy, [outage], [], born, NOW)
    left_out = breach_signal(GPU, policy, [outage], [], born, NOW, user_initiated=restart)
    accepted = breach_signal(GPU, policy, [outage], restart, born, NOW)
    assert counted.firing
    assert not left_out.firing  # 30 min of 19.5 days: 99.89 %, above the 99.5 % target
    assert left_out.extra["uptime_pct"] == pytest.approx(100 * (1 - 1800 / (19.5 * 86400)))
    assert accepted.extra["uptime_pct"] == left_out.extra["uptime_pct"]
    assert not accepted.firing
