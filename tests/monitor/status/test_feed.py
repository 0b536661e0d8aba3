"""The feed's outages (monitor/status/feed.py): one entry for a target that is down, not a second
for it being unusable while it is down."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from monitor.history.spans import OutageRecord
from monitor.status.feed import told_once

T0 = datetime(2026, 12, 6, 10, 0, tzinfo=UTC)
MIN = timedelta(minutes=1)


def outage(series: str, start: int, end: int | None) -> OutageRecord:
    return OutageRecord(series, T0 + start * MIN, None if end is None else T0 + end * MIN, None)


def test_a_usable_outage_inside_a_reachable_one_of_the_same_target_is_told_once() -> None:
    down, unusable = outage("reachable", 0, 10), outage("usable", 0, 10)
    still_open = outage("reachable", 20, None), outage("usable", 21, None)
    assert told_once([("a", down), ("a", unusable)]) == [("a", down)]
    assert told_once([("a", still_open[0]), ("a", still_open[1])]) == [("a", still_open[0])]


def test_a_usable_outage_that_outlasts_or_precedes_the_down_time_or_is_another_target_s_stays() -> (
    None
):
    down = outage("reachable", 0, 10)
    kept = [
        ("a", outage("usable", 0, 15)),  # the GPUs still failed after the box came back
        ("a", outage("usable", -5, 10)),  # a GPU failed before the box went down
        ("a", outage("usable", 5, None)),  # still open after the box came back
        ("b", outage("usable", 0, 10)),  # another target
    ]
    assert told_once([("a", down), *kept]) == [("a", down), *kept]
