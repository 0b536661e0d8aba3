"""monitor/history/spans.py: observed windows and outages of a period, clipped once, on SQLite
and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.orm import Session

from monitor.history.spans import OutageSpan, spans
from monitor.sla.intervals import Span
from tests.monitor.history.conftest import DEC, NOV, observed, outage, target

MONTH = Span(NOV, DEC)
MID = NOV + timedelta(days=15)


def test_an_outage_across_the_period_start_is_clipped_to_it(session: Session) -> None:
    t = target(session, "a")
    outage(session, t, NOV - timedelta(hours=1), NOV + timedelta(hours=2))
    [got] = spans(session, [t.id], MONTH, DEC)[t.id].outages
    assert got == OutageSpan("reachable", Span(NOV, NOV + timedelta(hours=2)), False, None)


def test_an_open_outage_runs_to_now_and_is_still_open(session: Session) -> None:
    t = target(session, "a")
    outage(session, t, MID, None, series="usable", cause="gpu")
    [got] = spans(session, [t.id], MONTH, MID + timedelta(hours=3))[t.id].outages
    assert (got.span, got.still_open, got.cause) == (
        Span(MID, MID + timedelta(hours=3)),
        True,
        "gpu",
    )


def test_an_outage_that_starts_after_now_has_not_happened(session: Session) -> None:
    t = target(session, "a")
    outage(session, t, MID + timedelta(hours=1), None)
    observed(session, t, NOV, DEC)
    found = spans(session, [t.id], MONTH, MID)[t.id]
    assert found.outages == ()
    assert found.observed == (Span(NOV, MID),)  # observed time is clipped at now as well


def test_a_closed_outage_that_ends_after_the_period_is_still_open_in_it(
    session: Session,
) -> None:
    t = target(session, "a")
    outage(session, t, DEC - timedelta(hours=1), DEC + timedelta(hours=1))
    [got] = spans(session, [t.id], MONTH, DEC + timedelta(days=1))[t.id].outages
    assert (got.span, got.still_open) == (Span(DEC - timedelta(hours=1), DEC), True)


def test_series_are_kept_apart_and_other_targets_left_out(session: Session) -> None:
    a, b = target(session, "a"), target(session, "b")
    outage(session, a, MID, MID + timedelta(minutes=5))
    outage(session, a, MID, MID + timedelta(minutes=9), series="usable")
    outage(session, b, MID, MID + timedelta(minutes=7))
    found = spans(session, [a.id], MONTH, DEC)
    assert set(found) == {a.id}
    assert found[a.id].of("reachable") == [Span(MID, MID + timedelta(minutes=5))]
    assert found[a.id].of("usable") == [Span(MID, MID + timedelta(minutes=9))]


def test_nothing_is_read_for_a_period_that_has_not_begun(session: Session) -> None:
    t = target(session, "a")
    observed(session, t, NOV, DEC)
    assert spans(session, [t.id], MONTH, NOV) == {}
