"""Shaping the status page's view (monitor/status/view.py): pools, the banner, the fleet's order
and a target row built from what the repository read."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from monitor.history.spans import OutageSpan, TargetSpans
from monitor.probes.vantages import VantageHealth
from monitor.reports.model import ProviderReport
from monitor.sla.intervals import Span
from monitor.status.health import ProviderHealth
from monitor.status.history import bucket_edges
from monitor.status.repository import TargetRow, Verdict
from monitor.status.view import (
    ProviderView,
    SlaView,
    TargetView,
    events_on_fleet,
    in_order,
    pools_of,
    sla_of,
    summary_of,
    target_view,
    vantage_rows,
)

NOW = datetime(2026, 5, 4, 12, 7, tzinfo=UTC)
ROW = TargetRow(1, "gpu-0", "dcgm", "h100", "aws", "us-east-1", 30.0, 5.0)
EDGES = bucket_edges(NOW, 48, timedelta(minutes=30))


def target(name: str, state: str, pool: str | None = "h100") -> TargetView:
    return TargetView(name, "tcp", state, pool, None, None, (), (), None)


def test_a_target_row_without_any_rows_read_is_unknown_with_an_unknown_bar_and_no_data() -> None:
    view = target_view(ROW, None, None, (), EDGES, NOW)
    assert view.state == "unknown"
    assert [(b.state, b.slots) for b in view.bar] == [("unknown", 48)]
    assert [u.reachable_pct for u in view.uptime] == [None, None, None]
    assert view.latency_ms is None


def test_a_target_row_from_a_fresh_unusable_verdict_and_its_spans() -> None:
    spans = TargetSpans(
        observed=(Span(NOW - timedelta(days=2), NOW),),
        outages=(OutageSpan("usable", Span(NOW - timedelta(hours=6), NOW), True),),
    )
    verdict = Verdict("up", "down", NOW - timedelta(seconds=10))
    view = target_view(ROW, verdict, spans, [(12.0, 10), (14.0, 10), (90.0, 1)], EDGES, NOW)
    assert view.state == "unusable"
    assert [b.state for b in view.bar] == ["up", "unusable"]
    assert view.uptime[0].reachable_pct == 100.0
    assert view.uptime[0].usable_pct == pytest.approx(75.0)
    assert view.uptime[1].usable_pct == pytest.approx(87.5)  # two days watched, not seven
    assert view.latency_ms == 14.0


def test_the_provider_s_events_on_a_target_are_told_beside_its_state_never_instead() -> None:
    from tests.monitor.status.test_account import view as event

    retiring = event("retire", targets=("gpu-0",))
    row = target_view(ROW, None, None, (), EDGES, NOW, events=[retiring])
    assert (row.state, row.events) == ("unknown", (retiring,))  # unknown stays unknown
    assert summary_of([row]).state == "unknown"
    up = target_view(ROW, Verdict("up", "up", NOW), None, (), EDGES, NOW, events=[retiring])
    assert up.state == "up"  # and up stays up: the work has not begun
    elsewhere = event("elsewhere", targets=("retired-box",))
    region = event("region", status="open", scope="region", targets=("gpu-0", "gpu-9"))
    listed = events_on_fleet([retiring, elsewhere, region], [row])
    assert [e.key for e in listed] == ["region", "retire"]


def test_pools_count_only_usable_members_and_a_configured_pool_without_members_is_down() -> None:
    fleet = [
        target("a", "up"),
        target("b", "unusable"),
        target("c", "up", pool="a100"),
        target("d", "down", pool=None),
    ]
    pools = {p.name: p for p in pools_of(fleet, {"h100": 2, "spare": 1})}
    assert sorted(pools) == ["a100", "h100", "spare"]
    assert (pools["h100"].up, pools["h100"].total, pools["h100"].state) == (1, 2, "down")
    assert (pools["a100"].min_up, pools["a100"].state) == (1, "up")
    assert (pools["spare"].total, pools["spare"].state) == (0, "down")


@pytest.mark.parametrize(
    ("states", "worst"),
    [
        pytest.param([], "unknown", id="empty-fleet-is-unknown-not-up"),
        pytest.param(["up", "up"], "up", id="all-up"),
        pytest.param(["up", "unknown"], "unknown", id="unknown-beats-up"),
        pytest.param(["unknown", "unusable"], "unusable", id="unusable-beats-unknown"),
        pytest.param(["unusable", "down", "up"], "down", id="down-is-worst"),
    ],
)
def test_the_banner_shows_the_worst_state(states: list[str], worst: str) -> None:
    summary = summary_of([target(str(i), s) for i, s in enumerate(states)])
    assert summary.state == worst
    assert sum(summary.counts.values()) == len(states)


def test_the_fleet_lists_down_then_unusable_then_unknown_then_up_each_by_name() -> None:
    fleet = [
        target("b-up", "up"),
        target("a-up", "up"),
        target("z-down", "down"),
        target("unk", "unknown"),
        target("gpu", "unusable"),
    ]
    assert [t.name for t in in_order(fleet)] == ["z-down", "gpu", "unk", "a-up", "b-up"]


def test_vantage_rows_say_blind_before_anything_else() -> None:
    rows = vantage_rows(
        [
            VantageHealth("eu", NOW, 10, 0, NOW, None),
            VantageHealth("us", NOW, 10, 10, NOW - timedelta(hours=1), NOW - timedelta(minutes=5)),
            VantageHealth("ap", NOW, 10, 2, NOW, None),
        ]
    )
    assert [(r.vantage, r.state) for r in rows] == [
        ("eu", "agrees"),
        ("us", "blind"),
        ("ap", "disagrees"),
    ]
    assert rows[1].blind_since == NOW - timedelta(minutes=5)


def test_sla_rows_cover_known_and_reported_providers_without_data_as_none() -> None:
    providers = [ProviderView("aws", "AWS", ProviderHealth("unknown", "x", None, None), ())]
    report = ProviderReport(
        **dict.fromkeys(ProviderReport.__dataclass_fields__, None),  # type: ignore[arg-type]
    )
    report = replace(
        report, slug="gcp", name="GCP", uptime_pct=99.0, target_pct=99.9, credit_pct=10.0
    )
    assert sla_of(providers, [report]) == (
        SlaView("aws", "AWS", None, None, 0.0),
        SlaView("gcp", "GCP", 99.0, 99.9, 10.0),
    )
