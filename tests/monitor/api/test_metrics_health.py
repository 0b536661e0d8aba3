"""/metrics: slamon's own health, read live at every scrape and parsed back with
prometheus-client's parser."""

from __future__ import annotations

from datetime import timedelta

import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.orm import Session, sessionmaker

from monitor.db.base import utcnow
from monitor.health.read import record_ping
from tests.monitor.health.rows import clear, put_delivery, put_lease, put_slot
from tests.support import ApiClient

Key = tuple[str, tuple[tuple[str, str], ...]]


def samples(text: str) -> dict[Key, float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name.startswith("slamon_")
    }


def test_metrics_tell_who_leads_how_late_the_schedule_is_and_the_last_ping(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    now = utcnow()
    with sessions() as session:
        clear(session)
        put_lease(session, "web-1:4242", 7, now=now)
        dispatch = put_slot(session, "probes-dispatch", 1.0, done_ago_s=0.3, fenced=2, now=now)
        put_slot(session, "alerts-deliver", 5.0, done_ago_s=2, repeated=1, now=now)
        put_slot(session, "reports-monthly", None, now=now)
        record_ping(session, "web-1:4242", now - timedelta(seconds=30), taken=True)
        session.commit()
    assert dispatch.done_at is not None

    found = samples(api.get("/metrics").text)

    assert found["slamon_healthy", ()] == 1
    assert found["slamon_scheduler_leader_info", (("leader", "web-1:4242"),)] == 1
    assert found["slamon_scheduler_fencing_token", ()] == 7
    assert 0 <= found["slamon_schedule_lag_seconds", ()] < 30
    entries = {k[1][0][1] for k in found if k[0] == "slamon_schedule_entry_lag_seconds"}
    assert entries == {"probes-dispatch", "alerts-deliver"}  # the calendar entry is not judged
    assert found["slamon_last_dispatch_timestamp_seconds", ()] == pytest.approx(
        dispatch.done_at.timestamp()
    )
    refused = {
        (dict(k[1])["entry"], dict(k[1])["reason"]): v
        for k, v in found.items()
        if k[0] == "slamon_schedule_refused_total"
    }
    assert refused == {
        ("probes-dispatch", "fenced"): 2,
        ("probes-dispatch", "repeated"): 0,
        ("alerts-deliver", "fenced"): 0,
        ("alerts-deliver", "repeated"): 1,
        ("reports-monthly", "fenced"): 0,
        ("reports-monthly", "repeated"): 0,
    }
    assert found["slamon_oldest_pending_delivery_seconds", ()] == 0
    assert found["slamon_watchdog_last_ping_timestamp_seconds", ()] == pytest.approx(
        (now - timedelta(seconds=30)).timestamp()
    )


def test_a_lapsed_lease_and_a_backlog_show_at_the_next_scrape(
    api: ApiClient, sessions: sessionmaker[Session]
) -> None:
    with sessions() as session:
        clear(session)
        put_lease(session, "web-1:4242", 7)
        put_slot(session, "probes-dispatch", 1.0, done_ago_s=0.3)
        session.commit()
    assert samples(api.get("/metrics").text)["slamon_healthy", ()] == 1
    with sessions() as session:
        put_lease(session, "web-1:4242", 7, expires_in_s=-60)
        put_slot(session, "probes-dispatch", 1.0, done_ago_s=90)
        put_delivery(session, 7200)
        session.commit()

    found = samples(api.get("/metrics").text)  # within the cache's 15 s: read live

    assert found["slamon_healthy", ()] == 0
    assert not [k for k in found if k[0] == "slamon_scheduler_leader_info"]
    assert found["slamon_scheduler_fencing_token", ()] == 7
    assert found["slamon_schedule_lag_seconds", ()] > 60
    assert found["slamon_oldest_pending_delivery_seconds", ()] > 7000
    assert ("slamon_watchdog_last_ping_timestamp_seconds", ()) not in found
