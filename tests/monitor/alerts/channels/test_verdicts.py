"""Which answers mean retry later, fail this message, or the channel is dead, per channel kind
(each kind's ``verdict`` in monitor/alerts/channels/, applied by send.py). Answers are faked at
the HTTP layer only, shaped like each service's documented errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx

from monitor.alerts.channels import REGISTRY, RULES
from monitor.alerts.channels.model import Answer, SendOutcome
from monitor.alerts.channels.send import send_message
from monitor.config.models import ChannelConfig
from tests.monitor.alerts.channels.samples import CHANNELS, KEY, NOW, SECRETS, firing

TRANSIENT = [408, 425, 429, 500, 502, 503, 504]


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_called=True) as mock:
        yield mock


def discord_error(code: int, message: str) -> str:
    return json.dumps({"message": message, "code": code})


def pagerduty_error(*errors: str) -> str:
    return json.dumps(
        {"status": "invalid event", "message": "Event object is invalid", "errors": errors}
    )


CASES = [
    # Slack: a plain-text code in the body (api.slack.com/messaging/webhooks, "Handling errors")
    ("slack", 403, "invalid_token", "dead"),
    ("slack", 400, "invalid_token", "dead"),  # what healthchecks.io has seen Slack send
    ("slack", 404, "channel_not_found", "dead"),
    ("slack", 410, "channel_is_archived", "dead"),
    ("slack", 404, "no_service", "dead"),
    ("slack", 403, "action_prohibited", "dead"),
    ("slack", 403, "posting_to_general_channel_denied", "dead"),
    ("slack", 400, "no_service_id", "dead"),
    ("slack", 400, '{"ok":false,"error":"invalid_token"}', "dead"),
    ("slack", 404, "", "dead"),
    ("slack", 400, "invalid_payload", "failed"),
    ("slack", 400, "too_many_attachments", "failed"),
    ("slack", 400, "user_not_found", "failed"),
    ("slack", 413, "", "failed"),
    ("slack", 500, "rollup_error", "retry"),
    ("slack", 503, "invalid_token", "retry"),  # a bad moment never disables a channel
    ("slack", 429, "rate_limited", "retry"),
    # Discord: {"message", "code"} JSON errors
    ("discord", 404, discord_error(10015, "Unknown Webhook"), "dead"),
    ("discord", 401, discord_error(50027, "Invalid Webhook Token"), "dead"),
    ("discord", 400, discord_error(10015, "Unknown Webhook"), "dead"),
    ("discord", 404, "", "dead"),
    ("discord", 400, discord_error(50035, "Invalid Form Body"), "failed"),
    ("discord", 403, discord_error(50013, "Missing Permissions"), "failed"),
    ("discord", 429, json.dumps({"message": "You are being rate limited.", "retry_after": 1.5}), "retry"),  # noqa: E501
    ("discord", 502, "", "retry"),
    # Teams (connector or Workflow URL)
    ("teams", 404, "", "dead"),
    ("teams", 410, "Connector is gone", "dead"),
    ("teams", 400, "Bad payload received by generic incoming webhook.", "failed"),
    ("teams", 413, "", "failed"),
    ("teams", 401, "", "failed"),
    ("teams", 429, "", "retry"),
    ("teams", 500, "", "retry"),
    # PagerDuty Events API v2
    ("pagerduty", 400, pagerduty_error("Invalid routing key"), "dead"),
    ("pagerduty", 400, pagerduty_error("'routing_key' is invalid"), "dead"),
    ("pagerduty", 404, "", "dead"),
    ("pagerduty", 400, pagerduty_error("'payload.summary' is missing or blank"), "failed"),
    ("pagerduty", 413, "", "failed"),
    ("pagerduty", 429, "", "retry"),
    ("pagerduty", 500, "", "retry"),
    # The generic webhook
    ("webhook", 401, "", "dead"),
    ("webhook", 403, "bad signature", "dead"),
    ("webhook", 404, "", "dead"),
    ("webhook", 410, "", "dead"),
    ("webhook", 400, "unexpected field", "failed"),
    ("webhook", 422, "", "failed"),
    ("webhook", 413, "", "failed"),
    ("webhook", 301, "", "failed"),
    ("webhook", 408, "", "retry"),
    ("webhook", 425, "", "retry"),
    ("webhook", 429, "", "retry"),
    ("webhook", 500, "", "retry"),
    ("webhook", 503, "", "retry"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "status", "body", "result"),
    CASES,
    ids=[f"{k}-{s}-{b[:40] or 'empty'}-{r}" for k, s, b, r in CASES],
)
def test_each_kind_judges_its_services_answers(
    router: respx.MockRouter, kind: str, status: int, body: str, result: str
) -> None:
    channel = CHANNELS[kind]
    router.post(channel.url).respond(status, text=body)

    with httpx.Client() as client:
        outcome = send_message(client, channel, firing(), KEY, NOW)

    assert outcome.result == result
    assert (outcome.delivered, outcome.retry, outcome.dead) == (
        False,
        result == "retry",
        result == "dead",
    )
    assert outcome.status_code == status
    assert SECRETS[kind] not in (outcome.error or "")


def test_a_429_is_retried_after_what_the_receiver_asked(router: respx.MockRouter) -> None:
    channel = CHANNELS["slack"]
    router.post(channel.url).respond(429, headers={"Retry-After": "30"}, text="rate_limited")

    with httpx.Client() as client:
        outcome = send_message(client, channel, firing(), KEY, NOW)

    assert (outcome.result, outcome.retry_after_s) == ("retry", 30.0)


def test_a_dead_answer_keeps_its_redacted_error(router: respx.MockRouter) -> None:
    channel = CHANNELS["slack"]
    router.post(channel.url).respond(403, text="invalid_token")

    with httpx.Client() as client:
        outcome = send_message(client, channel, firing(), KEY, NOW)

    assert outcome.error == "HTTP 403 from https://hooks.slack.com/***: invalid_token"
    assert outcome.retry_after_s is None


@pytest.mark.parametrize("kind", sorted(RULES))
@pytest.mark.parametrize("status", TRANSIENT)
@pytest.mark.parametrize(
    "body",
    [
        "invalid_token",
        discord_error(10015, "Unknown Webhook"),
        pagerduty_error("Invalid routing key"),
    ],
    ids=["slack-marker", "discord-marker", "pagerduty-marker"],
)
def test_no_rule_calls_a_transient_answer_dead(kind: str, status: int, body: str) -> None:
    assert RULES[kind](Answer(status, body)) == "retry"


def test_every_http_kind_has_a_rule() -> None:
    assert set(RULES) == set(REGISTRY)


@pytest.mark.parametrize(
    ("channel", "said"),
    [
        pytest.param(
            ChannelConfig(name="ftp", kind="webhook", url="ftp://hooks.example.com/x"),
            "UnsupportedProtocol",
            id="webhook-url-scheme-httpx-cannot-send-to",
        ),
        pytest.param(
            ChannelConfig(name="pager", kind="pagerduty", url="https://events.pagerduty.com/v2/enqueue"),
            "needs its routing key",
            id="pagerduty-without-routing-key",
        ),
        pytest.param(
            ChannelConfig(name="odd", kind="apprise", url="nosuchservice://x"),
            "not a URL apprise can send to",
            id="apprise-url-it-cannot-parse",
        ),
    ],
)  # fmt: skip
def test_a_channel_no_message_can_be_sent_to_is_dead(channel: ChannelConfig, said: str) -> None:
    with httpx.Client() as client:  # nothing is mocked: none of these reaches the network
        outcome = send_message(client, channel, firing(), KEY, NOW)

    assert outcome.result == "dead"
    assert said in (outcome.error or "")


@pytest.mark.parametrize(
    "failure",
    [
        httpx.ConnectError("refused"),
        httpx.ReadTimeout("slow"),
        httpx.RemoteProtocolError("hung up"),
    ],
    ids=["connect-error", "timeout", "hung-up"],
)
@pytest.mark.parametrize("kind", sorted(RULES))
def test_network_failures_are_retried_for_every_kind(
    router: respx.MockRouter, kind: str, failure: Exception
) -> None:
    channel = CHANNELS[kind]
    router.post(channel.url).side_effect = failure

    with httpx.Client() as client:
        outcome = send_message(client, channel, firing(), KEY, NOW)

    assert outcome.result == "retry"


@pytest.mark.parametrize(
    ("outcome", "result"),
    [
        pytest.param(SendOutcome.ok(204), "delivered", id="ok"),
        pytest.param(SendOutcome.retry_later(503, "HTTP 503"), "retry", id="retry"),
        pytest.param(SendOutcome.permanent(400, "HTTP 400"), "failed", id="failed"),
        pytest.param(SendOutcome.channel_dead(404, "HTTP 404"), "dead", id="dead"),
    ],
)
def test_an_outcome_names_its_result(outcome: SendOutcome, result: Any) -> None:
    assert outcome.result == result
    assert outcome.dead is (result == "dead")
