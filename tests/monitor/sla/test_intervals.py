"""Tests for the span algebra (monitor/sla/intervals.py)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from monitor.sla.intervals import (
    Span,
    at_least,
    clip,
    complement,
    intersect,
    merge,
    subtract,
    total,
)

BASE = datetime(2026, 4, 1, tzinfo=UTC)


def at(minute: float) -> datetime:
    return BASE + timedelta(minutes=minute)


def s(start: float, end: float) -> Span:
    return Span(at(start), at(end))


def spans(*pairs: tuple[float, float]) -> list[Span]:
    return [s(a, b) for a, b in pairs]


# --- Span ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        pytest.param(datetime(2026, 4, 1), at(1), "timezone-aware", id="naive-start"),
        pytest.param(at(0), datetime(2026, 4, 1, 1), "timezone-aware", id="naive-end"),
        pytest.param(at(5), at(5), "must be after", id="empty"),
        pytest.param(at(5), at(4), "must be after", id="reversed"),
        pytest.param("2026-04-01", at(4), "timezone-aware", id="not-a-datetime"),
    ],
)
def test_a_span_rejects_naive_empty_and_reversed_times(
    start: datetime, end: datetime, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        Span(start, end)


def test_a_span_holds_its_times_in_utc() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    span = Span(datetime(2026, 7, 1, 12, tzinfo=berlin), datetime(2026, 7, 1, 13, tzinfo=berlin))
    assert span.start == datetime(2026, 7, 1, 10, tzinfo=UTC)
    assert span.start.tzinfo is UTC
    assert span.end.tzinfo is UTC


@pytest.mark.parametrize(
    ("start", "end", "duration"),
    [
        pytest.param(
            datetime(2026, 3, 29, 1, 30, tzinfo=ZoneInfo("Europe/Berlin")),
            datetime(2026, 3, 29, 3, 30, tzinfo=ZoneInfo("Europe/Berlin")),
            timedelta(hours=1),
            id="berlin-spring-forward-two-wall-hours-are-one",
        ),
        pytest.param(
            datetime(2026, 11, 1, 1, 30, tzinfo=ZoneInfo("America/New_York")),
            datetime(2026, 11, 1, 1, 30, fold=1, tzinfo=ZoneInfo("America/New_York")),
            timedelta(hours=1),
            id="new-york-fall-back-same-wall-time-an-hour-apart",
        ),
        pytest.param(
            datetime(2026, 10, 25, 0, 0, tzinfo=ZoneInfo("Europe/London")),
            datetime(2026, 10, 26, 0, 0, tzinfo=ZoneInfo("Europe/London")),
            timedelta(hours=25),
            id="london-fall-back-day-has-25-hours",
        ),
    ],
)
def test_dst_named_times_are_measured_in_real_elapsed_time(
    start: datetime, end: datetime, duration: timedelta
) -> None:
    assert Span(start, end).duration == duration


def test_spans_in_different_zones_for_the_same_instants_are_equal() -> None:
    tokyo = ZoneInfo("Asia/Tokyo")
    local = Span(datetime(2026, 4, 1, 9, tzinfo=tokyo), datetime(2026, 4, 1, 10, tzinfo=tokyo))
    assert local == s(0, 60)


# --- merge, intersect, clip, subtract, complement, total -------------------------------------


@pytest.mark.parametrize(
    ("given_spans", "expected"),
    [
        pytest.param([], [], id="nothing"),
        pytest.param([(0, 10)], [(0, 10)], id="one"),
        pytest.param([(0, 10), (5, 15)], [(0, 15)], id="overlapping"),
        pytest.param([(0, 10), (10, 20)], [(0, 20)], id="touching-join"),
        pytest.param([(0, 30), (5, 10)], [(0, 30)], id="contained"),
        pytest.param([(20, 30), (0, 10)], [(0, 10), (20, 30)], id="unsorted-disjoint"),
        pytest.param([(0, 10), (0, 10)], [(0, 10)], id="duplicates"),
        pytest.param([(40, 50), (0, 10), (5, 45)], [(0, 50)], id="chain"),
    ],
)
def test_merge_joins_overlapping_and_touching_spans(
    given_spans: list[tuple[float, float]], expected: list[tuple[float, float]]
) -> None:
    assert merge(spans(*given_spans)) == spans(*expected)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        pytest.param([(0, 10)], [], [], id="with-nothing"),
        pytest.param([(0, 10)], [(5, 20)], [(5, 10)], id="overlap"),
        pytest.param([(0, 10)], [(10, 20)], [], id="touching-share-no-time"),
        pytest.param([(0, 10), (20, 30)], [(5, 25)], [(5, 10), (20, 25)], id="bridging"),
        pytest.param([(0, 100)], [(10, 20), (30, 40)], [(10, 20), (30, 40)], id="covering"),
    ],
)
def test_intersect_keeps_the_times_in_both(
    a: list[tuple[float, float]],
    b: list[tuple[float, float]],
    expected: list[tuple[float, float]],
) -> None:
    assert intersect(spans(*a), spans(*b)) == spans(*expected)
    assert intersect(spans(*b), spans(*a)) == spans(*expected)


@pytest.mark.parametrize(
    ("given_spans", "window", "expected"),
    [
        pytest.param([(-30, 30)], (0, 60), [(0, 30)], id="starts-before"),
        pytest.param([(30, 90)], (0, 60), [(30, 60)], id="ends-after"),
        pytest.param([(-10, 70)], (0, 60), [(0, 60)], id="spans-the-window"),
        pytest.param([(60, 70), (-10, 0)], (0, 60), [], id="outside-touching"),
        pytest.param([(10, 20)], (60, 0), [], id="reversed-window"),
    ],
)
def test_clip_keeps_the_part_inside_the_window(
    given_spans: list[tuple[float, float]],
    window: tuple[float, float],
    expected: list[tuple[float, float]],
) -> None:
    assert clip(spans(*given_spans), at(window[0]), at(window[1])) == spans(*expected)


@pytest.mark.parametrize(
    ("a", "minus", "expected"),
    [
        pytest.param([(0, 60)], [], [(0, 60)], id="nothing-removed"),
        pytest.param([(0, 60)], [(20, 30)], [(0, 20), (30, 60)], id="hole"),
        pytest.param([(0, 60)], [(-10, 10), (50, 70)], [(10, 50)], id="both-ends"),
        pytest.param([(0, 60)], [(0, 60)], [], id="all"),
        pytest.param(
            [(0, 120)], [(30, 90), (60, 105)], [(0, 30), (105, 120)], id="overlapping-windows"
        ),
        pytest.param(
            [(0, 10), (20, 30), (40, 50)], [(5, 45)], [(0, 5), (45, 50)], id="one-window-many-spans"
        ),
        pytest.param([(0, 10)], [(10, 20)], [(0, 10)], id="touching-removes-nothing"),
    ],
)
def test_subtract_removes_each_excluded_minute_once(
    a: list[tuple[float, float]],
    minus: list[tuple[float, float]],
    expected: list[tuple[float, float]],
) -> None:
    assert subtract(spans(*a), spans(*minus)) == spans(*expected)


def test_complement_is_the_up_time_between_outages() -> None:
    assert complement(spans((10, 20), (30, 40)), at(0), at(60)) == spans(
        (0, 10), (20, 30), (40, 60)
    )
    assert complement([], at(0), at(60)) == spans((0, 60))
    assert complement(spans((0, 60)), at(0), at(60)) == []


def test_total_counts_overlapping_time_once() -> None:
    assert total(spans((0, 30), (15, 45), (60, 70))) == timedelta(minutes=55)
    assert total([]) == timedelta(0)


# --- at_least --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("k", "members", "expected"),
    [
        pytest.param(1, [[(0, 10)], [(5, 20)]], [(0, 20)], id="k1-is-the-union"),
        pytest.param(2, [[(0, 10)], [(5, 20)]], [(5, 10)], id="k2-is-the-overlap"),
        pytest.param(
            2, [[(0, 10)], [(5, 20)], [(15, 30)]], [(5, 10), (15, 20)], id="k2-of-3-two-pairs"
        ),
        pytest.param(3, [[(0, 10)], [(5, 20)], [(15, 30)]], [], id="never-all-three"),
        pytest.param(3, [[(0, 10)], [(5, 20)]], [], id="k-above-members"),
        pytest.param(2, [[(0, 10), (5, 15)], [(20, 30)]], [], id="self-overlap-counts-once"),
        pytest.param(1, [[(0, 10)], [(10, 20)]], [(0, 20)], id="handoff-leaves-no-gap"),
        pytest.param(2, [[(0, 10)], [(10, 20)]], [], id="handoff-is-not-an-overlap"),
        pytest.param(
            2, [[(0, 10)], [(5, 10)], [(10, 20)], [(10, 15)]], [(5, 15)], id="joined-at-instant"
        ),
        pytest.param(1, [], [], id="no-members"),
    ],
)
def test_at_least_finds_when_k_members_are_down_together(
    k: int, members: list[list[tuple[float, float]]], expected: list[tuple[float, float]]
) -> None:
    assert at_least(k, [spans(*m) for m in members]) == spans(*expected)


@pytest.mark.parametrize("k", [0, -1], ids=["zero", "negative"])
def test_at_least_needs_k_of_one_or_more(k: int) -> None:
    with pytest.raises(ValueError, match="k must be at least 1"):
        at_least(k, [spans((0, 10))])


# --- properties ------------------------------------------------------------------------------

minute_spans = st.lists(
    st.builds(lambda a, n: s(a, a + n), st.integers(0, 600), st.integers(1, 120)), max_size=8
)


def is_normalized(result: list[Span]) -> bool:
    return all(a.end < b.start for a, b in itertools.pairwise(result))


def covered(result: list[Span], minute: float) -> bool:
    return any(span.start <= at(minute) < span.end for span in result)


@given(minute_spans, minute_spans)
def test_every_result_is_sorted_disjoint_and_non_adjacent(a: list[Span], b: list[Span]) -> None:
    for result in (merge(a), intersect(a, b), subtract(a, b), complement(a, at(0), at(720))):
        assert is_normalized(result)


@given(minute_spans, minute_spans)
def test_a_is_split_exactly_into_its_part_in_b_and_its_part_outside(
    a: list[Span], b: list[Span]
) -> None:
    assert total(intersect(a, b)) + total(subtract(a, b)) == total(a)
    assert merge(intersect(a, b) + subtract(a, b)) == merge(a)


@given(minute_spans)
def test_spans_and_their_complement_fill_the_window(a: list[Span]) -> None:
    inside = clip(a, at(0), at(720))
    assert total(inside) + total(complement(a, at(0), at(720))) == timedelta(minutes=720)


@given(st.lists(minute_spans, max_size=5), st.integers(1, 6))
def test_at_least_agrees_with_counting_at_every_half_minute(
    members: list[list[Span]], k: int
) -> None:
    result = at_least(k, members)
    assert is_normalized(result)
    # Every edge is a whole minute, so sampling each half minute sees every piece.
    for step in range(0, 1480):
        minute = step / 2
        down = sum(covered(m, minute) for m in members)
        assert covered(result, minute) == (down >= k)


@given(st.lists(minute_spans, max_size=5))
def test_at_least_one_is_the_union(members: list[list[Span]]) -> None:
    assert at_least(1, members) == merge(span for member in members for span in member)
