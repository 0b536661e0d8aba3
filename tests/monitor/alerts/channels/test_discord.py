"""Tests for the Discord webhook channel (monitor/alerts/channels/discord.py), checked against
Discord's documented limits: content ≤ 2000; embed title ≤ 256, description ≤ 4096, ≤ 25 fields
of name ≤ 256 and value ≤ 1024, footer ≤ 2048, and ≤ 6000 characters over the embed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import respx
from hypothesis import given, settings
from hypothesis import strategies as st

from monitor.alerts.channels import discord
from monitor.alerts.channels._format import utf16_len
from monitor.alerts.channels.model import AlertMessage
from monitor.alerts.channels.send import send_message
from tests.monitor.alerts.channels.samples import (
    CHANNELS,
    DISCORD_URL,
    KEY,
    NOW,
    RESOLVED,
    STARTED,
    firing,
    parse_iso,
    resolved,
)


@pytest.fixture
def guild() -> Iterator[respx.Route]:
    with respx.mock(assert_all_called=True) as router:
        yield router.post(DISCORD_URL).respond(204)


def posted(message: AlertMessage, route: respx.Route) -> dict[str, Any]:
    with httpx.Client() as client:
        outcome = send_message(client, CHANNELS["discord"], message, KEY, NOW)
    assert outcome.delivered
    assert outcome.status_code == 204
    return json.loads(route.calls.last.request.content)  # type: ignore[no-any-return]


def assert_within_discord_limits(body: dict[str, Any]) -> None:
    [embed] = body["embeds"]
    fields = embed["fields"]
    assert 0 < utf16_len(body["content"]) <= 2000
    assert 0 < utf16_len(embed["title"]) <= 256
    assert 0 < utf16_len(embed["description"]) <= 4096
    assert len(fields) <= 25
    assert all(0 < utf16_len(f["name"]) <= 256 for f in fields)
    assert all(0 < utf16_len(f["value"]) <= 1024 for f in fields)
    assert utf16_len(embed["footer"]["text"]) <= 2048
    texts = [embed["title"], embed["description"], embed["footer"]["text"]]
    texts += [f["name"] + f["value"] for f in fields]
    assert sum(map(utf16_len, texts)) <= 6000


def test_discord_gets_content_and_one_embed(guild: respx.Route) -> None:
    body = posted(firing(), guild)

    assert body["content"].startswith("🔴 **FIRING (critical): target_down · trainer-0**")
    [embed] = body["embeds"]
    assert embed["title"] == "FIRING (critical): target_down · trainer-0"
    assert embed["description"].startswith("trainer-0 (p5.48xlarge, 8 GPUs)")
    assert isinstance(embed["color"], int)
    assert embed["color"] == discord.COLOURS["critical"]
    assert parse_iso(embed["timestamp"]) == STARTED
    assert embed["fields"][0] == {"name": "target", "value": "trainer-0", "inline": True}
    assert embed["url"] == "https://slamon.example.com/targets/trainer-0"
    assert_within_discord_limits(body)


def test_a_resolved_embed_is_green_and_stamped_with_the_resolution(guild: respx.Route) -> None:
    [embed] = posted(resolved(), guild)["embeds"]

    assert embed["color"] == discord.COLOURS["resolved"]
    assert parse_iso(embed["timestamp"]) == RESOLVED


def test_alert_text_pings_no_one() -> None:
    body = discord.payload(firing(summary="@everyone the pool is gone"))

    assert body["allowed_mentions"] == {"parse": []}


def test_limits_hold_on_a_5000_character_summary() -> None:
    body = discord.payload(firing(summary="x" * 5000))

    [embed] = body["embeds"]
    assert_within_discord_limits(body)
    assert len(embed["description"]) == 4096
    assert embed["description"].endswith("…")


def test_labels_give_way_before_the_summary_is_cut_short() -> None:
    labels = {f"label-{i:02}": "v" * 1500 for i in range(30)}

    body = discord.payload(firing(summary="x" * 5000, labels=labels))

    assert_within_discord_limits(body)
    assert len(body["embeds"][0]["description"]) >= discord.MIN_DESCRIPTION


def test_empty_label_values_are_shown_as_a_dash() -> None:
    [embed] = discord.payload(firing(labels={"pool": ""}))["embeds"]

    assert embed["fields"] == [{"name": "pool", "value": "-", "inline": True}]


@settings(deadline=None)  # long texts; the limits matter here, not the speed
@given(
    rule=st.text(min_size=1, max_size=400),
    summary=st.text(max_size=7000),
    labels=st.dictionaries(st.text(max_size=300), st.text(max_size=1500), max_size=30),
    fingerprint=st.text(min_size=1, max_size=2500),
)
def test_limits_hold_for_any_alert(
    rule: str, summary: str, labels: dict[str, str], fingerprint: str
) -> None:
    message = firing(rule=rule, summary=summary, labels=labels, fingerprint=fingerprint)

    assert_within_discord_limits(discord.payload(message))
