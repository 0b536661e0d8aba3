"""Re-posting an alertmanager channel's alerts (monitor/alerts/resend.py): what the engine told
the channel and still stands is posted again, with ``endsAt`` moved on; a resolve for 15
minutes; nothing that was muted, refused, routed elsewhere or resolved long ago. Alertmanager
is faked at the HTTP layer (the real one hears the resend in tests/scenarios)."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
import respx
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from monitor.alerts import resend
from monitor.alerts.engine import apply
from monitor.alerts.rules import Signal, fingerprint
from monitor.config import parse_config
from monitor.config.models import Config
from monitor.db.models import Channel, Delivery

NOW = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)  # on every period's slot
AM, AM_1 = "http://am-0.example:9093", "http://am-1.example:9093"
CONFIG = parse_config(
    f"""
channels:
  - {{name: am, kind: alertmanager, urls: ['{AM}', '{AM_1}']}}
  - {{name: ops, kind: webhook, url: "https://hooks.example/ops"}}
routes:
  - {{match: {{severity: critical}}, channels: [am, ops]}}
  - {{match: {{}}, channels: [ops]}}
silences:
  - {{match: {{target: muted}}, end: 2027-01-01T00:00:00Z}}
"""
)


def signal(
    target: str, firing: bool = True, severity: str = "critical", at: datetime = NOW
) -> Signal:
    labels = {"target": target}
    identity = fingerprint("target_down", labels)
    return Signal("target_down", identity, severity, labels, f"{target} is down", firing, at)


def told(sessions: sessionmaker[Session], *signals: Signal, at: datetime = NOW) -> None:
    with sessions() as session, session.begin():
        apply(session, signals, CONFIG, at, public_url="https://slamon.example")


@pytest.fixture
def alertmanagers() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_called=False) as router:
        router.post(f"{AM}/api/v2/alerts").respond(200)
        router.post(f"{AM_1}/api/v2/alerts").respond(200)
        yield router


def resent(
    sessions: sessionmaker[Session],
    router: respx.MockRouter,
    at: datetime = NOW,
    config: Config = CONFIG,
) -> list[list[dict[str, Any]]]:
    """Run a resend at ``at``; the bodies each Alertmanager got, in order (one per POST)."""
    router.reset()
    with httpx.Client() as client:
        resend.resend(sessions, client, config, at)
    return [json.loads(call.request.content) for call in router.calls]


def fingerprints(body: list[dict[str, Any]]) -> list[str]:
    return [alert["labels"]["target"] for alert in body]


@pytest.mark.parametrize(
    ("now_s", "run_every", "every", "due"),
    [
        (120, 60, 60, True),  # resent at each run
        (90, 30, 90, True),  # a 90 s slot began at 90 s, in the run (60, 90]
        (60, 30, 90, False),
        (180, 60, 90, True),  # 180 is a 90 s slot
        (240, 60, 90, False),
        (270 + 30, 60, 90, True),  # the run at 300 holds the slot at 270
        (305, 60, 90, True),  # a run a few seconds late still counts its own slot
    ],
)
def test_a_channel_is_due_in_the_run_holding_one_of_its_slots(
    now_s: int, run_every: float, every: float, due: bool
) -> None:
    now = datetime.fromtimestamp(now_s, UTC)
    assert resend.due(now, run_every, every) is due


def test_the_task_runs_at_the_shortest_resend_period_and_not_without_alertmanagers() -> None:
    config = parse_config(
        "channels:\n"
        "  - {name: a, kind: alertmanager, url: 'http://a:9093', resend_every: 2m}\n"
        "  - {name: b, kind: alertmanager, url: 'http://b:9093', resend_every: 30s}\n"
    )
    assert resend.period(config) == 30
    assert (
        resend.period(parse_config("channels: [{name: a, kind: alertmanager, url: 'http://a'}]"))
        == 60
    )
    assert (
        resend.period(parse_config("channels: [{name: a, kind: webhook, url: 'http://a'}]")) is None
    )


def test_a_firing_alert_is_posted_again_to_every_alertmanager_with_its_end_moved_on(
    sessions: sessionmaker[Session], alertmanagers: respx.MockRouter
) -> None:
    started = NOW - timedelta(minutes=10)
    told(sessions, signal("gpu-0", at=started), at=started)

    first, second = resent(sessions, alertmanagers)

    assert first == second
    [alert] = first
    assert alert["labels"]["alertname"] == "target_down"
    assert alert["labels"]["target"] == "gpu-0"
    assert datetime.fromisoformat(alert["startsAt"]) == started
    assert datetime.fromisoformat(alert["endsAt"]) == NOW + timedelta(minutes=4)
    assert alert["generatorURL"] == "https://slamon.example/targets/gpu-0"


def test_a_resolved_alert_is_posted_again_for_fifteen_minutes(
    sessions: sessionmaker[Session], alertmanagers: respx.MockRouter
) -> None:
    started, resolved_at = NOW - timedelta(minutes=10), NOW - timedelta(minutes=5)
    told(sessions, signal("gpu-0", at=started), at=started)
    told(sessions, signal("gpu-0", firing=False, at=resolved_at), at=resolved_at)

    [body, _] = resent(sessions, alertmanagers)
    later = resent(sessions, alertmanagers, at=resolved_at + timedelta(minutes=16))

    [alert] = body
    assert datetime.fromisoformat(alert["endsAt"]) == resolved_at
    assert later == []


def test_only_what_was_told_to_the_channel_and_still_routed_there_is_posted_again(
    sessions: sessionmaker[Session], alertmanagers: respx.MockRouter
) -> None:
    told(
        sessions,
        signal("gpu-0"),
        signal("muted"),  # silenced when it fired: never told
        signal("warm", severity="warning"),  # routed to ops only
    )
    rerouted = CONFIG.model_copy(update={"routes": CONFIG.routes[1:]})  # critical: ops only

    [body, _] = resent(sessions, alertmanagers)
    assert resent(sessions, alertmanagers, config=rerouted) == []

    assert fingerprints(body) == ["gpu-0"]


def test_a_refused_message_and_a_disabled_channel_are_not_posted_again(
    sessions: sessionmaker[Session], alertmanagers: respx.MockRouter
) -> None:
    told(sessions, signal("gpu-0"), signal("gpu-1"))
    with sessions() as session, session.begin():
        target = fingerprint("target_down", {"target": "gpu-1"})
        session.execute(
            update(Delivery)
            .where(Delivery.payload["fingerprint"].as_string() == target)
            .values(status="failed")
        )

    [body, _] = resent(sessions, alertmanagers)
    with sessions() as session, session.begin():
        session.execute(update(Channel).where(Channel.name == "am").values(enabled=False))

    assert fingerprints(body) == ["gpu-0"]
    assert resent(sessions, alertmanagers) == []


def test_alerts_are_posted_in_batches_of_64(
    sessions: sessionmaker[Session], alertmanagers: respx.MockRouter
) -> None:
    told(sessions, *(signal(f"gpu-{i:03}") for i in range(70)))

    bodies = resent(sessions, alertmanagers)

    assert [len(body) for body in bodies] == [64, 64, 6, 6]  # each batch to both


def test_an_alertmanager_that_is_away_is_logged_and_the_other_still_told(
    sessions: sessionmaker[Session], caplog: pytest.LogCaptureFixture
) -> None:
    told(sessions, signal("gpu-0"))
    with respx.mock() as router:
        away = router.post(f"{AM}/api/v2/alerts").mock(side_effect=httpx.ConnectError("refused"))
        there = router.post(f"{AM_1}/api/v2/alerts").respond(200)
        with caplog.at_level(logging.WARNING), httpx.Client() as client:
            run = resend.resend(sessions, client, CONFIG, NOW)

    assert away.called
    assert there.called
    assert (run.channels, run.alerts, run.accepted, run.refused) == (1, 1, 1, 1)
    [record] = caplog.records
    assert "alertmanager channel 'am': 1 alerts not resent" in record.getMessage()
    assert "am-0.example" in record.getMessage()
