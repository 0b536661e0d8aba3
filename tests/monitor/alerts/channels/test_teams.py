"""Tests for the Microsoft Teams channel (monitor/alerts/channels/teams.py), checked against the
documented webhook shape: a ``message`` whose one attachment has contentType
``application/vnd.microsoft.card.adaptive`` and an AdaptiveCard as content."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx

from monitor.alerts.channels import teams
from monitor.alerts.channels.model import AlertMessage
from monitor.alerts.channels.send import send_message
from tests.monitor.alerts.channels.samples import CHANNELS, KEY, NOW, TEAMS_URL, firing, resolved

CARD_ELEMENTS = {"TextBlock", "FactSet"}


@pytest.fixture
def workflow() -> Iterator[respx.Route]:
    with respx.mock(assert_all_called=True) as router:
        yield router.post(TEAMS_URL).respond(202)


def posted(message: AlertMessage, route: respx.Route) -> dict[str, Any]:
    with httpx.Client() as client:
        outcome = send_message(client, CHANNELS["teams"], message, KEY, NOW)
    assert outcome.delivered
    request = route.calls.last.request
    assert request.url == TEAMS_URL  # the signed query string is sent untouched
    return json.loads(request.content)  # type: ignore[no-any-return]


def test_teams_gets_an_adaptive_card_message(workflow: respx.Route) -> None:
    body = posted(firing(), workflow)

    assert body["type"] == "message"
    [attachment] = body["attachments"]
    assert attachment["contentType"] == "application/vnd.microsoft.card.adaptive"
    card = attachment["content"]
    assert card["type"] == "AdaptiveCard"
    assert card["$schema"] == "http://adaptivecards.io/schemas/adaptive-card.json"
    assert card["version"] == "1.4"
    assert {element["type"] for element in card["body"]} <= CARD_ELEMENTS
    title, summary, facts = card["body"]
    assert title["text"] == "FIRING (critical): target_down · trainer-0"
    assert "has not answered" in summary["text"]
    assert all(set(f) == {"title", "value"} for f in facts["facts"])
    assert {"title": "target", "value": "trainer-0"} in facts["facts"]
    assert card["actions"] == [
        {
            "type": "Action.OpenUrl",
            "title": "Open in slamon",
            "url": "https://slamon.example.com/targets/trainer-0",
        }
    ]


@pytest.mark.parametrize(
    ("message", "colour"),
    [
        pytest.param(firing(severity="critical"), "attention", id="critical"),
        pytest.param(firing(severity="warning"), "warning", id="warning"),
        pytest.param(firing(severity="info"), "accent", id="info"),
        pytest.param(resolved(), "good", id="resolved"),
    ],
)
def test_the_title_colour_follows_severity_and_resolution(
    message: AlertMessage, colour: str
) -> None:
    card = teams.card(message)

    assert card["body"][0]["color"] == colour


def test_a_resolved_card_shows_when_it_resolved() -> None:
    facts = teams.card(resolved())["body"][2]["facts"]

    assert {"title": "resolved", "value": "2025-03-14T11:59:30Z"} in facts


def test_a_card_without_an_http_link_has_no_button() -> None:
    assert "actions" not in teams.card(firing(url=None))
    assert "actions" not in teams.card(firing(url="ftp://files.example.com/x"))


def test_a_huge_alert_stays_well_under_the_teams_message_size() -> None:
    message = firing(summary="s" * 50_000, labels={f"l{i}": "v" * 5000 for i in range(40)})

    body = teams.build(message, CHANNELS["teams"], KEY, NOW).body

    assert len(body) < 28_000
