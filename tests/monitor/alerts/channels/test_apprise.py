"""Tests for the apprise channel (monitor/alerts/channels/apprise.py). apprise sends with
``requests``, which respx does not see, so a real HTTP server on loopback receives a ``json://``
apprise URL's POST."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from monitor.alerts.channels import apprise as apprise_channel
from monitor.alerts.channels.send import send_message
from monitor.config.models import ChannelConfig
from tests.monitor.alerts.channels.samples import KEY, NOW, firing, resolved

HOOK_PATH = "/hook/ap9r1seS3cretPath"

# apprise loads its plugins on first use, and its email plugin imports the deprecated imghdr.
pytestmark = pytest.mark.filterwarnings("ignore:'imghdr' is deprecated:DeprecationWarning")


@dataclass
class Receiver:
    """What the loopback server got, and the status it answers with."""

    port: int
    status: int = 200
    bodies: list[dict[str, Any]] = field(default_factory=list)

    def url(self, path: str = HOOK_PATH) -> str:
        return f"json://127.0.0.1:{self.port}{path}"


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver(port=0)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            state.bodies.append(json.loads(self.rfile.read(length)))
            self.send_response(state.status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()
    thread.join()


def channel_for(url: str) -> ChannelConfig:
    return ChannelConfig(name="longtail", kind="apprise", url=url)


def test_a_json_apprise_url_gets_title_and_body(receiver: Receiver) -> None:
    outcome = apprise_channel.send(channel_for(receiver.url()), firing())

    assert outcome.delivered
    [body] = receiver.bodies
    assert body["title"] == "FIRING (critical): target_down · trainer-0"
    assert body["message"].startswith("trainer-0 (p5.48xlarge, 8 GPUs) has not answered")
    assert "region: us-east-1" in body["message"]
    assert "https://slamon.example.com/targets/trainer-0" in body["message"]
    assert body["type"] == "failure"


@pytest.mark.parametrize(
    ("message", "notify_type"),
    [
        pytest.param(firing(severity="critical"), "failure", id="critical"),
        pytest.param(firing(severity="warning"), "warning", id="warning"),
        pytest.param(firing(severity="info"), "info", id="info"),
        pytest.param(resolved(), "success", id="resolved"),
    ],
)
def test_the_apprise_type_follows_severity_and_resolution(message: Any, notify_type: str) -> None:
    assert apprise_channel.notify_type(message) == notify_type


def test_send_message_hands_apprise_channels_to_apprise(receiver: Receiver) -> None:
    with httpx.Client() as client:
        outcome = send_message(client, channel_for(receiver.url()), resolved(), KEY, NOW)

    assert outcome.delivered
    assert receiver.bodies[0]["title"] == "RESOLVED: target_down · trainer-0"
    assert "resolved: 2025-03-14T11:59:30Z" in receiver.bodies[0]["message"]


def test_a_failing_service_is_retried_without_showing_the_url(receiver: Receiver) -> None:
    receiver.status = 500

    outcome = apprise_channel.send(channel_for(receiver.url()), firing())

    assert (outcome.delivered, outcome.retry) == (False, True)
    assert outcome.error == "json://***: apprise could not deliver the notification"
    assert len(receiver.bodies) == 1


@pytest.mark.parametrize(
    "url",
    [
        pytest.param("nosuchservice://token/S3cretS3cret", id="unknown-scheme"),
        pytest.param("json://", id="json-without-host"),
    ],
)
def test_a_url_apprise_cannot_use_fails_permanently(url: str) -> None:
    outcome = apprise_channel.send(channel_for(url), firing())

    assert (outcome.delivered, outcome.retry) == (False, False)
    assert "S3cret" not in (outcome.error or "")
    assert "not a URL apprise can send to" in (outcome.error or "")
