"""Monthly reports to render: a small realistic one and a generated one of any size.

The small report has two providers, a target with no data (``uptime_pct=None``), an open outage,
a pool, a resolved and an open provider incident, and floats that do not print short
(``0.1 + 0.2``, ``99.99999``, ``1 / 3``) so round trips are tested on awkward values.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

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

START = datetime(2025, 6, 1, tzinfo=UTC)
END = datetime(2025, 7, 1, tzinfo=UTC)
MONTH_S = (END - START).total_seconds()
POLICY: dict[str, Any] = {
    "version": 1,
    "currency": "USD",
    "downtime": "continuous",
    "unknown_time": "reported apart, never counted as up",
    "vantage_quorum": 2,
    "policies": {
        "aws-ec2-instance": {"target_pct": 99.5, "tiers": [[99.5, 10], [99.0, 30], [95.0, 100]]},
        "lambda-gpu": {"target_pct": 99.9, "tiers": [[99.9, 5], [99.0, 25]]},
    },
    "maintenance_windows": [],
}


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


def target(name: str, provider: str, **fields: Any) -> TargetReport:
    base: dict[str, Any] = {
        "region": "us-east-1",
        "zone": "us-east-1a",
        "pool": None,
        "sla": "aws-ec2-instance",
        "gpus": 8,
        "hourly_price": 98.32,
        "observed_s": MONTH_S,
        "unknown_s": 0.0,
        "downtime_s": 0.0,
        "sla_downtime_s": 0.0,
        "usable_downtime_s": 0.0,
        "uptime_pct": 100.0,
        "target_pct": 99.5,
        "credit_pct": 0.0,
        "credit_amount": 0.0,
        "gpu_hours_lost": 0.0,
        "cost_lost": 0.0,
    }
    return TargetReport(name=name, provider=provider, **(base | fields))


def small_report() -> MonthlyReport:
    trainer0 = target(
        "trainer-0",
        "aws",
        pool="h100-pool",
        downtime_s=4286.75,
        sla_downtime_s=4073.0,
        usable_downtime_s=4286.75,
        uptime_pct=99.84286265432099,
        gpu_hours_lost=9.526111111111112,
        cost_lost=936.6072444444445,
        outages=(
            OutageRow(
                at("2025-06-03T14:02:07Z"), at("2025-06-03T15:10:00Z"), 4073.0, 4073.0, "regional"
            ),
            OutageRow(
                at("2025-06-17T02:00:00.250000Z"),
                at("2025-06-17T02:03:34Z"),
                213.75,
                0.0,
                "single_instance",
                excluded_by_maintenance_s=213.75,
            ),
        ),
    )
    trainer1 = target(
        "trainer-1",
        "aws",
        zone="us-east-1b",
        pool="h100-pool",
        downtime_s=4367.0,
        sla_downtime_s=4367.0,
        usable_downtime_s=4367.0,
        uptime_pct=99.83151234567901,
        gpu_hours_lost=1 / 3,
        cost_lost=1234.5678901234567,
        hourly_price=0.1 + 0.2,
        credit_pct=10.0,  # the provider's credit is its targets' credits
        credit_amount=0.1 + 0.2,
        outages=(
            OutageRow(
                at("2025-06-30T22:47:13Z"), None, 4367.0, 4367.0, "gpu_hardware", series="usable"
            ),
        ),
    )
    a100 = target(
        "lambda-a100-0",
        "lambda",
        region="us-tx-3",
        zone=None,
        sla="lambda-gpu",
        gpus=1,
        hourly_price=1.29,
        target_pct=99.9,
        downtime_s=0.2592,
        usable_downtime_s=0.2592,
        uptime_pct=99.99999,
        outages=(
            OutageRow(
                at("2025-06-09T08:15:00Z"),
                at("2025-06-09T08:15:00.259200Z"),
                0.2592,
                0.0,
                "vantage",
            ),
        ),
    )
    nodata = target(
        "lambda-h100-1",
        "lambda",
        region="us-tx-3",
        zone=None,
        sla="lambda-gpu",
        hourly_price=2.49,
        observed_s=0.0,
        unknown_s=MONTH_S,
        uptime_pct=None,
        target_pct=99.9,
    )
    return MonthlyReport(
        month="2025-06",
        period_start=START,
        period_end=END,
        generated_at=at("2025-07-01T00:05:12.345678Z"),
        policy=POLICY,
        policy_hash="sha256:9f2c4e1b7a0d5c3e8f6a2b1d4c7e9f0a3b5d8c1e2f4a6b7c9d0e1f2a3b4c5d6e",
        providers=(
            ProviderReport(
                slug="aws",
                name="Amazon Web Services",
                sla="aws-ec2-instance",
                target_pct=99.5,
                uptime_pct=99.43151234567901,
                credit_pct=10.0,
                credit_amount=0.1 + 0.2,
                claim_deadline=at("2025-08-31T23:59:59Z"),
                observed_downtime_s=8653.75,
                acknowledged_downtime_s=3600.0,
                sla_downtime_s=8440.0,
                unknown_s=0.0,
                incidents=1,
                tta_median_s=1260.0,
                ttr_median_s=5400.0,
                ttr_p90_s=5400.0,
                status_page_lag_median_s=912.5,
                spend=141580.8,
                gpu_hours=11517.6,
                gpu_hours_lost=9.859444444444444,
                effective_price_per_gpu_hour=12.292491,
                rank=2,
                spot_interruptions_per_1000h=1 / 3,
            ),
            ProviderReport(
                slug="lambda",
                name="Lambda",
                sla="lambda-gpu",
                target_pct=99.9,
                uptime_pct=99.99999,
                credit_pct=0.0,
                credit_amount=0.0,
                claim_deadline=None,
                observed_downtime_s=0.2592,
                acknowledged_downtime_s=0.0,
                sla_downtime_s=0.0,
                unknown_s=MONTH_S,
                incidents=1,
                tta_median_s=None,
                ttr_median_s=None,
                ttr_p90_s=None,
                status_page_lag_median_s=None,
                spend=928.8,
                gpu_hours=719.99992,
                gpu_hours_lost=0.0000720,
                effective_price_per_gpu_hour=1.29,
                rank=1,
            ),
        ),
        targets=(trainer0, trainer1, a100, nodata),
        pools=(
            PoolReport("h100-pool", members=2, min_up=1, availability_pct=99.99, unknown_s=0.0),
        ),
        incidents=(
            IncidentRow(
                "aws",
                "ec2-use1-20250603",
                "Increased EC2 API error rates in US-EAST-1",
                "major",
                at("2025-06-03T13:55:00Z"),
                at("2025-06-03T15:25:00Z"),
                ("us-east-1",),
                1260.0,
                5400.0,
                912.5,
                "https://health.aws.amazon.com/health/status#ec2-use1-20250603",
            ),
            IncidentRow(
                "lambda",
                "lmb-7731",
                "Degraded instance launches in us-tx-3",
                "minor",
                at("2025-06-30T21:00:00Z"),
                None,
                ("us-tx-3",),
                None,
                None,
                None,
                None,
            ),
        ),
        notes=("lambda-h100-1: no probe data this month; its uptime is unknown, not 100%.",),
        work=(
            WorkRow(
                provider="lambda",
                instance_type="gpu_8x_h100",
                work_unit="tokens",
                targets=1,
                availability_pct=99.9998,
                usable_pct=99.99,
                ttr_median_s=None,
                downtime_s=0.2592,
                unusable_s=7.5,
                slow_s=5400.0,
                spend=928.8,
                work_done=1.875e12,
                list_price_per_million=0.4896,
                effective_price_per_million=0.49536,
            ),
        ),
        ledger=(
            LedgerRow(
                provider="aws",
                instance_type="p5.48xlarge",
                capacity="on-demand",
                instances=2,
                instance_hours=1440.0,
                preemptions=0,
                provider_ends=1,
                ended=1,
                median_lifetime_h=2000.0 / 3,
                per_1000h=0.6944444444444444,
                low=0.017581811100194367,
                high=3.869196799263151,
                small_sample=True,
            ),
            LedgerRow(
                provider="aws",
                instance_type="p5.48xlarge",
                capacity="spot",
                instances=40,
                instance_hours=12000.0,
                preemptions=3,
                provider_ends=1,
                ended=9,
                median_lifetime_h=0.1 + 0.2,
                per_1000h=1 / 3,
                low=0.09082,
                high=0.8534,
                small_sample=False,
            ),
            LedgerRow(
                provider="lambda",
                instance_type=None,
                capacity="unknown",
                instances=0,
                instance_hours=0.0,
                preemptions=0,
                provider_ends=0,
                ended=0,
                median_lifetime_h=None,
                per_1000h=None,
                low=None,
                high=None,
                small_sample=True,
            ),
        ),
    )


def generated_report(n_targets: int, seed: int = 5) -> MonthlyReport:
    """``n_targets`` targets over four providers, 0–3 outages each, one in ten without data."""
    rng = random.Random(seed)
    providers = ("aws", "gcp", "azure", "coreweave")
    targets = []
    for i in range(n_targets):
        slug = providers[i % len(providers)]
        if i % 10 == 9:
            targets.append(
                target(
                    f"{slug}-node-{i:04d}", slug, uptime_pct=None, observed_s=0.0, unknown_s=MONTH_S
                )
            )
            continue
        outages = []
        for _ in range(rng.randrange(4)):
            start = START + timedelta(seconds=rng.uniform(0, MONTH_S - 7200))
            length = rng.uniform(30, 7200)
            outages.append(
                OutageRow(
                    start,
                    start + timedelta(seconds=length),
                    length,
                    length,
                    rng.choice(("regional", "single_instance", "unknown")),
                )
            )
        down = sum(o.duration_s for o in outages)
        targets.append(
            target(
                f"{slug}-node-{i:04d}",
                slug,
                pool=f"pool-{i % 7}",
                downtime_s=down,
                sla_downtime_s=down,
                usable_downtime_s=down,
                uptime_pct=100 * (1 - down / MONTH_S),
                gpu_hours_lost=down / 3600 * 8,
                cost_lost=down / 3600 * 98.32,
                outages=tuple(sorted(outages, key=lambda o: o.start)),
            )
        )
    small = small_report()
    provs = tuple(replace(small.providers[0], slug=s, name=s.upper(), rank=None) for s in providers)
    return replace(small, providers=provs, targets=tuple(targets), notes=())


@pytest.fixture
def report() -> MonthlyReport:
    return small_report()


@pytest.fixture
def make_report() -> Callable[[int], MonthlyReport]:
    return generated_report
