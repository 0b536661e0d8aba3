"""The console's events: pure formatting as tables, the episode tracker, printing only what a
transaction committed, and the lines the probe, feed and alert code print where things happen."""

from __future__ import annotations

import logging
from collections.abc import Iterator
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
from monitor.events.console import ConsoleFormatter, configure_console, level_number
from monitor.events.episodes import Episode
from monitor.events.words import OutageChange
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


# ---- pure formatting ------------------------------------------------------------------------


def test_every_event_word_fits_the_column_and_the_facts_start_in_one_place() -> None:
    starts = {words.line(word, "|facts").index("|") for word in words.WORDS}
    assert starts == {words.WIDTH + 1}
    assert words.line("outage opened", "") == "outage opened"


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("connect refused", 240, "connect refused"),
        ("\n\n  first   line \n second", 240, "first line"),
        ('(psycopg.OperationalError) connection failed\n\tIs the server running?', 240,
         "(psycopg.OperationalError) connection failed"),
        ("x" * 20, 10, "xxxxxxxxx…"),
        ("", 240, ""),
        (ValueError("bad value"), 240, "bad value"),
    ],
    ids=["plain", "first-non-blank-line", "driver-paragraph", "cut", "empty", "exception"],
)  # fmt: skip
def test_one_line_keeps_the_first_line_collapsed_and_cut(
    text: object, limit: int, expected: str
) -> None:
    assert words.one_line(text, limit) == expected


@pytest.mark.parametrize(
    ("at", "expected"),
    [
        (NOON + timedelta(seconds=1), "12:00:01Z"),
        (NOON - timedelta(hours=13), "2026-11-30 23:00:00Z"),
    ],
    ids=["same-day", "other-day"],
)
def test_clock_shows_the_date_only_when_it_is_not_today(at: datetime, expected: str) -> None:
    assert words.clock(at, NOON) == expected


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (0, "0s"),
        (-3, "0s"),
        (42.9, "42s"),
        (65, "1m 05s"),
        (3 * 3600 + 180 + 59, "3h 03m"),
        (3 * 86400 + 4 * 3600 + 59, "3d 04h"),
    ],
    ids=["zero", "negative", "seconds", "minutes", "hours", "days"],
)
def test_duration_gives_two_units_at_most(seconds: float, expected: str) -> None:
    assert words.duration(seconds) == expected


@pytest.mark.parametrize(
    ("returncode", "expected"),
    [(-9, "signal 9"), (1, "code 1"), (0, "code 0")],
    ids=["killed", "failed", "clean"],
)
def test_exit_status_reads_as_people_say_it(returncode: int, expected: str) -> None:
    assert words.exit_status(returncode) == expected


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({"target": "trainer-0", "provider": "aws"}, "trainer-0"),
        ({"provider": "aws", "incident": "abc123", "region": "us-east-1"}, "aws abc123"),
        ({"provider": "gcp", "feed": "https://x/feed"}, "gcp https://x/feed"),
        ({"provider": "azure"}, "azure"),
        ({"vantage": "west"}, "vantage west"),
        ({}, "-"),
    ],
    ids=["target", "incident", "feed", "provider", "vantage", "nothing"],
)
def test_an_alerts_subject_is_its_target_or_provider(labels: dict[str, str], expected: str) -> None:
    assert words.subject(labels) == expected


OPENED_R = OutageChange("gpu-0", "reachable", True, NOON + timedelta(seconds=1), "connect refused")
OPENED_U = OutageChange("gpu-0", "usable", True, NOON + timedelta(seconds=2), None)
CLOSED_R = OutageChange("gpu-0", "reachable", False, NOON, None, 42.4)
CLOSED_U = OutageChange("gpu-0", "usable", False, NOON, None, 42.0)
CLOSED_U_LATER = OutageChange("gpu-0", "usable", False, NOON, None, 600)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ([OPENED_R], [("outage opened", "gpu-0 (reachable) at 12:00:01Z: connect refused")]),
        ([OPENED_U, OPENED_R],
         [("outage opened", "gpu-0 (reachable, usable) at 12:00:01Z: connect refused")]),
        ([OPENED_U], [("outage opened", "gpu-0 (usable) at 12:00:02Z")]),
        ([CLOSED_R, CLOSED_U], [("outage closed", "gpu-0 (reachable, usable) after 42s")]),
        ([CLOSED_R, CLOSED_U_LATER], [("outage closed", "gpu-0 (reachable) after 42s"),
                                      ("outage closed", "gpu-0 (usable) after 10m 00s")]),
        ([OPENED_R, OutageChange("gpu-1", "reachable", True, NOON, "HTTP 503")],
         [("outage opened", "gpu-0 (reachable) at 12:00:01Z: connect refused"),
          ("outage opened", "gpu-1 (reachable) at 12:00:00Z: HTTP 503")]),
        ([], []),
    ],
    ids=["one", "both-series-one-line", "usable-only", "closed-together", "closed-apart",
         "two-targets", "none"],
)  # fmt: skip
def test_outage_lines_tell_one_event_per_target_and_change(
    changes: list[OutageChange], expected: list[tuple[str, str]]
) -> None:
    assert words.outage_lines(changes, NOON) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (words.incident_opened_text("aws", "Increased error rates\nin us-east-1"),
         "aws: Increased error rates"),
        (words.incident_opened_text("gcp", "Upgrade", maintenance=True),
         "gcp: Upgrade [maintenance]"),
        (words.incident_opened_text("azure", "VMs down", relevant=False),
         "azure: VMs down (outside your regions)"),
        (words.incident_resolved_text("aws", "Increased error rates", 5400),
         "aws: Increased error rates after 1h 30m"),
        (words.incident_resolved_text("aws", "Increased error rates", None),
         "aws: Increased error rates"),
        (words.alert_firing_text("target_down", {"target": "trainer-0"}),
         "target_down trainer-0"),
        (words.alert_firing_text("target_down", {"target": "trainer-0"}, muted=True),
         "target_down trainer-0 (muted or grouped: not sent)"),
        (words.alert_resolved_text("sla_burn", {"target": "trainer-0"}), "sla_burn trainer-0"),
        (words.alert_delivered_text("target_down", {"target": "trainer-0"}, "ops", "firing"),
         "target_down trainer-0 → ops (firing)"),
        (words.delivery_given_up_text("target_down", {"target": "t"}, "ops", 7, "HTTP 500"),
         "target_down t → ops after 7 attempts: HTTP 500"),
        (words.delivery_given_up_text("target_down", {"target": "t"}, "ops", 1, None),
         "target_down t → ops after 1 attempt"),
        (words.feed_failing_text("aws", "https://a/f", "https://a/f: ConnectError: refused"),
         "aws https://a/f: ConnectError: refused"),
        (words.feed_failing_text("aws", "https://a/f", "HTTP 503"), "aws https://a/f: HTTP 503"),
        (words.feed_back_text("aws", "https://a/f", 3, 360),
         "aws https://a/f after 6m 00s (3 failed polls)"),
        (words.feed_back_text("aws", "https://a/f", 1, None), "aws https://a/f (1 failed poll)"),
        (words.lost_text("(psycopg.OperationalError) refused\nIs it running?"),
         "(psycopg.OperationalError) refused"),
        (words.lost_text("Error 111 connecting", "probes-1"), "probes-1: Error 111 connecting"),
        (words.lost_text(""), "no reason given"),
        (words.back_text(12.7), "after 12s"),
        (words.back_text(61, "main beat"), "main beat: after 1m 01s"),
        (words.process_exited_text("worker probes-1", -9, 2),
         "worker probes-1 (signal 9); restarting in 2s"),
    ],
    ids=["incident", "maintenance", "irrelevant", "resolved", "resolved-no-start", "firing",
         "muted", "resolved-alert", "delivered", "given-up", "given-up-once", "feed-url-once",
         "feed-error", "feed-back", "feed-back-unknown", "lost", "lost-where", "lost-empty",
         "back", "back-where", "exited"],
)  # fmt: skip
def test_event_facts(text: str, expected: str) -> None:
    assert text == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (words.channel_disabled_text("chat", "slack", "HTTP 403 from https://hooks.slack.com/***:"
                                      " invalid_token\nmore"),
         "chat (slack): HTTP 403 from https://hooks.slack.com/***: invalid_token; deliveries held "
         "until `slamon alerts enable chat` or a config change"),
        (words.channel_disabled_text("odd", "apprise", None),
         "odd (apprise); deliveries held until `slamon alerts enable odd` or a config change"),
        (words.channel_enabled_text("chat", "by hand", 1),
         "chat (by hand); 1 held delivery due now"),
        (words.channel_enabled_text("chat", "its config changed", 3),
         "chat (its config changed); 3 held deliveries due now"),
    ],
    ids=["disabled", "disabled-no-error", "enabled-one", "enabled-several"],
)  # fmt: skip
def test_channel_event_facts(text: str, expected: str) -> None:
    assert text == expected


# ---- episodes -------------------------------------------------------------------------------


def test_an_episode_begins_at_its_first_failure_only() -> None:
    first, began = Episode().fail(NOON)
    again, began_again = first.fail(NOON + timedelta(seconds=5))
    assert (began, began_again) == (True, False)
    assert again == first == Episode(NOON)
    assert again.active


def test_an_episode_ends_with_a_success_and_says_how_long_it_lasted() -> None:
    ended, lasted = Episode(NOON).recover(NOON + timedelta(seconds=12))
    assert (ended, lasted) == (Episode(), 12.0)
    assert ended.recover(NOON + timedelta(seconds=13)) == (Episode(), None)


def test_a_failure_after_recovery_begins_a_new_episode() -> None:
    episode = Episode()
    began = []
    for at, ok in [(0, False), (1, False), (2, True), (3, True), (4, False), (5, False)]:
        moment = NOON + timedelta(seconds=at)
        if ok:
            episode, _ = episode.recover(moment)
        else:
            episode, new = episode.fail(moment)
            began.append(new)
    assert began == [True, False, True, False]


# ---- the console ----------------------------------------------------------------------------


def record(name: str, level: int, message: str, **extra: object) -> logging.LogRecord:
    made = logging.LogRecord(name, level, __file__, 1, message, None, None)
    made.created = NOON.timestamp()
    made.__dict__.update(extra)
    return made


@pytest.mark.parametrize(
    ("made", "expected"),
    [
        (record(emitting.LOGGER_NAME, logging.INFO, words.line("outage opened", "gpu-0")),
         "2026-12-01 12:00:00Z  outage opened     gpu-0"),
        (record("celery.apps.worker", logging.INFO, "w@h ready."),
         "2026-12-01 12:00:00Z  celery            w@h ready."),
        (record("celery.worker.consumer", logging.WARNING, "lost"),
         "2026-12-01 12:00:00Z  celery warning    lost"),
    ],
    ids=["event", "info", "warning"],
)  # fmt: skip
def test_the_formatter_puts_time_then_the_event_or_source_column(
    made: logging.LogRecord, expected: str
) -> None:
    assert ConsoleFormatter().format(made) == expected


@pytest.fixture
def console(capsys: pytest.CaptureFixture[str]) -> Iterator[None]:
    """configure_console's handler on the root logger for the test, then the old state back."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def test_the_console_prints_events_at_any_level_and_other_lines_from_the_level_up(
    console: None, capsys: pytest.CaptureFixture[str]
) -> None:
    configure_console("warning")
    configure_console("WARNING")  # again: still one handler, no line printed twice
    emitting.emit(words.DATABASE_LOST, "refused")
    logging.getLogger("celery.app.trace").info("Task x succeeded")
    logging.getLogger("celery.app.trace").warning("Task x is slow")
    logging.getLogger("celery.apps.worker").setLevel(logging.INFO)
    logging.getLogger("celery.apps.worker").info("w@h ready.", extra={"console": True})
    logging.getLogger("celery.apps.worker").setLevel(logging.NOTSET)
    err = capsys.readouterr().err.splitlines()
    assert [line[22:] for line in err] == [
        "database lost     refused",
        "celery warning    Task x is slow",
        "celery            w@h ready.",
    ]
    assert all(line[19:22] == "Z  " for line in err)


def test_level_names_and_numbers_both_work() -> None:
    assert level_number("info") == logging.INFO
    assert level_number("WARNING") == logging.WARNING
    assert level_number(10) == logging.DEBUG
    assert level_number("nonsense") == logging.WARNING


# ---- printed when the transaction commits ---------------------------------------------------


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


# ---- where things happen --------------------------------------------------------------------


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
