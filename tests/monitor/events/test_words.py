"""The events' text (monitor/events/words.py): pure formatting, tested as tables."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from monitor.events import words
from monitor.events.words import OutageChange

NOON = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)


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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (words.watchdog_pinging_text("hc-ping.com", 60), "hc-ping.com every 1m 00s"),
        (words.watchdog_pinging_text("hc-ping.com", 60, 250.4), "hc-ping.com again after 4m 10s"),
        (words.watchdog_silent_text(["dispatch 42s late (probes-dispatch; max_lag 30s)"]),
         "not pinging: dispatch 42s late (probes-dispatch; max_lag 30s)"),
        (words.watchdog_silent_text(["no scheduler leads", "broker x unreachable: refused\n…"]),
         "not pinging: no scheduler leads; broker x unreachable: refused"),
        (words.watchdog_silent_text([]), "not pinging: unhealthy"),
        (words.watchdog_failing_text("hc-ping.com", "HTTP 503"), "hc-ping.com: HTTP 503"),
        (words.watchdog_failing_text("hc-ping.com", ""), "hc-ping.com: no answer"),
    ],
    ids=["first-ping", "again", "silent", "silent-several", "silent-no-reason", "failing",
         "failing-no-error"],
)  # fmt: skip
def test_watchdog_event_facts(text: str, expected: str) -> None:
    assert text == expected
