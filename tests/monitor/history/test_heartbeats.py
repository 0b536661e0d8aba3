"""monitor/history/heartbeats.py: latest heartbeats, throughput series and slow stretches
derived from the heartbeats themselves, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy.orm import Session

from monitor.history.heartbeats import around, latest, slow_in, throughput
from monitor.sla.intervals import Span
from monitor.sla.slowdown import SlowdownRule
from tests.monitor.history.conftest import DEC, NOV, heartbeat, target

MONTH = Span(NOV, DEC)
MID = NOV + timedelta(days=15)
RULE = SlowdownRule(
    share=0.5, after=timedelta(minutes=2), trailing=timedelta(minutes=10), min_samples=5
)


def test_the_latest_heartbeat_of_each_target_with_its_unit(session: Session) -> None:
    a, b, silent = target(session, "a"), target(session, "b"), target(session, "silent")
    heartbeat(session, a, MID, 10.0, unit="tokens")
    heartbeat(session, a, MID + timedelta(minutes=1), 12.0, unit="tokens")
    heartbeat(session, b, MID, None)
    found = latest(session, [a.id, b.id, silent.id])
    assert set(found) == {a.id, b.id}
    assert (found[a.id].at, found[a.id].throughput, found[a.id].unit) == (
        MID + timedelta(minutes=1),
        12.0,
        "tokens",
    )
    assert (found[b.id].throughput, found[b.id].unit) == (None, None)


def test_throughput_is_read_in_order_within_the_bounds(session: Session) -> None:
    t = target(session, "a")
    for minutes in (5, 1, 3):
        heartbeat(session, t, MID + timedelta(minutes=minutes), float(minutes))
    heartbeat(session, t, MID + timedelta(minutes=2), None)  # no figure: not a sample
    heartbeat(session, t, NOV - timedelta(hours=2), 9.0)  # before the period's edge
    found = around(session, [t.id], MONTH)[t.id]
    assert [v for _, v in found.samples] == [1.0, 3.0, 5.0]
    assert found.unit == "samples"
    assert throughput(session, [t.id], MID + timedelta(minutes=2), DEC)[t.id].samples == (
        (MID + timedelta(minutes=3), 3.0),
        (MID + timedelta(minutes=5), 5.0),
    )


def test_a_slow_stretch_comes_from_the_heartbeats_and_ends_at_the_first_sample_back(
    session: Session,
) -> None:
    t = target(session, "job")
    start = MID
    for i in range(40):  # every 30 s: 20 at 100/s, 10 at 20/s (5 min slow), 10 back at 100/s
        rate = 20.0 if 20 <= i < 30 else 100.0
        heartbeat(session, t, start + timedelta(seconds=30 * i), rate)
    series = around(session, [t.id], MONTH)[t.id]
    assert slow_in(series, MONTH, DEC, RULE) == (
        Span(start + timedelta(seconds=600), start + timedelta(seconds=900)),
    )
    # the same samples judged at a now inside the slowdown: still open at now
    now = start + timedelta(seconds=780)
    assert slow_in(series, MONTH, now, RULE) == (Span(start + timedelta(seconds=600), now),)
