from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitor.feeds.model import IncidentUpdate
from monitor.sla.response import (
    detected_at,
    lifecycle,
    percentile,
    status_page_lag,
    summarize,
    time_to_acknowledge,
    time_to_resolve,
)

T0 = datetime(2026, 10, 31, 23, 50, tzinfo=UTC)


def update(minutes: int, status: str) -> IncidentUpdate:
    return IncidentUpdate(T0 + timedelta(minutes=minutes), status, "")  # type: ignore[arg-type]


def test_lifecycle_reads_acknowledged_and_identified_from_the_updates_in_time_order() -> None:
    updates = [update(30, "identified"), update(12, "investigating"), update(95, "resolved")]
    life = lifecycle(T0, T0 + timedelta(minutes=95), updates)
    assert life.acknowledged_at == T0 + timedelta(minutes=12)
    assert life.identified_at == T0 + timedelta(minutes=30)
    assert time_to_acknowledge(life) == timedelta(minutes=12)
    assert time_to_resolve(life) == timedelta(minutes=95)  # across the month boundary


def test_an_open_incident_has_no_time_to_resolve_and_no_updates_no_acknowledgement() -> None:
    life = lifecycle(T0, None, [])
    assert (life.acknowledged_at, time_to_acknowledge(life), time_to_resolve(life)) == (None,) * 3


def test_status_page_lag_is_negative_when_the_provider_was_first() -> None:
    assert status_page_lag(T0, T0 + timedelta(minutes=5)) == timedelta(minutes=-5)
    assert status_page_lag(T0 + timedelta(minutes=7), T0) == timedelta(minutes=7)
    assert status_page_lag(None, T0) is None


def test_detection_is_the_earliest_known_moment() -> None:
    assert detected_at(None, T0 + timedelta(minutes=3), T0) == T0
    assert detected_at(None, None) is None


@pytest.mark.parametrize(
    ("values", "pct", "expected"),
    [
        ([], 50, None),
        ([10.0], 90, 10.0),
        ([1.0, 2.0, 3.0, 4.0], 50, 2.5),
        ([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0], 90, 9.1),
    ],
)
def test_percentiles_interpolate_like_numpy(
    values: list[float], pct: float, expected: float | None
) -> None:
    result = percentile(values, pct)
    assert result == pytest.approx(expected) if expected is not None else result is None


def test_summaries_skip_unknown_durations() -> None:
    summary = summarize([timedelta(minutes=m) for m in (5, 15, 10)] + [None])
    assert (summary.count, summary.median_s) == (3, 600)
