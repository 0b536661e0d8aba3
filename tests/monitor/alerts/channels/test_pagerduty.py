"""Tests for the PagerDuty Events API v2 channel (monitor/alerts/channels/pagerduty.py), checked
against PagerDuty's documented alert event: routing_key, event_action, dedup_key ≤ 255, and for a
trigger a payload with summary ≤ 1024, source, severity in critical/error/warning/info."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx

from monitor.alerts.channels import pagerduty
from monitor.alerts.channels.model import AlertMessage, Severity
from monitor.alerts.channels.send import send_message
from monitor.config.models import ChannelConfig
from tests.monitor.alerts.channels.samples import (
    CHANNELS,
    KEY,
    NOW,
    PAGERDUTY_URL,
    ROUTING_KEY,
    STARTED,
    firing,
    parse_iso,
    resolved,
)

PAGERDUTY_SEVERITIES = {"critical", "error", "warning", "info"}
OPTIONAL_STRINGS = ("timestamp", "component", "group", "class")


@pytest.fixture
def events_api() -> Iterator[respx.Route]:
    with respx.mock(assert_all_called=True) as router:
        yield router.post(PAGERDUTY_URL).respond(202, json={"status": "success"})


def posted(message: AlertMessage, route: respx.Route) -> dict[str, Any]:
    with httpx.Client() as client:
        outcome = send_message(client, CHANNELS["pagerduty"], message, KEY, NOW)
    assert outcome.delivered
    assert outcome.status_code == 202
    return json.loads(route.calls.last.request.content)  # type: ignore[no-any-return]


def test_a_firing_alert_is_a_trigger_in_the_documented_shape(events_api: respx.Route) -> None:
    event = posted(firing(), events_api)

    assert event["routing_key"] == ROUTING_KEY
    assert event["event_action"] == "trigger"
    assert event["dedup_key"] == "5f2b8c0e9a1d4e7f"
    payload = event["payload"]
    assert {"summary", "source", "severity"} <= set(payload)
    assert all(isinstance(payload[k], str) and payload[k] for k in ("summary", "source"))
    assert payload["severity"] in PAGERDUTY_SEVERITIES
    assert all(isinstance(payload[k], str) for k in OPTIONAL_STRINGS)
    assert parse_iso(payload["timestamp"]) == STARTED
    assert isinstance(payload["custom_details"], dict)
    assert payload["source"] == "trainer-0"
    assert payload["component"] == "h100-pool"
    assert payload["group"] == "aws/us-east-1"
    assert payload["class"] == "target_down"
    assert event["links"] == [
        {"href": "https://slamon.example.com/targets/trainer-0", "text": "Open in slamon"}
    ]


def test_a_resolved_alert_is_a_resolve_with_the_same_dedup_key(events_api: respx.Route) -> None:
    trigger = posted(firing(), events_api)
    resolve = posted(resolved(), events_api)

    assert resolve == {
        "routing_key": ROUTING_KEY,
        "event_action": "resolve",
        "dedup_key": trigger["dedup_key"],
    }


@pytest.mark.parametrize("severity", ["critical", "warning", "info"])
def test_slamon_severities_keep_their_pagerduty_names(severity: Severity) -> None:
    event = pagerduty.event(firing(severity=severity), ROUTING_KEY)

    assert event["payload"]["severity"] == severity


def test_a_long_summary_is_cut_to_pagerdutys_1024_characters() -> None:
    event = pagerduty.event(firing(summary="x" * 5000), ROUTING_KEY)

    assert len(event["payload"]["summary"]) == pagerduty.SUMMARY_LIMIT
    assert event["payload"]["summary"].endswith("…")


def test_a_fingerprint_over_255_characters_is_hashed_the_same_way_both_times() -> None:
    long_fingerprint = "f" * 300

    trigger = pagerduty.event(firing(fingerprint=long_fingerprint), ROUTING_KEY)
    resolve = pagerduty.event(resolved(fingerprint=long_fingerprint), ROUTING_KEY)

    assert len(trigger["dedup_key"]) <= 255
    assert trigger["dedup_key"] == resolve["dedup_key"]


def test_a_provider_wide_alert_names_the_provider_as_source() -> None:
    event = pagerduty.event(firing(labels={"provider": "gcp"}), ROUTING_KEY)

    assert event["payload"]["source"] == "gcp"
    assert event["payload"]["group"] == "gcp"
    assert "component" not in event["payload"]


def test_a_channel_without_a_routing_key_fails_permanently_without_sending() -> None:
    channel = ChannelConfig(name="pager", kind="pagerduty", url=PAGERDUTY_URL)

    with respx.mock(assert_all_called=False) as router, httpx.Client() as client:
        route = router.post(PAGERDUTY_URL).respond(202)
        outcome = send_message(client, channel, firing(), KEY, NOW)

    assert not route.called
    assert (outcome.delivered, outcome.retry) == (False, False)
    assert "routing key" in (outcome.error or "")
