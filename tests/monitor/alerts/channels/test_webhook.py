"""Tests for the generic webhook channel and its signature (monitor/alerts/channels/webhook.py)."""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import textwrap
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
import respx
from hypothesis import given
from hypothesis import strategies as st

from monitor.alerts.channels import webhook
from monitor.alerts.channels.send import send_message
from monitor.config.models import ChannelConfig
from tests.monitor.alerts.channels.samples import (
    CHANNELS,
    KEY,
    NOW,
    RESOLVED,
    STARTED,
    WEBHOOK_SECRET,
    WEBHOOK_URL,
    firing,
    parse_iso,
    resolved,
)

ALERT_KEYS = {"fingerprint", "rule", "severity", "labels", "summary", "started_at", "resolved_at"}


@pytest.fixture
def receiver() -> Iterator[respx.Route]:
    with respx.mock(assert_all_called=True) as router:
        yield router.post(WEBHOOK_URL).respond(204)


def sent(route: respx.Route) -> tuple[httpx.Headers, bytes, dict[str, Any]]:
    request = route.calls.last.request
    return request.headers, request.content, json.loads(request.content)


def test_a_firing_alert_is_posted_as_versioned_json(receiver: respx.Route) -> None:
    with httpx.Client() as client:
        outcome = send_message(client, CHANNELS["webhook"], firing(), KEY, NOW)

    headers, _, body = sent(receiver)
    assert outcome.delivered
    assert headers["Content-Type"] == "application/json"
    assert headers["Idempotency-Key"] == KEY
    assert headers["X-Slamon-Event"] == "firing"
    assert body["version"] == 1
    assert body["event"] == "firing"
    assert set(body["alert"]) >= ALERT_KEYS
    assert body["alert"]["fingerprint"] == "5f2b8c0e9a1d4e7f"
    assert body["alert"]["labels"]["target"] == "trainer-0"
    assert parse_iso(body["alert"]["started_at"]) == STARTED
    assert body["alert"]["resolved_at"] is None
    assert parse_iso(body["sent_at"]) == NOW


def test_a_resolved_alert_says_when_it_resolved(receiver: respx.Route) -> None:
    with httpx.Client() as client:
        send_message(client, CHANNELS["webhook"], resolved(), KEY, NOW)

    headers, _, body = sent(receiver)
    assert headers["X-Slamon-Event"] == "resolved"
    assert body["event"] == "resolved"
    assert parse_iso(body["alert"]["resolved_at"]) == RESOLVED


def test_the_signature_is_an_hmac_of_t_dot_body_at_send_time(receiver: respx.Route) -> None:
    with httpx.Client() as client:
        send_message(client, CHANNELS["webhook"], firing(), KEY, NOW)

    headers, body, _ = sent(receiver)
    stamp = int(NOW.timestamp())
    digest = hmac.new(WEBHOOK_SECRET.encode(), f"{stamp}.".encode() + body, hashlib.sha256)
    assert headers["X-Slamon-Signature"] == f"t={stamp},v1={digest.hexdigest()}"
    assert webhook.verify_signature(WEBHOOK_SECRET, headers["X-Slamon-Signature"], body, NOW)


def test_a_channel_without_a_secret_sends_unsigned(receiver: respx.Route) -> None:
    channel = ChannelConfig(name="open", kind="webhook", url=WEBHOOK_URL)

    with httpx.Client() as client:
        send_message(client, channel, firing(), KEY, NOW)

    headers, _, _ = sent(receiver)
    assert "X-Slamon-Signature" not in headers


def _strict(constant: str) -> object:
    raise AssertionError(f"the body holds {constant}, which is not JSON")


def test_numeric_extras_are_sent_as_numbers_and_an_infinite_one_as_its_name() -> None:
    extra = {"1h": math.inf, "5m": 14.4, "samples": 12, "paged": True, "unit": "samples"}
    message = firing(extra=extra)

    raw = webhook.build(message, CHANNELS["webhook"], KEY, NOW).body
    body = json.loads(raw, parse_constant=_strict)

    assert body["alert"]["extra"] == {**extra, "1h": "inf"}


def test_the_alert_url_is_sent_as_alert_url_and_null_without_one(receiver: respx.Route) -> None:
    with httpx.Client() as client:
        send_message(client, CHANNELS["webhook"], firing(), KEY, NOW)
        linked = sent(receiver)[2]
        send_message(client, CHANNELS["webhook"], firing(url=None), KEY, NOW)
        bare = sent(receiver)[2]

    assert linked["alert"]["url"] == "https://slamon.example.com/targets/trainer-0"
    assert bare["alert"]["url"] is None


def test_an_extra_value_json_cannot_hold_is_refused_when_the_message_is_made() -> None:
    with pytest.raises(ValueError, match=r"extra values must be .*\['since'\]"):
        firing(extra={"since": datetime(2025, 3, 1, tzinfo=UTC)})


BODY = webhook.build(firing(), CHANNELS["webhook"], KEY, NOW).body
GOOD = webhook.sign(WEBHOOK_SECRET, BODY, NOW)
V1 = GOOD.split("v1=")[1]
STAMP = int(NOW.timestamp())


def signed_at(offset_s: int) -> str:
    return webhook.sign(WEBHOOK_SECRET, BODY, NOW + timedelta(seconds=offset_s))


@pytest.mark.parametrize(
    ("header", "body", "expected"),
    [
        pytest.param(GOOD, BODY, True, id="round-trip"),
        pytest.param(f" t={STAMP} , v1={V1} ", BODY, True, id="spaces-around-parts"),
        pytest.param(signed_at(-299), BODY, True, id="within-tolerance-past"),
        pytest.param(signed_at(299), BODY, True, id="within-tolerance-future"),
        pytest.param(f"{GOOD},v0=legacy", BODY, True, id="unknown-scheme-ignored"),
        pytest.param(GOOD, BODY.replace(b"trainer-0", b"trainer-1"), False, id="tampered-body"),
        pytest.param(GOOD, BODY + b" ", False, id="body-with-trailing-space"),
        pytest.param(signed_at(-301), BODY, False, id="stale-timestamp-replay"),
        pytest.param(signed_at(301), BODY, False, id="future-timestamp"),
        pytest.param(f"t={STAMP + 1},v1={V1}", BODY, False, id="timestamp-swapped"),
        pytest.param(f"t={STAMP},v1={V1[:-1]}", BODY, False, id="signature-cut"),
        pytest.param(f"t={STAMP},v1={V1.upper()}", BODY, False, id="signature-uppercased"),
        pytest.param("", BODY, False, id="empty"),
        pytest.param("garbage", BODY, False, id="garbage"),
        pytest.param(None, BODY, False, id="missing"),
        pytest.param(f"v1={V1}", BODY, False, id="no-timestamp"),
        pytest.param(f"t={STAMP}", BODY, False, id="no-signature"),
        pytest.param(f"t={STAMP},t={STAMP},v1={V1}", BODY, False, id="two-timestamps"),
        pytest.param(f"t=abc,v1={V1}", BODY, False, id="timestamp-not-a-number"),
        pytest.param(f"t=-{STAMP},v1={V1}", BODY, False, id="negative-timestamp"),
        pytest.param(f"t=１２３,v1={V1}", BODY, False, id="timestamp-in-fullwidth-digits"),
        pytest.param(f"t={'9' * 5000},v1={V1}", BODY, False, id="timestamp-huge"),
        pytest.param(f"t={STAMP},v1=é{V1[1:]}", BODY, False, id="signature-not-ascii"),
        pytest.param(f"t={STAMP},v1={V1},junk", BODY, False, id="part-without-equals"),
        pytest.param(GOOD + ",v1=" + "a" * 5000, BODY, False, id="oversized-header"),
    ],
)
def test_verify_signature_accepts_only_a_fresh_matching_signature(
    header: str | None, body: bytes, expected: bool
) -> None:
    assert webhook.verify_signature(WEBHOOK_SECRET, header, body, NOW) is expected


@pytest.mark.parametrize(
    ("secret", "expected"),
    [
        pytest.param(WEBHOOK_SECRET, True, id="right-secret"),
        pytest.param("someone-elses-secret", False, id="wrong-secret"),
        pytest.param("", False, id="empty-secret"),
    ],
)
def test_verify_signature_needs_the_senders_secret(secret: str, expected: bool) -> None:
    assert webhook.verify_signature(secret, GOOD, BODY, NOW) is expected


def test_either_secret_verifies_during_a_rotation() -> None:
    old = webhook.sign("old-secret", BODY, NOW)
    new = webhook.sign("new-secret", BODY, NOW)
    header = f"{old},v1={new.split('v1=')[1]}"

    assert webhook.verify_signature("old-secret", header, BODY, NOW)
    assert webhook.verify_signature("new-secret", header, BODY, NOW)
    assert not webhook.verify_signature("other-secret", header, BODY, NOW)


def test_the_tolerance_window_can_be_narrowed() -> None:
    header = signed_at(-60)

    assert webhook.verify_signature(WEBHOOK_SECRET, header, BODY, NOW)
    assert not webhook.verify_signature(WEBHOOK_SECRET, header, BODY, NOW, tolerance_s=30)


@given(secret=st.text(min_size=1), body=st.binary(), offset=st.integers(-300, 300))
def test_any_signed_body_verifies_within_tolerance(secret: str, body: bytes, offset: int) -> None:
    header = webhook.sign(secret, body, NOW)

    assert webhook.verify_signature(secret, header, body, NOW + timedelta(seconds=offset))


@given(header=st.text(), body=st.binary())
def test_verify_signature_never_raises_on_arbitrary_headers(header: str, body: bytes) -> None:
    assert webhook.verify_signature(WEBHOOK_SECRET, header, body, NOW) in (True, False)


def documented_verify() -> Callable[[bytes, str, bytes], bool]:
    """The receiver snippet from the module docstring, run as written."""
    doc = webhook.__doc__ or ""
    snippet = textwrap.dedent(doc.split("::\n", 1)[1].split("\nVerify the raw body")[0])
    namespace: dict[str, Any] = {}
    exec(snippet, namespace)
    return namespace["verify"]  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("tamper", "expected"),
    [
        pytest.param(b"", True, id="untouched"),
        pytest.param(b"x", False, id="tampered"),
    ],
)
def test_the_documented_receiver_snippet_verifies_real_signatures(
    tamper: bytes, expected: bool
) -> None:
    now = datetime.fromtimestamp(time.time(), UTC)
    header = webhook.sign(WEBHOOK_SECRET, BODY, now)

    assert documented_verify()(WEBHOOK_SECRET.encode(), header, BODY + tamper) is expected


def test_the_documented_receiver_snippet_rejects_a_replay() -> None:
    header = webhook.sign(WEBHOOK_SECRET, BODY, NOW)  # in 2025: long past

    assert not documented_verify()(WEBHOOK_SECRET.encode(), header, BODY)
