"""A local target goes down and comes back; a real local webhook receiver gets one signed
``target_down`` and one ``resolved``; a receiver that is down gets everything once it recovers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from monitor.alerts.channels.webhook import verify_signature
from monitor.alerts.delivery import deliver_due
from monitor.alerts.service import alert_hook
from monitor.config import Config, parse_config
from monitor.db.base import utcnow
from monitor.db.models import Alert, Delivery, Target
from monitor.probes.round import Prober
from monitor.targets import sync_config_targets
from tests.support import FeedServer, WebhookReceiver

SECRET = "test-signing-secret"


@pytest.fixture
def target(server: FeedServer) -> FeedServer:
    return server


@pytest.fixture
def receiver() -> Iterator[WebhookReceiver]:
    hook = WebhookReceiver()
    yield hook
    hook.close()


@pytest.fixture
def client() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=5) as http:
        yield http


def configure(target: FeedServer, receiver: WebhookReceiver) -> Config:
    return parse_config(f"""
probes: {{retry_interval: 0.2}}
alerts: {{retry_base: 10s}}
targets:
  - {{name: gpu-0, kind: http, url: "{target.url}/healthz", interval: 5, provider: aws,
     region: us-east-1}}
channels:
  - {{name: ops, kind: webhook, url: "{receiver.url}", secret: {SECRET}}}
""")


def round_(sessions: sessionmaker[Session], config: Config) -> None:
    with sessions() as session:
        ids = list(session.scalars(select(Target.id)))
    Prober(sessions, "test", config.probes, on_transitions=alert_hook(config)).round(ids)


def events(receiver: WebhookReceiver) -> list[tuple[str, str]]:
    out = []
    for _, body in receiver.requests:
        document = json.loads(body)
        out.append((document["event"], document["alert"]["rule"]))
    return out


def test_down_then_back_sends_one_signed_firing_and_one_resolved(
    sessions: sessionmaker[Session],
    client: httpx.Client,
    target: FeedServer,
    receiver: WebhookReceiver,
) -> None:
    config = configure(target, receiver)
    with sessions() as session, session.begin():
        sync_config_targets(session, config, utcnow())
    round_(sessions, config)
    assert deliver_due(sessions, client, config, "w1").delivered == 0

    target.routes["/healthz"] = (503, b"")
    round_(sessions, config)
    round_(sessions, config)  # still down: deduplicated by fingerprint, nothing new
    assert deliver_due(sessions, client, config, "w1").delivered == 1
    [(headers, body)] = receiver.requests
    assert verify_signature(SECRET, headers["x-slamon-signature"], body, utcnow())
    assert not verify_signature(SECRET, headers["x-slamon-signature"], body + b" ", utcnow())
    document = json.loads(body)
    assert (document["version"], document["event"], document["alert"]["rule"]) == (
        1,
        "firing",
        "target_down",
    )
    assert document["alert"]["labels"]["target"] == "gpu-0"
    assert document["alert"]["resolved_at"] is None

    target.routes["/healthz"] = (200, b"ok")
    round_(sessions, config)
    deliver_due(sessions, client, config, "w1")
    assert events(receiver) == [("firing", "target_down"), ("resolved", "target_down")]
    assert json.loads(receiver.requests[1][1])["alert"]["resolved_at"] is not None
    assert len(set(receiver.accepted)) == 2


def test_a_receiver_down_for_a_while_gets_each_delivery_exactly_once_after_it_recovers(
    sessions: sessionmaker[Session],
    client: httpx.Client,
    target: FeedServer,
    receiver: WebhookReceiver,
) -> None:
    config = configure(target, receiver)
    with sessions() as session, session.begin():
        sync_config_targets(session, config, utcnow())
    round_(sessions, config)
    receiver.status = 500
    target.routes["/healthz"] = (503, b"")
    round_(sessions, config)
    clock = [utcnow()]
    for _ in range(4):  # an hour of failures with backoff
        deliver_due(sessions, client, config, "w1", clock=lambda: clock[0])
        clock[0] += timedelta(minutes=15)
    with sessions() as session:
        [delivery] = session.scalars(select(Delivery))
        assert (delivery.status, delivery.attempts, delivery.last_status_code) == (
            "pending",
            4,
            500,
        )
        assert delivery.last_error is not None
    receiver.status = 204
    run = deliver_due(sessions, client, config, "w1", clock=lambda: clock[0] + timedelta(hours=1))
    again = deliver_due(sessions, client, config, "w1", clock=lambda: clock[0] + timedelta(hours=2))
    assert (run.delivered, again.delivered) == (1, 0)
    assert len(receiver.accepted) == 1
    assert len(receiver.requests) == 5  # four refused attempts, one accepted
    assert len({h["idempotency-key"] for h, _ in receiver.requests}) == 1


def test_a_silenced_target_fires_quietly_and_resolves_quietly(
    sessions: sessionmaker[Session],
    client: httpx.Client,
    target: FeedServer,
    receiver: WebhookReceiver,
) -> None:
    base = configure(target, receiver)
    until = (utcnow() + timedelta(hours=1)).isoformat()
    silences = parse_config(f"silences: [{{match: {{target: gpu-0}}, end: '{until}'}}]").silences
    config = base.model_copy(update={"silences": silences})
    with sessions() as session, session.begin():
        sync_config_targets(session, config, utcnow())
    round_(sessions, config)
    target.routes["/healthz"] = (503, b"")
    round_(sessions, config)
    target.routes["/healthz"] = (200, b"ok")
    round_(sessions, config)
    deliver_due(sessions, client, config, "w1")
    assert receiver.requests == []
    with sessions() as session:
        [alert] = session.scalars(select(Alert))
    assert (alert.state, alert.suppressed) == ("resolved", True)
