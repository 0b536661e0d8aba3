"""Tests for the Alertmanager channel (monitor/alerts/channels/alertmanager.py), checked against
Alertmanager's API (prometheus/alertmanager ``api/v2/openapi.yaml``): ``postAlerts`` takes
``postableAlerts``, a list of ``{labels, annotations, startsAt, endsAt, generatorURL}`` where
``labels`` (required) and ``annotations`` are string maps (``labelSet``), the times
``date-time`` and ``generatorURL`` a ``uri``; it answers 200, 400 (``BadRequest``) or 500.
The answers are faked at the HTTP layer; the real Alertmanager takes these bodies in
tests/scenarios/test_alertmanager.py."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import respx

from monitor.alerts.channels import alertmanager
from monitor.alerts.channels.model import AlertMessage
from monitor.alerts.channels.send import send_message
from monitor.config.models import ChannelConfig
from tests.monitor.alerts.channels.samples import KEY, NOW, RESOLVED, STARTED, firing, resolved

AM = "http://alertmanager-0.example:9093"
AM_1 = "http://alertmanager-1.example:9093"
CHANNEL = ChannelConfig(name="am", kind="alertmanager", url=AM)
CLUSTER = ChannelConfig(name="am", kind="alertmanager", urls=[AM, AM_1], resend_every=30)
POSTABLE_KEYS = {"labels", "annotations", "startsAt", "endsAt", "generatorURL"}
LABEL_NAME = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
# RFC 3339 date-time, as go-openapi's strfmt reads format: date-time
RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$")


@pytest.fixture
def router() -> Iterator[respx.MockRouter]:
    with respx.mock(assert_all_called=False) as mock:
        yield mock


def check_postable_alerts(body: Any) -> None:
    """``body`` is a ``postableAlerts`` document Alertmanager accepts (its schema, and the
    label-name rule ``model.LabelSet.Validate`` applies to labels and annotations)."""
    assert isinstance(body, list)
    for alert in body:
        assert set(alert) <= POSTABLE_KEYS, alert
        assert alert["labels"], "Alertmanager refuses an alert without labels"
        for labels in (alert["labels"], alert.get("annotations", {})):
            assert all(isinstance(v, str) for v in labels.values()), labels
            assert all(LABEL_NAME.match(k) for k in labels), labels
        for key in ("startsAt", "endsAt"):
            assert RFC3339.match(alert[key]), alert[key]
        assert parse(alert["startsAt"]) <= parse(alert["endsAt"])
        if "generatorURL" in alert:
            parts = urlsplit(alert["generatorURL"])
            assert parts.scheme in ("http", "https")
            assert parts.netloc


def parse(text: str) -> datetime:
    return datetime.fromisoformat(text)


def posted(
    router: respx.MockRouter, message: AlertMessage, channel: ChannelConfig = CHANNEL
) -> dict[str, Any]:
    route = router.post(f"{AM}/api/v2/alerts").respond(200)
    with httpx.Client() as client:
        outcome = send_message(client, channel, message, KEY, NOW)
    assert outcome.delivered
    request = route.calls.last.request
    assert request.headers["Content-Type"] == "application/json"
    body = json.loads(request.content)
    check_postable_alerts(body)
    [alert] = body
    return alert  # type: ignore[no-any-return]


def test_a_firing_alert_is_posted_with_its_rule_severity_and_labels(
    router: respx.MockRouter,
) -> None:
    alert = posted(router, firing())

    assert alert["labels"] == {
        "alertname": "target_down",
        "severity": "critical",
        "slamon_fingerprint": "5f2b8c0e9a1d4e7f",
        "target": "trainer-0",
        "provider": "aws",
        "region": "us-east-1",
        "pool": "h100-pool",
    }
    assert alert["annotations"] == {
        "summary": "trainer-0 (p5.48xlarge, 8 GPUs) has not answered for 7 minutes",
        "slamon_url": "https://slamon.example.com/targets/trainer-0",
        "confirmations": "2",
    }
    assert alert["generatorURL"] == "https://slamon.example.com/targets/trainer-0"
    assert parse(alert["startsAt"]) == STARTED


def test_a_firing_alert_ends_four_resend_periods_ahead_so_it_ends_if_slamon_stops(
    router: respx.MockRouter,
) -> None:
    default = posted(router, firing())
    clustered = alertmanager.postable(firing(), CLUSTER, NOW)

    assert parse(default["endsAt"]) == NOW + timedelta(minutes=4)  # 4 × 60 s
    assert parse(clustered["endsAt"]) == NOW + timedelta(minutes=2)  # 4 × resend_every 30 s


def test_a_resolved_alert_ends_when_it_resolved(router: respx.MockRouter) -> None:
    alert = posted(router, resolved())

    assert parse(alert["startsAt"]) == STARTED
    assert parse(alert["endsAt"]) == RESOLVED
    assert alert["labels"]["alertname"] == "target_down"  # the same alert, so it resolves


def test_a_resolve_back_dated_before_its_start_ends_at_its_start() -> None:
    message = firing(event="resolved", resolved_at=STARTED - timedelta(seconds=5))

    alert = alertmanager.postable(message, CHANNEL, NOW)

    assert alert["endsAt"] == alert["startsAt"]  # Alertmanager refuses start after end


def test_without_a_public_url_there_is_no_generator_url(router: respx.MockRouter) -> None:
    alert = posted(router, firing(url=None))

    assert "generatorURL" not in alert
    assert "slamon_url" not in alert["annotations"]


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        pytest.param({"instance-type": "p5"}, {"instance_type": "p5"}, id="dash"),
        pytest.param({"gpu.model": "H100"}, {"gpu_model": "H100"}, id="dot"),
        pytest.param({"9th": "x"}, {"_9th": "x"}, id="leading-digit"),
        pytest.param({"zone/ü": "a"}, {"zone__": "a"}, id="not-ascii"),
        pytest.param({"a-b": "first", "a_b": "second"}, {"a_b": "first"}, id="collision"),
        pytest.param({"empty": ""}, {}, id="empty-value-left-out"),
        pytest.param({"alertname": "mine", "severity": "low"}, {}, id="slamon-names-win"),
    ],
)
def test_label_names_are_made_prometheus_label_names(
    labels: dict[str, str], expected: dict[str, str]
) -> None:
    alert = alertmanager.postable(firing(labels=labels), CHANNEL, NOW)

    own = {
        "alertname": "target_down",
        "severity": "critical",
        "slamon_fingerprint": "5f2b8c0e9a1d4e7f",
    }
    assert alert["labels"] == {**expected, **own}
    check_postable_alerts([alert])


def test_extra_details_are_annotations_as_strings() -> None:
    extra = {
        "burn_rate": float("inf"),
        "reminder": True,
        "targets": ["trainer-0", "trainer-1"],
        "deadline": None,
        "seconds-left": 118,
        "summary": "not the summary",
    }
    alert = alertmanager.postable(firing(extra=extra), CHANNEL, NOW)

    assert alert["annotations"] == {
        "burn_rate": "inf",
        "reminder": "true",
        "targets": "trainer-0, trainer-1",
        "seconds_left": "118",
        "summary": "trainer-0 (p5.48xlarge, 8 GPUs) has not answered for 7 minutes",
        "slamon_url": "https://slamon.example.com/targets/trainer-0",
    }


def test_a_link_that_is_not_http_is_left_out() -> None:
    alert = alertmanager.postable(firing(url="ftp://slamon.example.com/x"), CHANNEL, NOW)

    assert "generatorURL" not in alert


@pytest.mark.parametrize(
    ("base", "posted_to"),
    [
        (AM, f"{AM}/api/v2/alerts"),
        (f"{AM}/", f"{AM}/api/v2/alerts"),
        (f"{AM}/alertmanager", f"{AM}/alertmanager/api/v2/alerts"),  # a path prefix
        (f"{AM}/api/v2/alerts", f"{AM}/api/v2/alerts"),  # the whole endpoint given
    ],
)
def test_the_alerts_endpoint_is_under_the_url(base: str, posted_to: str) -> None:
    assert alertmanager.alerts_url(base) == posted_to


def test_a_batch_is_one_list_of_alerts() -> None:
    batch = [firing(), resolved(fingerprint="0a1b2c3d4e5f6071")]

    outgoing = alertmanager.build_batch(batch, CHANNEL, KEY, NOW)

    body = json.loads(outgoing.body)
    check_postable_alerts(body)
    assert [a["labels"]["slamon_fingerprint"] for a in body] == [
        "5f2b8c0e9a1d4e7f",
        "0a1b2c3d4e5f6071",
    ]
    assert outgoing.url == f"{AM}/api/v2/alerts"


# ------------------------------------------------------------------ verdicts and HA clusters


@pytest.mark.parametrize(
    ("status", "body", "result"),
    [
        (400, '"invalid label set: invalid name \\"bad-name\\""', "failed"),  # its BadRequest
        (400, "start time must be before end time", "failed"),
        (422, "", "failed"),
        (401, "Unauthorized", "failed"),  # basic auth refused: the URL's credentials
        (404, "404 page not found", "dead"),  # no Alertmanager API at that URL
        (405, "", "dead"),
        (500, "internal error", "retry"),
        (503, "", "retry"),
        (429, "", "retry"),
    ],
)
def test_alertmanagers_answers_are_judged(
    router: respx.MockRouter, status: int, body: str, result: str
) -> None:
    router.post(f"{AM}/api/v2/alerts").respond(status, text=body)

    with httpx.Client() as client:
        outcome = send_message(client, CHANNEL, firing(), KEY, NOW)

    assert outcome.result == result
    assert outcome.status_code == status


def test_every_alertmanager_of_a_cluster_is_posted_to(router: respx.MockRouter) -> None:
    first = router.post(f"{AM}/api/v2/alerts").respond(200)
    second = router.post(f"{AM_1}/api/v2/alerts").respond(200)

    with httpx.Client() as client:
        outcome = send_message(client, CLUSTER, firing(), KEY, NOW)

    assert outcome.delivered
    assert first.call_count == second.call_count == 1
    assert first.calls.last.request.content == second.calls.last.request.content


@pytest.mark.parametrize(
    ("first", "second", "result"),
    [
        pytest.param(httpx.ConnectError("refused"), 200, "delivered", id="one-down-one-took-it"),
        pytest.param(500, 400, "retry", id="one-may-take-it-later"),
        pytest.param(httpx.ConnectError("refused"), 503, "retry", id="both-away"),
        pytest.param(400, 400, "failed", id="both-refused-it"),
        pytest.param(404, 404, "dead", id="neither-is-an-alertmanager"),
        pytest.param(404, 400, "failed", id="one-dead-one-refused"),
    ],
)
def test_a_cluster_delivers_when_one_alertmanager_takes_it(
    router: respx.MockRouter, first: Any, second: Any, result: str
) -> None:
    for url, answer in ((AM, first), (AM_1, second)):
        route = router.post(f"{url}/api/v2/alerts")
        if isinstance(answer, Exception):
            route.mock(side_effect=answer)
        else:
            route.respond(answer)

    with httpx.Client() as client:
        outcome = send_message(client, CLUSTER, firing(), KEY, NOW)

    assert outcome.result == result
    assert len(router.calls) == 2  # each was asked, whatever the first said
    if result != "delivered":
        assert "alertmanager-0.example" in (outcome.error or "")
        assert "alertmanager-1.example" in (outcome.error or "")


def test_credentials_in_the_url_never_show_in_an_error(router: respx.MockRouter) -> None:
    channel = ChannelConfig(
        name="am", kind="alertmanager", url="http://slamon:pa55word@alertmanager-0.example:9093"
    )
    router.post(f"{AM}/api/v2/alerts").respond(500, text="boom")

    with httpx.Client() as client:
        outcome = send_message(client, channel, firing(), KEY, NOW)

    request = router.calls.last.request
    assert request.headers["Authorization"].startswith("Basic ")
    assert outcome.result == "retry"
    assert "pa55word" not in (outcome.error or "")
