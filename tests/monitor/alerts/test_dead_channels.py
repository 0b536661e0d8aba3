"""A receiver that says its channel is dead disables it (monitor/alerts/delivery.py,
monitor/alerts/channel_state.py): the channel records when and why, its deliveries are held
while the other channels still get theirs, and a config change or `enable` sends what it held.
Real SQLite and PostgreSQL; the receivers are faked at the HTTP layer (respx)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import datetime, timedelta

import httpx
import pytest
import respx
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from monitor.alerts.channel_state import (
    channel_states,
    config_digest,
    enable,
    same_config,
)
from monitor.alerts.delivery import DeliveryRun, deliver_due
from monitor.alerts.engine import apply
from monitor.alerts.rules import Signal
from monitor.config import Config, parse_config
from monitor.config.models import ChannelConfig
from monitor.db.base import utcnow
from monitor.db.models import Channel, Delivery
from monitor.events import emitting, words

SLACK_TOKEN = "sl4ckT0kenS3cretValue24x"
SLACK_URL = f"https://hooks.slack.com/services/T0SLAMON1/B0SLAMON1/{SLACK_TOKEN}"
NEW_SLACK_URL = "https://hooks.slack.com/services/T0SLAMON1/B0SLAMON2/n3wT0kenS3cretValue24xx"
WEBHOOK_URL = "https://hooks.example.com/slamon"
DEAD_ERROR = "HTTP 403 from https://hooks.slack.com/***: invalid_token"


def configure(slack_url: str = SLACK_URL, extra: str = "") -> Config:
    return parse_config(f"""
alerts: {{retry_base: 10s, max_delivery_age: 1h}}
channels:
  - {{name: chat, kind: slack, url: "{slack_url}"}}
  - {{name: ops, kind: webhook, url: "{WEBHOOK_URL}"}}
{extra}
""")


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_called=False, assert_all_mocked=True) as mock:
        yield mock


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client() as http:
        yield http


@pytest.fixture
def event_log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.INFO, logger=emitting.LOGGER_NAME)
    return caplog


class Clock:
    def __init__(self) -> None:
        self.now = utcnow()

    def __call__(self) -> datetime:
        return self.now


def fire(sessions: sessionmaker[Session], config: Config, target: str, at: datetime) -> None:
    labels = {"target": target, "provider": "aws"}
    signal = Signal("target_down", f"fp-{target}", "critical", labels, f"{target} down", True, at)
    with sessions() as session, session.begin():
        apply(session, [signal], config, at)


def channel(sessions: sessionmaker[Session], name: str) -> Channel:
    with sessions() as session:
        return session.scalars(select(Channel).where(Channel.name == name)).one()


def deliveries(sessions: sessionmaker[Session], name: str) -> list[tuple[str, str, int]]:
    """(target, status, attempts) of each delivery to channel ``name``, oldest first."""
    with sessions() as session:
        rows = session.scalars(
            select(Delivery).join(Channel).where(Channel.name == name).order_by(Delivery.id)
        )
        return [(r.payload["labels"]["target"], r.status, r.attempts) for r in rows]


def lines_of(caplog: pytest.LogCaptureFixture, word: str) -> list[str]:
    found = [r.getMessage() for r in caplog.records if r.name == emitting.LOGGER_NAME]
    return [line for line in found if line.startswith(word)]


def disabled_by_a_dead_answer(
    sessions: sessionmaker[Session],
    client: httpx.Client,
    router: respx.MockRouter,
    clock: Clock,
    config: Config,
) -> tuple[respx.Route, respx.Route]:
    """gpu-0 fires; Slack answers invalid_token, the webhook takes it. The routes."""
    slack = router.post(SLACK_URL).respond(403, text="invalid_token")
    webhook = router.post(WEBHOOK_URL).respond(204)
    fire(sessions, config, "gpu-0", clock())
    run = deliver_due(sessions, client, config, "w1", clock=clock)
    assert run == DeliveryRun(delivered=1, held=1)
    return slack, webhook


def test_a_dead_answer_disables_the_channel_and_the_next_alert_reaches_only_the_others(
    sessions: sessionmaker[Session],
    client: httpx.Client,
    router: respx.MockRouter,
    event_log: pytest.LogCaptureFixture,
) -> None:
    clock, config = Clock(), configure()
    slack, webhook = disabled_by_a_dead_answer(sessions, client, router, clock, config)

    chat = channel(sessions, "chat")
    assert (chat.enabled, chat.disabled_at, chat.last_error) == (False, clock.now, DEAD_ERROR)
    assert SLACK_TOKEN not in (chat.last_error or "") + (chat.config_digest or "")
    assert channel(sessions, "ops").enabled

    clock.now += timedelta(minutes=1)
    fire(sessions, config, "gpu-1", clock())
    run = deliver_due(sessions, client, config, "w1", clock=clock)

    assert run == DeliveryRun(delivered=1)
    assert slack.call_count == 1  # only the answer that disabled it
    assert webhook.call_count == 2
    assert deliveries(sessions, "chat") == [("gpu-0", "pending", 1), ("gpu-1", "pending", 0)]
    assert deliveries(sessions, "ops") == [("gpu-0", "delivered", 1), ("gpu-1", "delivered", 1)]
    assert lines_of(event_log, words.CHANNEL_DISABLED) == [
        words.line(
            words.CHANNEL_DISABLED,
            f"chat (slack): {DEAD_ERROR}; deliveries held until `slamon alerts enable chat` or "
            "a config change",
        )
    ]


def test_an_unchanged_config_keeps_the_channel_disabled(
    sessions: sessionmaker[Session], client: httpx.Client, router: respx.MockRouter
) -> None:
    clock, config = Clock(), configure()
    slack, _ = disabled_by_a_dead_answer(sessions, client, router, clock, config)

    for _ in range(3):
        clock.now += timedelta(minutes=5)
        deliver_due(sessions, client, configure(), "w1", clock=clock)  # the same file, re-read

    assert not channel(sessions, "chat").enabled
    assert slack.call_count == 1


def test_a_config_change_enables_the_channel_and_sends_what_it_held(
    sessions: sessionmaker[Session],
    client: httpx.Client,
    router: respx.MockRouter,
    event_log: pytest.LogCaptureFixture,
) -> None:
    clock, config = Clock(), configure()
    old, _ = disabled_by_a_dead_answer(sessions, client, router, clock, config)
    fire(sessions, config, "gpu-1", clock())
    new = router.post(NEW_SLACK_URL).respond(200, text="ok")

    clock.now += timedelta(minutes=1)
    run = deliver_due(sessions, client, configure(NEW_SLACK_URL), "w1", clock=clock)

    assert run.delivered == 3  # the two held for chat, gpu-1's for ops
    assert (old.call_count, new.call_count) == (1, 2)
    chat = channel(sessions, "chat")
    assert (chat.enabled, chat.disabled_at, chat.last_error) == (True, None, None)
    assert deliveries(sessions, "chat") == [("gpu-0", "delivered", 2), ("gpu-1", "delivered", 1)]
    assert lines_of(event_log, words.CHANNEL_ENABLED) == [
        words.line(words.CHANNEL_ENABLED, "chat (its config changed); 2 held deliveries due now")
    ]


def test_enabling_by_hand_sends_what_it_held(
    sessions: sessionmaker[Session], client: httpx.Client, router: respx.MockRouter
) -> None:
    clock, config = Clock(), configure()
    slack, _ = disabled_by_a_dead_answer(sessions, client, router, clock, config)
    slack.respond(200, text="ok")  # the workspace admin put the app back

    with sessions() as session, session.begin():
        row = session.scalars(select(Channel).where(Channel.name == "chat")).one()
        assert enable(session, row, config, clock(), "by hand") == 1
    run = deliver_due(sessions, client, config, "w1", clock=clock)

    assert run == DeliveryRun(delivered=1)
    assert slack.call_count == 2
    assert deliveries(sessions, "chat") == [("gpu-0", "delivered", 2)]


def test_a_held_delivery_expires_after_the_max_delivery_age(
    sessions: sessionmaker[Session],
    client: httpx.Client,
    router: respx.MockRouter,
    event_log: pytest.LogCaptureFixture,
) -> None:
    clock, config = Clock(), configure()
    disabled_by_a_dead_answer(sessions, client, router, clock, config)

    clock.now += timedelta(minutes=59)
    assert deliver_due(sessions, client, config, "w1", clock=clock) == DeliveryRun()
    clock.now += timedelta(minutes=2)
    assert deliver_due(sessions, client, config, "w1", clock=clock) == DeliveryRun(failed=1)

    assert deliveries(sessions, "chat") == [("gpu-0", "expired", 1)]
    assert not channel(sessions, "chat").enabled
    [given_up] = lines_of(event_log, words.DELIVERY_GIVEN_UP)
    assert "held while channel 'chat' was disabled" in given_up


def test_an_answer_that_rejects_one_message_fails_it_and_keeps_the_channel(
    sessions: sessionmaker[Session], client: httpx.Client, router: respx.MockRouter
) -> None:
    clock, config = Clock(), configure()
    router.post(SLACK_URL).respond(200, text="ok")
    webhook = router.post(WEBHOOK_URL).respond(400, text="unexpected field 'extra'")
    fire(sessions, config, "gpu-0", clock())
    assert deliver_due(sessions, client, config, "w1", clock=clock) == DeliveryRun(1, 0, 1)

    webhook.respond(204)
    fire(sessions, config, "gpu-1", clock())
    assert deliver_due(sessions, client, config, "w1", clock=clock) == DeliveryRun(delivered=2)

    ops = channel(sessions, "ops")
    assert (ops.enabled, ops.disabled_at, ops.last_error) == (True, None, None)
    assert deliveries(sessions, "ops") == [("gpu-0", "failed", 1), ("gpu-1", "delivered", 1)]


def test_a_receivers_bad_moment_is_retried_and_never_disables(
    sessions: sessionmaker[Session], client: httpx.Client, router: respx.MockRouter
) -> None:
    clock, config = Clock(), configure()
    router.post(SLACK_URL).respond(503, text="invalid_token")
    router.post(WEBHOOK_URL).respond(429, headers={"Retry-After": "120"})
    fire(sessions, config, "gpu-0", clock())

    assert deliver_due(sessions, client, config, "w1", clock=clock) == DeliveryRun(retrying=2)

    assert channel(sessions, "chat").enabled
    assert channel(sessions, "ops").enabled
    with sessions() as session:
        waits = {
            name: delivery.next_attempt_at - clock.now
            for delivery, name in session.execute(select(Delivery, Channel.name).join(Channel))
        }
    assert waits == {"chat": timedelta(seconds=10), "ops": timedelta(seconds=120)}


def test_channel_states_list_the_configured_and_the_remembered(
    sessions: sessionmaker[Session], client: httpx.Client, router: respx.MockRouter
) -> None:
    clock, config = Clock(), configure()
    disabled_by_a_dead_answer(sessions, client, router, clock, config)
    later = parse_config(f"""
channels:
  - {{name: ops, kind: webhook, url: "{WEBHOOK_URL}"}}
  - {{name: page, kind: pagerduty, url: "https://events.pagerduty.com/v2/enqueue", secret: k}}
""")

    with sessions() as session:
        states = channel_states(session, later)

    assert [(s.name, s.kind, s.state, s.configured) for s in states] == [
        ("chat", "slack", "disabled", False),
        ("ops", "webhook", "enabled", True),
        ("page", "pagerduty", "enabled", True),
    ]
    assert (states[0].disabled_at, states[0].last_error) == (clock.now, DEAD_ERROR)


@pytest.mark.parametrize(
    ("changed", "same"),
    [
        pytest.param({}, True, id="unchanged"),
        pytest.param({"url": NEW_SLACK_URL}, False, id="new-url"),
        pytest.param({"secret": "s3cret"}, False, id="new-secret"),
        pytest.param({"kind": "webhook"}, False, id="new-kind"),
        pytest.param({"name": "renamed"}, True, id="name-is-not-what-it-sends-to"),
    ],
)
def test_the_config_digest_sees_what_the_channel_sends_to(
    changed: dict[str, str], same: bool
) -> None:
    before = ChannelConfig(name="chat", kind="slack", url=SLACK_URL)
    digest = config_digest(before)

    assert same_config(digest, before.model_copy(update=changed)) is same
    assert SLACK_TOKEN not in digest
    assert config_digest(before) != digest  # salted: equal configs do not give equal digests
