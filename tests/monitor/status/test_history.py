"""The status page's history math (monitor/status/history.py): bars and uptimes from observed
windows and outage spans, with unobserved time unknown and never up."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitor.sla.intervals import Span
from monitor.status.history import (
    Bucket,
    Timeline,
    bucket_edges,
    bucket_state,
    history_bar,
    inside,
    outage_span,
    per_bucket,
    share_up,
    timeline,
    uptime,
    weighted_median,
)

BASE = datetime(2026, 5, 4, 10, 0, tzinfo=UTC)
MIN = timedelta(minutes=1)
ZERO = timedelta(0)


def at(minute: float) -> datetime:
    return BASE + timedelta(minutes=minute)


def s(start: float, end: float) -> Span:
    return Span(at(start), at(end))


def line(
    observed: Sequence[tuple[float, float]],
    down: Sequence[tuple[float, float]] = (),
    unusable: Sequence[tuple[float, float]] = (),
) -> Timeline:
    return timeline([s(*p) for p in observed], [s(*p) for p in down], [s(*p) for p in unusable])


# --- outage_span -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "now", "expected"),
    [
        pytest.param(0, 30, 60, s(0, 30), id="closed-outage-kept-as-is"),
        pytest.param(0, None, 60, s(0, 60), id="open-outage-closed-at-now"),
        pytest.param(0, 90, 60, s(0, 60), id="end-after-now-cut-at-now"),
        pytest.param(70, None, 60, None, id="starts-after-now-nothing"),
        pytest.param(60, None, 60, None, id="opened-this-instant-no-length"),
        pytest.param(10, 10, 60, None, id="zero-length-row"),
    ],
)
def test_outage_rows_become_spans_closed_at_now(
    start: float, end: float | None, now: float, expected: Span | None
) -> None:
    assert outage_span(at(start), at(end) if end is not None else None, at(now)) == expected


# --- timeline --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("observed", "down", "unusable", "expected"),
    [
        pytest.param(
            [(0, 60)], [(10, 20)], [], Timeline((s(0, 60),), (s(10, 20),), ()), id="down-inside"
        ),
        pytest.param(
            [(0, 30)],
            [(20, 90)],
            [],
            Timeline((s(0, 30),), (s(20, 30),), ()),
            id="open-outage-unwatched-after-last-probe-is-not-down",
        ),
        pytest.param(
            [(0, 60)],
            [(10, 20)],
            [(5, 30)],
            Timeline((s(0, 60),), (s(10, 20),), (s(5, 10), s(20, 30))),
            id="down-wins-over-unusable",
        ),
        pytest.param(
            [(0, 20), (10, 40), (40, 50)],
            [],
            [],
            Timeline((s(0, 50),), (), ()),
            id="overlapping-and-touching-windows-merged",
        ),
        pytest.param(
            [(0, 10), (50, 60)],
            [(0, 60)],
            [],
            Timeline((s(0, 10), s(50, 60)), (s(0, 10), s(50, 60)), ()),
            id="outage-through-a-gap-counts-only-where-watched",
        ),
        pytest.param([], [(0, 60)], [(0, 60)], Timeline((), (), ()), id="nothing-watched"),
    ],
)
def test_timeline_keeps_outages_only_where_someone_was_watching(
    observed: list[tuple[float, float]],
    down: list[tuple[float, float]],
    unusable: list[tuple[float, float]],
    expected: Timeline,
) -> None:
    assert line(observed, down, unusable) == expected


# --- bucket edges ----------------------------------------------------------------------------


def test_edges_align_to_the_epoch_and_the_last_bucket_holds_now_cut_at_now() -> None:
    now = at(47.5)  # 10:47:30
    edges = bucket_edges(now, 4, timedelta(minutes=30))
    assert edges == [at(-60), at(-30), at(0), at(30), now]


def test_edges_when_now_falls_exactly_on_a_boundary_end_at_now_without_an_empty_bucket() -> None:
    edges = bucket_edges(at(60), 3, timedelta(minutes=30))
    assert edges == [at(-30), at(0), at(30), at(60)]


def test_forty_eight_half_hour_buckets_cover_the_last_day() -> None:
    now = at(13.2)
    edges = bucket_edges(now, 48, timedelta(minutes=30))
    assert len(edges) == 49
    assert now - edges[0] < timedelta(hours=24)
    assert now - edges[0] > timedelta(hours=23, minutes=30)


@pytest.mark.parametrize(
    ("count", "width"),
    [
        pytest.param(0, timedelta(minutes=30), id="no-buckets"),
        pytest.param(4, timedelta(0), id="zero-width"),
        pytest.param(4, timedelta(seconds=1.5), id="fractional-seconds"),
    ],
)
def test_edges_refuse_a_bar_that_cannot_be_drawn(count: int, width: timedelta) -> None:
    with pytest.raises(ValueError, match="bucket_edges"):
        bucket_edges(at(0), count, width)


# --- buckets ---------------------------------------------------------------------------------

EDGES = [at(0), at(30), at(60), at(90), at(120)]  # four 30-minute buckets, 10:00 - 12:00


@pytest.mark.parametrize(
    ("spans", "expected"),
    [
        pytest.param([s(20, 70)], [10, 30, 10, 0], id="straddles-two-edges"),
        pytest.param([s(30, 60)], [0, 30, 0, 0], id="exactly-one-bucket"),
        pytest.param([s(-60, 200)], [30, 30, 30, 30], id="wider-than-the-bar"),
        pytest.param([s(5, 10), s(15, 20), s(25, 35)], [15, 5, 0, 0], id="several-in-one"),
        pytest.param([s(-30, -10), s(130, 140)], [0, 0, 0, 0], id="outside-the-bar"),
        pytest.param([], [0, 0, 0, 0], id="none"),
    ],
)
def test_per_bucket_sums_the_time_of_spans_inside_each_bucket(
    spans: list[Span], expected: list[int]
) -> None:
    assert per_bucket(spans, EDGES) == [m * MIN for m in expected]


@pytest.mark.parametrize(
    ("observed", "down", "unusable", "state"),
    [
        pytest.param(ZERO, ZERO, ZERO, "unknown", id="nobody-watched"),
        pytest.param(MIN, ZERO, ZERO, "up", id="one-watched-minute-up"),
        pytest.param(30 * MIN, MIN, ZERO, "down", id="one-down-minute"),
        pytest.param(30 * MIN, ZERO, MIN, "unusable", id="one-unusable-minute"),
        pytest.param(30 * MIN, MIN, MIN, "down", id="down-beats-unusable"),
    ],
)
def test_a_bucket_shows_the_worst_thing_seen_in_it(
    observed: timedelta, down: timedelta, unusable: timedelta, state: str
) -> None:
    assert bucket_state(observed, down, unusable) == state


def test_bar_around_an_outage_straddling_edges_and_unwatched_time() -> None:
    """Watched 10:00-11:30 only; down 10:20-11:10 (open, so it runs on past the last probe);
    usable down 10:05-10:15."""
    bar = history_bar(line([(0, 90)], [(20, 150)], [(5, 15)]), EDGES)
    assert [(b.state, b.slots) for b in bar] == [("down", 3), ("unknown", 1)]
    assert bar[0] == Bucket(at(0), at(90), "down", 90 * MIN, 70 * MIN, 10 * MIN, 3)
    assert bar[1] == Bucket(at(90), at(120), "unknown", ZERO, ZERO, ZERO, 1)
    assert bar[1].unobserved == 30 * MIN


def test_a_half_watched_bucket_without_outages_is_up_and_says_how_much_was_unwatched() -> None:
    (bucket,) = history_bar(line([(0, 10)]), EDGES[:2])
    assert bucket.state == "up"
    assert bucket.observed == 10 * MIN
    assert bucket.unobserved == 20 * MIN


def test_the_bar_joins_adjacent_buckets_of_one_state_and_keeps_their_slot_count() -> None:
    edges = [at(30 * i) for i in range(7)]
    bar = history_bar(line([(0, 150)], [(60, 90)], [(100, 110)]), edges)
    assert [(b.state, b.slots) for b in bar] == [
        ("up", 2),
        ("down", 1),
        ("unusable", 1),
        ("up", 1),
        ("unknown", 1),
    ]
    assert bar[0] == Bucket(at(0), at(60), "up", 60 * MIN, ZERO, ZERO, 2)


def test_a_steady_day_draws_as_one_segment() -> None:
    now = at(600)
    edges = bucket_edges(now, 48, timedelta(minutes=30))
    bar = history_bar(timeline([Span(now - timedelta(days=2), now)], [], []), edges)
    assert [(b.state, b.slots, b.start, b.end) for b in bar] == [("up", 48, edges[0], now)]


minutes = st.integers(min_value=-60, max_value=300)


@st.composite
def spans_in_minutes(draw: st.DrawFn) -> list[tuple[float, float]]:
    pairs = draw(st.lists(st.tuples(minutes, st.integers(1, 120)), max_size=6))
    return [(start, start + length) for start, length in pairs]


@given(spans_in_minutes(), spans_in_minutes(), spans_in_minutes(), st.integers(1, 300))
def test_the_bar_covers_every_bucket_once_and_its_times_add_up(
    observed: list[tuple[float, float]],
    down: list[tuple[float, float]],
    unusable: list[tuple[float, float]],
    now_minute: int,
) -> None:
    edges = bucket_edges(at(now_minute), 8, timedelta(minutes=30))
    the_line = line(observed, down, unusable)
    bar = history_bar(the_line, edges)
    assert sum(b.slots for b in bar) == 8
    assert bar[0].start == edges[0]
    assert bar[-1].end == edges[-1]
    assert all(a.end == b.start and a.state != b.state for a, b in itertools.pairwise(bar))
    start, end = edges[0], edges[-1]
    assert sum((b.observed for b in bar), ZERO) == inside(the_line.observed, start, end)
    assert sum((b.down for b in bar), ZERO) == inside(the_line.down, start, end)
    for b in bar:
        assert b.state == bucket_state(b.observed, b.down, b.unusable)
        assert b.down + b.unusable <= b.observed <= b.end - b.start


# --- uptime ----------------------------------------------------------------------------------

DAY = timedelta(days=1)


@pytest.mark.parametrize(
    ("observed", "down", "unusable", "reachable", "usable"),
    [
        pytest.param([(0, 1440)], [], [], 100.0, 100.0, id="watched-all-day-no-outage"),
        pytest.param([(0, 1440)], [(0, 144)], [], 90.0, 90.0, id="down-a-tenth"),
        pytest.param(
            [(720, 1440)], [(1296, 1440)], [], 80.0, 80.0, id="unwatched-half-left-out-not-up"
        ),
        pytest.param(
            [(0, 720)],
            [(648, 1440)],
            [],
            90.0,
            90.0,
            id="open-outage-unwatched-after-last-probe-counts-only-watched-part",
        ),
        pytest.param(
            [(0, 1440)], [(0, 72)], [(720, 864)], 95.0, 85.0, id="unusable-lowers-usable-only"
        ),
        pytest.param(
            [(-1440, 1440)], [(-1440, -720)], [], 100.0, 100.0, id="outage-before-window-ignored"
        ),
        pytest.param([], [], [], None, None, id="nothing-watched-is-no-data-not-100"),
    ],
)
def test_uptime_over_a_day_counts_observed_time_only(
    observed: list[tuple[float, float]],
    down: list[tuple[float, float]],
    unusable: list[tuple[float, float]],
    reachable: float | None,
    usable: float | None,
) -> None:
    result = uptime(line(observed, down, unusable), at(1440), DAY)
    assert result.reachable_pct == (pytest.approx(reachable) if reachable is not None else None)
    assert result.usable_pct == (pytest.approx(usable) if usable is not None else None)
    assert result.window == DAY


def test_uptime_reports_how_much_of_the_window_was_observed() -> None:
    result = uptime(line([(0, 360), (1000, 1440)]), at(1440), DAY)
    assert result.observed == 800 * MIN


@pytest.mark.parametrize(
    ("unavailable", "observed", "expected"),
    [
        pytest.param(ZERO, MIN, 100.0, id="all-up"),
        pytest.param(MIN, 4 * MIN, 75.0, id="a-quarter-down"),
        pytest.param(2 * MIN, MIN, 0.0, id="clamped-at-zero"),
        pytest.param(ZERO, ZERO, None, id="nothing-observed"),
    ],
)
def test_share_up(unavailable: timedelta, observed: timedelta, expected: float | None) -> None:
    assert share_up(unavailable, observed) == expected


# --- weighted median -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("samples", "expected"),
    [
        pytest.param([], None, id="none"),
        pytest.param([(50.0, 0)], None, id="no-weight"),
        pytest.param([(50.0, 10)], 50.0, id="one-bucket"),
        pytest.param([(10.0, 1), (30.0, 1), (20.0, 1)], 20.0, id="unweighted-odd"),
        pytest.param([(10.0, 1), (20.0, 1)], 10.0, id="even-takes-the-lower"),
        pytest.param([(10.0, 1), (20.0, 1), (900.0, 100)], 900.0, id="weight-decides"),
        pytest.param(
            [(900.0, 1), (12.0, 60), (11.0, 60)], 12.0, id="busy-buckets-outvote-a-slow-one"
        ),
    ],
)
def test_weighted_median_of_bucket_medians(
    samples: list[tuple[float, int]], expected: float | None
) -> None:
    assert weighted_median(samples) == expected
