"""Printing events (monitor/events/emitting.py): only what a transaction committed, and the lines
the probe, feed and alert code print where things happen."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta

import httpx
import pytest
import respx
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from monitor.alerts.engine import apply
from monitor.alerts.rules import Signal
from monitor.config import parse_config
from monitor.config.models import TargetConfig
from monitor.db.base import utcnow
from monitor.db.models import Provider
from monitor.events import emitting, words
from monitor.feeds.model import Incident
from monitor.feeds.poll import poll_feed
from monitor.feeds.service import feeds_to_poll, sync_catalog
from monitor.feeds.store import store_incidents
from monitor.probes.model import ProbeResult
from monitor.probes.record import record_round
from monitor.targets import upsert_target

NOON = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)
GCP_URL = "https://status.cloud.google.com/incidents.json"


@pytest.fixture
def event_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """Captures the events printed during the test (``lines_of`` reads them back)."""
    caplog.set_level(logging.INFO, logger=emitting.LOGGER_NAME)
    return caplog


def lines_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == emitting.LOGGER_NAME]


def words_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [line[: words.WIDTH].strip() for line in lines_of(caplog)]


def test_an_event_is_printed_when_its_transaction_commits_and_only_then(
    sessions: sessionmaker[Session], event_log: pytest.LogCaptureFixture
) -> None:
    with sessions() as session, session.begin():
        emitting.after_commit(session, words.FEED_BACK, "aws")
        assert lines_of(event_log) == []
    assert lines_of(event_log) == [words.line(words.FEED_BACK, "aws")]


def test_a_rolled_back_event_is_never_printed_not_even_at_the_next_commit(
    sessions: sessionmaker[Session], event_log: pytest.LogCaptureFixture
) -> None:
    with sessions() as session:
        session.begin()
        emitting.after_commit(session, words.FEED_BACK, "rolled back")
        session.rollback()  # the round failed
        with session.begin():
            emitting.after_commit(session, words.FEED_BACK, "committed")
        with session.begin():
            pass
    assert lines_of(event_log) == [words.line(words.FEED_BACK, "committed")]


def test_a_released_savepoint_waits_for_the_outer_commit(
    sessions: sessionmaker[Session], event_log: pytest.LogCaptureFixture
) -> None:
    with sessions() as session, session.begin():
        with session.begin_nested():
            emitting.after_commit(session, words.FEED_BACK, "inner")
        assert lines_of(event_log) == []
    assert lines_of(event_log) == [words.line(words.FEED_BACK, "inner")]


def add_target(sessions: sessionmaker[Session], name: str) -> int:
    cfg = TargetConfig.model_validate(
        {"name": name, "kind": "http", "url": "http://127.0.0.1:9/healthz", "interval": 1}
    )
    with sessions() as session, session.begin():
        row = upsert_target(session, cfg, "config")
        session.flush()
        return row.id


def probe(sessions: sessionmaker[Session], tid: int, at: datetime, ok: bool) -> None:
    error = {} if ok else {"error_kind": "http_status", "error": "HTTP 503", "status_code": 503}
    result = ProbeResult(tid, "trainer-0", at, ok, latency_ms=3.0, **error)  # type: ignore[arg-type]
    with sessions() as session, session.begin():
        record_round(session, "test", [result], now=at)


def test_a_target_that_fails_and_recovers_prints_one_opened_and_one_closed_line(
    sessions: sessionmaker[Session], event_log: pytest.LogCaptureFixture
) -> None:
    tid = add_target(sessions, "trainer-0")
    start = utcnow().replace(microsecond=0) - timedelta(seconds=10)
    for second, ok in enumerate([True, False, False, False, True, True, True]):
        probe(sessions, tid, start + timedelta(seconds=second), ok)
    opened_at = words.clock(start + timedelta(seconds=1), utcnow())
    assert lines_of(event_log) == [
        words.line("outage opened", f"trainer-0 (reachable) at {opened_at}: HTTP 503"),
        words.line("outage closed", "trainer-0 (reachable) after 3s"),
    ]


def test_a_round_that_is_rolled_back_prints_no_outage(
    sessions: sessionmaker[Session], event_log: pytest.LogCaptureFixture
) -> None:
    tid = add_target(sessions, "trainer-0")
    start = utcnow() - timedelta(seconds=5)
    probe(sessions, tid, start, True)
    probe(sessions, tid, start + timedelta(seconds=1), False)
    failing = ProbeResult(tid, "trainer-0", start + timedelta(seconds=2), False, error="HTTP 503")
    with sessions() as session:
        session.begin()
        record_round(session, "test", [failing], now=failing.at)
        session.rollback()  # the database went away before the commit
    assert lines_of(event_log) == []


def test_a_feed_prints_failing_once_per_episode_and_back_when_it_reads_again(
    sessions: sessionmaker[Session], event_log: pytest.LogCaptureFixture
) -> None:
    with sessions() as session, session.begin():
        sync_catalog(session, parse_config(""))
        [fid] = feeds_to_poll(session, "gcp")
    with respx.mock, httpx.Client(timeout=2) as client:
        route = respx.get(GCP_URL)
        route.return_value = httpx.Response(503)
        for minute in range(3):
            poll_feed(sessions, client, fid, now=NOON + timedelta(minutes=minute))
        route.return_value = httpx.Response(200, content=b"[]")
        poll_feed(sessions, client, fid, now=NOON + timedelta(minutes=3))
        poll_feed(sessions, client, fid, now=NOON + timedelta(minutes=4))
    assert words_of(event_log) == ["feed failing", "feed back"]
    failing, back = lines_of(event_log)
    assert failing.endswith(f"gcp {GCP_URL}: HTTP 503")
    assert back.endswith(f"gcp {GCP_URL} (3 failed polls)")  # never read before: no duration


def incident(status: str, resolved: datetime | None = None) -> Incident:
    return Incident(
        "aws", "evt-1", "Increased API error rates", status, "major",  # type: ignore[arg-type]
        False, NOON, resolved, None, regions=("us-east-1",),
    )  # fmt: skip


def test_an_incident_prints_opened_when_it_opens_and_resolved_when_it_ends(
    sessions: sessionmaker[Session], event_log: pytest.LogCaptureFixture
) -> None:
    with sessions() as session, session.begin():
        sync_catalog(session, parse_config(""))
    later = NOON + timedelta(hours=2)
    documents = [
        [incident("investigating")],
        [incident("identified")],  # changed, still open: nothing to tell
        [incident("resolved", later)],
        [incident("resolved", later)],  # unchanged
    ]
    for seen, document in enumerate(documents):
        with sessions() as session, session.begin():
            aws = session.scalars(select(Provider).where(Provider.slug == "aws")).one()
            store_incidents(session, aws, None, document, seen_at=NOON + timedelta(minutes=seen))
    assert lines_of(event_log) == [
        words.line("incident opened", "aws: Increased API error rates"),
        words.line("incident resolved", "aws: Increased API error rates after 2h 00m"),
    ]


def test_an_incident_first_seen_already_resolved_is_history_not_news(
    sessions: sessionmaker[Session], event_log: pytest.LogCaptureFixture
) -> None:
    with sessions() as session, session.begin():
        sync_catalog(session, parse_config(""))
        aws = session.scalars(select(Provider).where(Provider.slug == "aws")).one()
        store_incidents(session, aws, None, [incident("resolved", NOON)], seen_at=NOON)
    assert lines_of(event_log) == []


def test_an_alert_prints_firing_once_and_resolved_once(
    sessions: sessionmaker[Session], event_log: pytest.LogCaptureFixture
) -> None:
    labels = {"target": "trainer-0", "provider": "aws"}

    def signal(firing: bool, at: datetime) -> Signal:
        return Signal("target_down", "fp-1", "critical", labels, "down", firing, at)

    config = parse_config("")
    for seconds, firing in [(0, True), (30, True), (60, False), (90, False)]:
        at = NOON + timedelta(seconds=seconds)
        with sessions() as session, session.begin():
            apply(session, [signal(firing, at)], config, at)
    assert lines_of(event_log) == [
        words.line("alert firing", "target_down trainer-0"),
        words.line("alert resolved", "target_down trainer-0"),
    ]
