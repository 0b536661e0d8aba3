"""Tests for the Slack incoming-webhook channel (monitor/alerts/channels/slack.py), checked
against Slack's documented shape: ``text`` as the fallback beside Block Kit ``blocks``; header
plain text ≤ 150, section text ≤ 3000, ≤ 10 fields of ≤ 2000."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx

from monitor.alerts.channels import slack
from monitor.alerts.channels.model import AlertMessage
from monitor.alerts.channels.send import send_message
from tests.monitor.alerts.channels.samples import CHANNELS, KEY, NOW, SLACK_URL, firing, resolved


@pytest.fixture
def workspace() -> Iterator[respx.Route]:
    with respx.mock(assert_all_called=True) as router:
        yield router.post(SLACK_URL).respond(200, text="ok")


def posted(message: AlertMessage, route: respx.Route) -> dict[str, Any]:
    with httpx.Client() as client:
        outcome = send_message(client, CHANNELS["slack"], message, KEY, NOW)
    assert outcome.delivered
    request = route.calls.last.request
    assert request.headers["Content-Type"] == "application/json"
    return json.loads(request.content)  # type: ignore[no-any-return]


def blocks_of(body: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [block for block in body["blocks"] if block["type"] == kind]


def test_slack_gets_a_text_fallback_and_blocks(workspace: respx.Route) -> None:
    body = posted(firing(), workspace)

    assert set(body) == {"text", "blocks"}
    assert "target_down" in body["text"]
    assert "trainer-0" in body["text"]
    [header] = blocks_of(body, "header")
    assert header["text"]["type"] == "plain_text"
    assert header["text"]["text"].startswith("🔴 FIRING (critical)")
    summary, labels = blocks_of(body, "section")
    assert summary["text"]["type"] == "mrkdwn"
    assert "has not answered for 7 minutes" in summary["text"]["text"]
    assert (
        "<https://slamon.example.com/targets/trainer-0|Open in slamon>" in (summary["text"]["text"])
    )
    assert [f["text"] for f in labels["fields"]][:2] == ["*target*\ntrainer-0", "*provider*\naws"]
    [context] = blocks_of(body, "context")
    assert "`5f2b8c0e9a1d4e7f`" in context["elements"][0]["text"]
    [actions] = blocks_of(body, "actions")
    [button] = actions["elements"]
    assert button["type"] == "button"
    assert button["text"] == {"type": "plain_text", "text": "Open in slamon", "emoji": False}
    assert button["url"] == "https://slamon.example.com/targets/trainer-0"


def test_a_message_without_a_link_has_no_button(workspace: respx.Route) -> None:
    body = posted(firing(url=None), workspace)

    assert blocks_of(body, "actions") == []
    assert "Open in slamon" not in json.dumps(body)


def test_a_resolved_alert_is_headed_resolved_with_its_time(workspace: respx.Route) -> None:
    body = posted(resolved(), workspace)

    [header] = blocks_of(body, "header")
    [context] = blocks_of(body, "context")
    assert header["text"]["text"].startswith("✅ RESOLVED: target_down")
    assert "resolved <!date^" in context["elements"][0]["text"]


def test_alert_text_cannot_mention_or_link(workspace: respx.Route) -> None:
    body = posted(firing(summary="<!channel> see <https://evil.example|here> & run"), workspace)

    shown = json.dumps(body)
    assert "<!channel>" not in shown
    assert "<https://evil.example" not in shown
    assert "&lt;!channel&gt; see &lt;https://evil.example|here&gt; &amp; run" in shown


def test_a_link_that_is_not_http_is_left_out() -> None:
    body = slack.payload(firing(url="javascript:alert(1)"))

    assert "javascript:" not in json.dumps(body)


def test_every_block_kit_limit_holds_on_a_huge_alert() -> None:
    message = firing(
        rule="r" * 300,
        summary="&" * 5000,  # escapes to five times its length
        labels={f"label-{i:02}": "v" * 2500 for i in range(15)},
    )

    body = slack.payload(message)

    [header] = blocks_of(body, "header")
    summary, labels = blocks_of(body, "section")
    assert len(header["text"]["text"]) <= slack.HEADER_LIMIT
    assert len(summary["text"]["text"]) <= slack.TEXT_LIMIT
    assert len(labels["fields"]) == slack.MAX_FIELDS
    assert all(len(f["text"]) <= slack.FIELD_LIMIT for f in labels["fields"])
    assert len(body["text"]) <= slack.TEXT_LIMIT
    assert not summary["text"]["text"].rstrip("…").endswith(("&", "&a", "&am", "&amp"))


def test_no_label_section_when_there_are_no_labels() -> None:
    body = slack.payload(firing(labels={}))

    assert len(blocks_of(body, "section")) == 1
