from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitor.reports.causes import IncidentFact, OutageFact, classify

T0 = datetime(2026, 11, 3, 8, 0, tzinfo=UTC)


def outage(
    target: str,
    provider: str = "aws",
    region: str = "us-east-1",
    zone: str = "a",
    series: str = "reachable",
    start: float = 0,
) -> OutageFact:
    begin = T0 + timedelta(seconds=start)
    return OutageFact(target, provider, region, zone, series, begin, begin + timedelta(minutes=20))


def incident(regions: tuple[str, ...] = ("us-east-1",), provider: str = "aws") -> IncidentFact:
    return IncidentFact(provider, regions, T0 - timedelta(minutes=5), T0 + timedelta(hours=1))


@pytest.mark.parametrize(
    ("subject", "others", "incidents", "reachable_down", "cause"),
    [
        pytest.param(outage("a"), [outage("a")], [], False, "single_instance", id="alone"),
        pytest.param(
            outage("a"),
            [outage("a"), outage("b", zone="b", start=20)],
            [],
            False,
            "regional",
            id="two-zones-of-one-region",
        ),
        pytest.param(
            outage("a"),
            [outage("a")],
            [incident()],
            False,
            "regional",
            id="provider-says-our-region",
        ),
        pytest.param(
            outage("a"),
            [outage("a")],
            [incident(())],
            False,
            "provider_wide",
            id="provider-names-no-region",
        ),
        pytest.param(
            outage("a"),
            [outage("a"), outage("b", region="eu-west-1", start=30)],
            [],
            False,
            "provider_wide",
            id="two-regions-at-once",
        ),
        pytest.param(
            outage("a", series="usable"),
            [outage("a", series="usable")],
            [],
            False,
            "gpu_hardware",
            id="unusable-but-reachable",
        ),
        pytest.param(
            outage("a"),
            [
                outage("a"),
                outage("b", provider="gcp", region="us-central1"),
                outage("c", provider="azure", region="eastus"),
            ],
            [],
            False,
            "vantage",
            id="everything-everywhere-means-us",
        ),
        pytest.param(
            outage("a"),
            [outage("a")],
            [incident(provider="gcp")],
            False,
            "single_instance",
            id="another-providers-incident-is-not-ours",
        ),
    ],
)
def test_causes(
    subject: OutageFact,
    others: list[OutageFact],
    incidents: list[IncidentFact],
    reachable_down: bool,
    cause: str,
) -> None:
    assert classify(subject, others, incidents, 3, 3, reachable_down) == cause
