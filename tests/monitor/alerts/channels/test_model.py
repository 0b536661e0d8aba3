"""Tests for the channel values (monitor/alerts/channels/model.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest

from monitor.alerts.channels import REGISTRY
from monitor.alerts.channels.model import AlertMessage, Outgoing, SendOutcome
from tests.monitor.alerts.channels.samples import (
    CHANNELS,
    KEY,
    NOW,
    RESOLVED,
    SECRETS,
    firing,
    resolved,
)


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        pytest.param({"severity": "page"}, "severity must be one of", id="unknown-severity"),
        pytest.param({"event": "acknowledged"}, "event must be one of", id="unknown-event"),
        pytest.param({"resolved_at": RESOLVED}, "resolved_at is set exactly", id="firing-resolved"),
        pytest.param({"event": "resolved"}, "resolved_at is set exactly", id="resolved-no-time"),
        pytest.param({"started_at": datetime(2025, 3, 1)}, "timezone-aware", id="naive-time"),
        pytest.param({"fingerprint": ""}, "fingerprint", id="empty-fingerprint"),
    ],
)
def test_an_inconsistent_alert_message_is_refused(changes: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        firing(**changes)


def test_a_resolved_message_carries_its_resolution_time() -> None:
    message = resolved()

    assert message.event == "resolved"
    assert message.resolved_at == RESOLVED


def test_messages_are_frozen() -> None:
    message = firing()

    with pytest.raises(AttributeError):
        message.summary = "changed"  # type: ignore[misc]


@pytest.mark.parametrize("kind", sorted(REGISTRY))
@pytest.mark.parametrize("message", [firing(), resolved()], ids=["firing", "resolved"])
def test_a_built_request_shows_no_secret_in_its_repr(kind: str, message: AlertMessage) -> None:
    outgoing = REGISTRY[kind](message, CHANNELS[kind], KEY, NOW)

    shown = repr(outgoing) + str(outgoing)

    assert SECRETS[kind] not in shown
    assert outgoing.method in shown
    assert f"{len(outgoing.body)} bytes" in shown


def test_outgoing_repr_names_headers_but_not_their_values() -> None:
    outgoing = Outgoing("POST", "https://example.com/x", {"Authorization": "Bearer s3cr3t"}, b"{}")

    shown = repr(outgoing)

    assert (
        shown == "Outgoing(POST https://example.com/***, headers=['Authorization'], body=2 bytes)"
    )


@pytest.mark.parametrize(
    ("outcome", "delivered", "retry"),
    [
        pytest.param(SendOutcome.ok(204), True, False, id="ok"),
        pytest.param(SendOutcome.retry_later(503, "HTTP 503"), False, True, id="retry-later"),
        pytest.param(SendOutcome.permanent(404, "HTTP 404"), False, False, id="permanent"),
    ],
)
def test_outcome_constructors_say_what_they_mean(
    outcome: SendOutcome, delivered: bool, retry: bool
) -> None:
    assert (outcome.delivered, outcome.retry) == (delivered, retry)


@pytest.mark.parametrize("kind", sorted(REGISTRY))
def test_a_message_without_a_url_links_nowhere_on_any_channel(kind: str) -> None:
    linked = REGISTRY[kind](firing(), CHANNELS[kind], KEY, NOW).body.decode()
    bare = REGISTRY[kind](firing(url=None), CHANNELS[kind], KEY, NOW).body.decode()

    assert "https://slamon.example.com/targets/trainer-0" in linked
    assert "slamon.example.com" not in bare
