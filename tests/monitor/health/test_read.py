"""Reading the snapshot on SQLite and PostgreSQL, and recording the watchdog's pings."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy.orm import Session

from monitor.db.base import utcnow
from monitor.health.judge import judge
from monitor.health.model import Bounds, Ping, Slot, Snapshot
from monitor.health.read import read_snapshot, record_ping
from tests.monitor.health.rows import clear, put_delivery, put_feed, put_lease, put_slot


def test_an_empty_database_reads_as_nothing_known(session: Session) -> None:
    clear(session)
    snapshot = read_snapshot(session)
    assert snapshot == Snapshot(now=snapshot.now)
    assert abs((snapshot.now - utcnow()).total_seconds()) < 60


def test_the_snapshot_holds_the_lease_the_slots_the_oldest_pending_and_the_newest_poll(
    session: Session,
) -> None:
    clear(session)
    now = utcnow()
    held = put_lease(session, "web-1:4242", 9, held_for_s=3, expires_in_s=15, now=now)
    put_slot(session, "probes-dispatch", 1.0, done_ago_s=0.5, fenced=2, now=now)
    put_slot(session, "alerts-deliver", 5.0, repeated=1, now=now)
    put_slot(session, "reports-monthly", None, now=now)
    put_delivery(session, 3600, status="delivered", now=now)  # older, but not pending
    put_delivery(session, 3000, status="failed", now=now)  # given up: not pending either
    pending = put_delivery(session, 700, now=now)
    put_delivery(session, 10, now=now)
    put_feed(session, "https://a/feed", polled_ago_s=400, now=now)
    put_feed(session, "https://b/feed", polled_ago_s=90, failing=True, now=now)  # counts
    put_feed(session, "https://c/feed", polled_ago_s=1, enabled=False, now=now)  # does not

    snapshot = read_snapshot(session)

    assert snapshot.lease is not None
    assert (snapshot.lease.holder, snapshot.lease.token) == ("web-1:4242", 9)
    assert snapshot.lease.acquired_at == held.acquired_at
    assert snapshot.lease.expires_at == held.expires_at
    assert snapshot.slots == (
        Slot("alerts-deliver", 5.0, repeated=1),
        Slot(
            "probes-dispatch",
            1.0,
            *(now - timedelta(seconds=0.5),) * 4,
            fenced=2,
        ),
        Slot("reports-monthly", None),
    )
    assert snapshot.oldest_pending == pending.created_at
    assert snapshot.feeds == 2
    assert snapshot.last_feed_poll == now - timedelta(seconds=90)
    judgement = judge(snapshot, Bounds(max_lag_s=30, max_backlog_s=600, max_feed_age_s=360))
    assert judgement.leader == "web-1:4242"
    assert judgement.kinds == ("backlog",)
    assert judgement.backlog_s == pytest.approx(700, abs=30)


def test_feeds_never_polled_count_from_when_they_were_added(session: Session) -> None:
    clear(session)
    now = utcnow()
    put_feed(session, "https://a/feed", polled_ago_s=None, now=now)
    snapshot = read_snapshot(session)
    assert (snapshot.feeds, snapshot.last_feed_poll) == (1, now - timedelta(days=1))


def test_a_ping_is_recorded_and_a_failure_keeps_the_last_ping_taken(session: Session) -> None:
    clear(session)
    first = utcnow() - timedelta(minutes=2)
    record_ping(session, "web-1:4242", first, taken=True)
    assert read_snapshot(session).ping == Ping("web-1:4242", first, first, None)
    later = first + timedelta(minutes=1)
    record_ping(session, "web-2:77", later, taken=False, error="HTTP 503")
    assert read_snapshot(session).ping == Ping("web-2:77", later, first, "HTTP 503")
    record_ping(session, "web-2:77", later + timedelta(minutes=1), taken=True)
    ping = read_snapshot(session).ping
    assert ping is not None
    assert (ping.pinged_at, ping.error) == (later + timedelta(minutes=1), None)
