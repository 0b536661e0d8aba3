"""Tests for sending and for keeping secrets out of errors (monitor/alerts/channels/send.py,
monitor/alerts/channels/redact.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import get_args

import httpx
import pytest
import respx
from hypothesis import given
from hypothesis import strategies as st

from monitor.alerts.channels import REGISTRY
from monitor.alerts.channels.model import Outgoing
from monitor.alerts.channels.redact import scrub, url_secrets
from monitor.alerts.channels.send import redact_url, send, send_message
from monitor.config.models import ChannelConfig, ChannelKind
from tests.monitor.alerts.channels.samples import (
    CHANNELS,
    KEY,
    NOW,
    ROUTING_KEY,
    SECRETS,
    SLACK_TOKEN,
    SLACK_URL,
    WEBHOOK_URL,
    firing,
)

OUTGOING = Outgoing("POST", SLACK_URL, {"Content-Type": "application/json"}, b"{}")


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_called=True) as mock:
        yield mock


def sent_once(router: respx.MockRouter, outgoing: Outgoing = OUTGOING) -> respx.Route:
    return router.route(method=outgoing.method, url=outgoing.url)


@pytest.mark.parametrize(
    ("status", "delivered", "retry"),
    [
        pytest.param(200, True, False, id="200-delivered"),
        pytest.param(201, True, False, id="201-delivered"),
        pytest.param(202, True, False, id="202-delivered"),
        pytest.param(204, True, False, id="204-delivered"),
        pytest.param(301, False, False, id="301-permanent-no-redirect-followed"),
        pytest.param(400, False, False, id="400-permanent"),
        pytest.param(401, False, False, id="401-permanent"),
        pytest.param(403, False, False, id="403-permanent"),
        pytest.param(404, False, False, id="404-permanent"),
        pytest.param(410, False, False, id="410-permanent"),
        pytest.param(413, False, False, id="413-permanent"),
        pytest.param(408, False, True, id="408-retry"),
        pytest.param(425, False, True, id="425-retry"),
        pytest.param(429, False, True, id="429-retry"),
        pytest.param(500, False, True, id="500-retry"),
        pytest.param(502, False, True, id="502-retry"),
        pytest.param(503, False, True, id="503-retry"),
        pytest.param(504, False, True, id="504-retry"),
    ],
)
def test_an_answer_is_delivered_retried_or_permanent_by_status(
    router: respx.MockRouter, status: int, delivered: bool, retry: bool
) -> None:
    sent_once(router).respond(status, headers={"Location": "https://elsewhere.example/"})

    with httpx.Client() as client:
        outcome = send(client, OUTGOING, timeout=5.0)

    assert (outcome.delivered, outcome.retry, outcome.status_code) == (delivered, retry, status)
    assert (outcome.error is None) is delivered
    if not delivered:
        assert outcome.error is not None
        assert outcome.error.startswith(f"HTTP {status} from https://hooks.slack.com/***")


@pytest.mark.parametrize(
    ("failure", "retry", "said"),
    [
        pytest.param(httpx.ConnectTimeout("timed out"), True, "timed out", id="connect-timeout"),
        pytest.param(httpx.ReadTimeout("timed out"), True, "timed out", id="read-timeout"),
        pytest.param(httpx.WriteTimeout("timed out"), True, "timed out", id="write-timeout"),
        pytest.param(httpx.PoolTimeout("timed out"), True, "timed out", id="pool-timeout"),
        pytest.param(
            httpx.ConnectError("[Errno 111] Connection refused"),
            True,
            "ConnectError: [Errno 111] Connection refused",
            id="connection-refused",
        ),
        pytest.param(httpx.ReadError("reset"), True, "ReadError", id="connection-reset"),
        pytest.param(
            httpx.RemoteProtocolError("Server disconnected"),
            True,
            "RemoteProtocolError",
            id="server-hung-up",
        ),
        pytest.param(
            httpx.UnsupportedProtocol("no scheme"), False, "UnsupportedProtocol", id="bad-scheme"
        ),
        pytest.param(
            httpx.LocalProtocolError("bad header"), False, "LocalProtocolError", id="bad-request"
        ),
    ],
)
def test_a_network_failure_is_an_outcome_not_an_exception(
    router: respx.MockRouter, failure: Exception, retry: bool, said: str
) -> None:
    sent_once(router).side_effect = failure

    with httpx.Client() as client:
        outcome = send(client, OUTGOING, timeout=5.0)

    assert (outcome.delivered, outcome.retry, outcome.status_code) == (False, retry, None)
    assert said in (outcome.error or "")


def test_the_receivers_retry_after_is_passed_on(router: respx.MockRouter) -> None:
    sent_once(router).respond(429, headers={"Retry-After": "17"}, text="rate limited")

    with httpx.Client() as client:
        outcome = send(client, OUTGOING, timeout=5.0)

    assert outcome.retry_after_s == 17.0
    assert outcome.error == "HTTP 429 from https://hooks.slack.com/***: rate limited"


@pytest.mark.parametrize("value", ["", "soon", "Wed, 21 Oct 2015 07:28:00 GMT", "-1", "nan"])
def test_a_retry_after_that_is_not_seconds_is_ignored(router: respx.MockRouter, value: str) -> None:
    sent_once(router).respond(503, headers={"Retry-After": value})

    with httpx.Client() as client:
        outcome = send(client, OUTGOING, timeout=5.0)

    assert outcome.retry_after_s is None


def test_a_long_error_answer_is_shown_cut_on_one_line(router: respx.MockRouter) -> None:
    sent_once(router).respond(400, text="invalid_payload\n" + "x" * 10_000)

    with httpx.Client() as client:
        outcome = send(client, OUTGOING, timeout=5.0)

    error = outcome.error or ""
    assert "\n" not in error
    assert error.startswith("HTTP 400 from https://hooks.slack.com/***: invalid_payload x")
    assert len(error) < 300


def test_the_body_and_headers_are_sent_as_built(router: respx.MockRouter) -> None:
    outgoing = Outgoing("POST", WEBHOOK_URL, {"Idempotency-Key": KEY}, b'{"version":1}')
    route = sent_once(router, outgoing).respond(204)

    with httpx.Client() as client:
        send(client, outgoing, timeout=5.0)

    request = route.calls.last.request
    assert request.content == b'{"version":1}'
    assert request.headers["Idempotency-Key"] == KEY


@pytest.mark.parametrize("kind", sorted(REGISTRY))
@pytest.mark.parametrize(
    "answer",
    [
        pytest.param("echo-404", id="receiver-echoes-url-and-body"),
        pytest.param("connect-error", id="exception-names-the-url"),
    ],
)
def test_no_error_text_holds_a_channel_secret(
    router: respx.MockRouter, kind: str, answer: str
) -> None:
    channel = CHANNELS[kind]
    route = router.post(channel.url)
    if answer == "echo-404":
        route.mock(side_effect=lambda r: httpx.Response(404, text=f"{r.url} {r.content!r}"))
    else:
        route.side_effect = httpx.ConnectError(f"cannot reach {channel.url} ({SECRETS[kind]})")

    with httpx.Client() as client:
        outcome = send_message(client, channel, firing(), KEY, NOW)

    assert not outcome.delivered
    assert outcome.error
    assert SECRETS[kind] not in outcome.error
    assert SECRETS[kind] not in repr(outcome)
    assert redact_url(channel.url) in outcome.error


def test_a_pagerduty_routing_key_echoed_back_is_hidden(router: respx.MockRouter) -> None:
    channel = CHANNELS["pagerduty"]
    reply = {"status": "invalid event", "errors": [f"routing_key {ROUTING_KEY} is invalid"]}
    router.post(channel.url).respond(400, json=reply)

    with httpx.Client() as client:
        outcome = send_message(client, channel, firing(), KEY, NOW)

    assert outcome.error == (
        'HTTP 400 from https://events.pagerduty.com/***: {"status":"invalid event",'
        '"errors":["routing_key *** is invalid"]}'
    )


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        pytest.param(SLACK_URL, "https://hooks.slack.com/***", id="slack"),
        pytest.param(
            "https://discord.com/api/webhooks/123/TOKEN", "https://discord.com/***", id="discord"
        ),
        pytest.param(
            "https://acme.webhook.office.com/webhookb2/a@b/IncomingWebhook/c/d",
            "https://acme.webhook.office.com/***",
            id="teams-connector",
        ),
        pytest.param(
            "https://prod-1.westus.logic.azure.com:443/workflows/x/triggers?sig=SECRET",
            "https://prod-1.westus.logic.azure.com:443/***",
            id="teams-workflow-with-port",
        ),
        pytest.param(
            "https://events.pagerduty.com/v2/enqueue?routing_key=KEY",
            "https://events.pagerduty.com/***",
            id="pagerduty-key-in-query",
        ),
        pytest.param(
            "https://user:pass@hooks.example.com/x",
            "https://hooks.example.com/***",
            id="userinfo-dropped",
        ),
        pytest.param("https://HOOKS.Example.com", "https://hooks.example.com/", id="host-only"),
        pytest.param("http://127.0.0.1:8080/", "http://127.0.0.1:8080/", id="root-path"),
        pytest.param("https://example.com/#frag", "https://example.com/***", id="fragment"),
        pytest.param("http://[::1]:9000/hook", "http://[::1]:9000/***", id="ipv6"),
        pytest.param("tgram://123456:BOTTOKEN/chat", "tgram://***", id="apprise-token-in-host"),
        pytest.param("mailto://user:pw@example.com", "mailto://***", id="apprise-mailto"),
        pytest.param("json://127.0.0.1:8000/path", "json://***", id="apprise-json"),
        pytest.param("https://example.com:notaport/x", "***", id="bad-port"),
        pytest.param("http://[::1/x", "***", id="unclosed-bracket"),
        pytest.param("not a url", "***", id="no-scheme"),
        pytest.param("", "***", id="empty"),
        pytest.param("https:///path-only", "https://***", id="no-host"),
    ],
)
def test_redact_url_keeps_only_scheme_host_and_port(url: str, shown: str) -> None:
    assert redact_url(url) == shown


@given(st.text())
def test_redact_url_never_raises(url: str) -> None:
    assert isinstance(redact_url(url), str)


def test_scrub_hides_every_secret_longest_first() -> None:
    secrets = [*url_secrets(SLACK_URL), "sl4ck"]

    text = scrub(f"posting to {SLACK_URL} failed; token {SLACK_TOKEN}, prefix sl4ck", secrets)

    assert text == "posting to *** failed; token ***, prefix ***"


@pytest.mark.parametrize("kind", sorted(REGISTRY))
def test_send_message_builds_and_sends_for_every_http_kind(
    router: respx.MockRouter, kind: str
) -> None:
    channel = CHANNELS[kind]
    route = router.post(channel.url).respond(200)

    with httpx.Client() as client:
        outcome = send_message(client, channel, firing(), KEY, NOW)

    assert outcome.delivered
    assert route.calls.last.request.headers["Idempotency-Key"] == KEY


def test_every_configurable_channel_kind_has_a_sender() -> None:
    assert set(REGISTRY) | {"apprise"} == set(get_args(ChannelKind))


def test_the_timeout_given_is_the_timeout_used(router: respx.MockRouter) -> None:
    route = sent_once(router).respond(204)

    with httpx.Client(timeout=99.0) as client:
        send(client, OUTGOING, timeout=2.5)

    assert route.calls.last.request.extensions["timeout"] == {
        "connect": 2.5,
        "read": 2.5,
        "write": 2.5,
        "pool": 2.5,
    }


def test_a_channel_config_for_slack_with_a_secret_ignores_it(router: respx.MockRouter) -> None:
    channel = ChannelConfig(name="chat", kind="slack", url=SLACK_URL, secret="unused")
    route = router.post(SLACK_URL).respond(200)

    with httpx.Client() as client:
        send_message(client, channel, firing(), KEY, NOW)

    assert b"unused" not in route.calls.last.request.content
