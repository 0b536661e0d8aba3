"""What the alertmanager channel sends, taken by the real Alertmanager (Debian's
``prometheus-alertmanager``, tests/alertmanager_process.py): every shape of message is accepted
and listed as sent, and a gossiping HA pair hears each message from slamon itself, one member
being away not holding a delivery back."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from monitor.alerts.channels import alertmanager
from monitor.alerts.channels.model import AlertMessage
from monitor.alerts.channels.send import send, send_message
from monitor.config.models import ChannelConfig
from tests.alertmanager_process import AlertmanagerProcess, running_alertmanager, running_cluster
from tests.monitor.alerts.channels.samples import KEY, firing

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def am() -> Iterator[AlertmanagerProcess]:
    with running_alertmanager() as server:
        yield server


def now() -> datetime:
    return datetime.now(UTC)


def listed(server: AlertmanagerProcess, fingerprint: str) -> dict[str, str] | None:
    for alert in server.alerts():
        if alert["labels"].get("slamon_fingerprint") == fingerprint:
            return alert["labels"]  # type: ignore[no-any-return]
    return None


MESSAGES = {
    "plain": firing(fingerprint="plain"),
    "odd-labels": firing(
        fingerprint="odd-labels",
        labels={"instance-type": "p5", "9th": "x", "zone/ü": "a", "empty": "", "alertname": "x"},
    ),
    "odd-extras": firing(
        fingerprint="odd-extras",
        extra={"burn": float("inf"), "targets": ["a", "b"], "deadline": None, "ok?": True},
    ),
    "no-link": firing(fingerprint="no-link", url=None),
    "unicode": firing(fingerprint="unicode", summary="trainer-ü 🔥 down", labels={"pool": "ü"}),
}


@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_the_real_alertmanager_takes_each_shape_and_lists_its_labels(
    am: AlertmanagerProcess, name: str
) -> None:
    message = replace(MESSAGES[name], started_at=now() - timedelta(minutes=3))
    channel = ChannelConfig(name="am", kind="alertmanager", url=am.url)

    with httpx.Client() as client:
        outcome = send_message(client, channel, message, KEY, now())

    assert outcome.result == "delivered", outcome.error
    assert listed(am, message.fingerprint) == alertmanager.alert_labels(message)


def test_a_resolve_takes_the_alert_off_the_real_alertmanagers_list(am: AlertmanagerProcess) -> None:
    started = now() - timedelta(minutes=3)
    message = firing(fingerprint="resolves", started_at=started)
    channel = ChannelConfig(name="am", kind="alertmanager", url=am.url)

    with httpx.Client() as client:
        send_message(client, channel, message, KEY, now())
        assert listed(am, "resolves") is not None
        resolved = replace(message, event="resolved", resolved_at=now())
        outcome = send_message(client, channel, resolved, KEY, now())

    assert outcome.delivered
    assert listed(am, "resolves") is None


def test_a_full_batch_is_taken_in_one_post(am: AlertmanagerProcess) -> None:
    batch: list[AlertMessage] = [
        firing(fingerprint=f"batch-{i:02}", labels={"target": f"gpu-{i:02}"})
        for i in range(alertmanager.MAX_BATCH)
    ]
    channel = ChannelConfig(name="am", kind="alertmanager", url=am.url)

    with httpx.Client() as client:
        outcome = send(client, alertmanager.build_batch(batch, channel, KEY, now()), 10)

    assert outcome.delivered
    assert all(listed(am, m.fingerprint) is not None for m in batch)


def test_each_member_of_a_gossiping_pair_hears_slamon_and_one_away_holds_nothing_back() -> None:
    with running_cluster(2) as (first, second), httpx.Client() as client:
        channel = ChannelConfig(name="am", kind="alertmanager", urls=[first.url, second.url])

        both = send_message(client, channel, firing(fingerprint="pair"), KEY, now())
        # Alertmanager gossips silences and what it notified, not alerts: each must be told
        assert listed(first, "pair") is not None
        assert listed(second, "pair") is not None
        second.stop()
        one = send_message(client, channel, firing(fingerprint="one-away"), KEY, now())
        assert listed(first, "one-away") is not None

    assert both.delivered
    assert one.delivered  # the other took it: enough, as for Prometheus
