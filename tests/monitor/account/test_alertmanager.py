"""An Alertmanager webhook as account events (pure), read from the bodies Debian's Alertmanager
0.25 sent (tests/fixtures/alertmanager/): the key of one firing, the status, the target named
by a label, the title and detail, the order of two readings, and every malformed shape refused
naming its field."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from monitor.account.alertmanager import (
    SLAMON_LABEL,
    MalformedWebhook,
    alert_key,
    detail,
    from_webhook,
    target_of,
    title,
)
from monitor.account.model import AccountEvent
from monitor.alerts.channels.alertmanager import FINGERPRINT

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "alertmanager"
CAPTURED = sorted(FIXTURES.glob("*.json"))


def captured(name: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return document


TWO_FIRING = captured("1-dcgm-xid-two-firing.json")
ONE_RESOLVED = captured("2-dcgm-xid-one-resolved.json")
TRUNCATED = captured("3-dcgm-xid-max-alerts-1-truncated.json")
NO_TARGET = captured("4-node-filesystem-no-target.json")
STARTED = datetime(2026, 12, 6, 9, 58, 5, 570539, tzinfo=UTC)


@pytest.mark.parametrize("path", CAPTURED, ids=[p.name for p in CAPTURED])
def test_every_captured_delivery_is_read_whole(path: Path) -> None:
    document = json.loads(path.read_text())
    webhook = from_webhook(document)
    assert (webhook.receiver, webhook.group_key) == (document["receiver"], document["groupKey"])
    assert len(webhook.alerts) == len(document["alerts"])
    assert webhook.truncated_alerts == document["truncatedAlerts"]
    for alert, raw in zip(webhook.alerts, document["alerts"], strict=True):
        event = alert.event
        assert (event.provider, event.source, event.kind) == ("prometheus", "alertmanager", "issue")
        assert event.key.startswith(raw["fingerprint"] + "@")
        assert event.status == {"firing": "open", "resolved": "closed"}[raw["status"]]
        assert event.raw_type == alert.alertname == raw["labels"]["alertname"]
        assert event.starts_at is not None
        assert event.starts_at.tzinfo is UTC


def test_a_firing_dcgm_alert_is_the_whole_event_it_should_be() -> None:
    first = from_webhook(TWO_FIRING).alerts[0]
    assert first.target == "gpu-1"
    assert first.event == AccountEvent(
        provider="prometheus",
        source="alertmanager",
        key="abccd36610cf5b47@2026-12-06T09:58:05.570539Z",
        kind="issue",
        status="open",
        starts_at=STARTED,
        ends_at=None,  # Go's zero time: no end
        updated_at=STARTED,
        service="dcgm",
        title="GPU 0 on 10.0.0.5:9400 reported XID 79",
        detail="XID 79 (GPU has fallen off the bus) on GPU 0.\nDrain the node.\n"
        'labels: {UUID="GPU-9d0a8c2e-6f1b-4c3d-8e7f-123456789abc", alertname="DCGMXidErrors", '
        'gpu="0", instance="10.0.0.5:9400", job="dcgm", severity="critical", '
        'slamon_target="gpu-1"}',
        raw_type="DCGMXidErrors",
    )


def test_the_resolved_reading_closes_the_same_key_at_its_end_and_is_the_newer() -> None:
    firing = from_webhook(TWO_FIRING).alerts[0].event
    resolved, still = (a.event for a in from_webhook(ONE_RESOLVED).alerts)
    assert resolved.key == firing.key  # the same fingerprint and start: the same event
    assert resolved.status == "closed"
    assert resolved.ends_at == datetime(2026, 12, 6, 9, 58, 9, 571819, tzinfo=UTC)
    assert resolved.updated_at is not None
    assert firing.updated_at is not None
    assert resolved.updated_at > firing.updated_at
    assert still.status == "open"
    assert still.ends_at is None


def test_a_resolved_alert_ending_at_its_start_is_still_newer_than_its_firing() -> None:
    document = copy.deepcopy(ONE_RESOLVED)
    document["alerts"][0]["endsAt"] = document["alerts"][0]["startsAt"]
    event = from_webhook(document).alerts[0].event
    assert event.updated_at is not None
    assert event.starts_at is not None
    assert event.ends_at == event.starts_at < event.updated_at


def test_a_new_firing_after_the_resolution_is_a_new_key() -> None:
    later = STARTED + timedelta(minutes=5)
    assert alert_key("abccd36610cf5b47", STARTED) != alert_key("abccd36610cf5b47", later)
    assert alert_key("f", datetime(2026, 1, 1, 1, tzinfo=UTC)) == "f@2026-01-01T01:00:00Z"


def test_a_start_with_nanoseconds_or_another_offset_is_the_same_moment_in_utc() -> None:
    document = copy.deepcopy(TWO_FIRING)
    document["alerts"][0]["startsAt"] = "2026-12-06T10:58:05.570539123+01:00"
    event = from_webhook(document).alerts[0].event
    assert event.starts_at == STARTED
    assert event.key == "abccd36610cf5b47@2026-12-06T09:58:05.570539Z"


def test_the_truncated_count_is_kept() -> None:
    webhook = from_webhook(TRUNCATED)
    assert (len(webhook.alerts), webhook.truncated_alerts) == (1, 1)


def test_an_alert_naming_no_target_is_about_none_and_titled_by_its_summary() -> None:
    (alert,) = from_webhook(NO_TARGET).alerts
    assert alert.target is None
    assert alert.event.title == "Filesystem has less than 5% space left."
    assert alert.event.detail.startswith("Filesystem on /dev/nvme0n1p1, mounted on /")
    assert alert.event.service == "node"


def test_the_configured_target_labels_are_tried_in_order() -> None:
    (alert,) = from_webhook(NO_TARGET, ["slamon_target", "instance"]).alerts
    assert alert.target == "10.0.0.5:9100"


@pytest.mark.parametrize(
    ("labels", "names", "expected"),
    [
        ({"slamon_target": "gpu-1"}, ["slamon_target"], "gpu-1"),
        ({"slamon_target": " gpu-1 "}, ["slamon_target"], "gpu-1"),
        ({"node": "n1", "slamon_target": "gpu-1"}, ["slamon_target", "node"], "gpu-1"),
        ({"node": "n1", "slamon_target": ""}, ["slamon_target", "node"], "n1"),
        ({"target": "gpu-1"}, ["slamon_target"], None),
        ({}, ["slamon_target"], None),
        ({"slamon_target": "g" * 200}, ["slamon_target"], "g" * 200),
        ({"slamon_target": "g" * 201, "node": "n1"}, ["slamon_target", "node"], "n1"),
    ],
    ids=[
        "named",
        "trimmed",
        "first-wins",
        "empty-skipped",
        "other-label",
        "no-labels",
        "longest-name",
        "too-long-for-a-name",
    ],
)
def test_target_of(labels: dict[str, str], names: list[str], expected: str | None) -> None:
    assert target_of(labels, names) == expected


@pytest.mark.parametrize(
    ("labels", "annotations", "expected"),
    [
        ({"alertname": "A"}, {"summary": "  GPU  hot\n now "}, "GPU hot now"),
        ({"alertname": "A"}, {"summary": " "}, "A"),
        ({"alertname": "A"}, {}, "A"),
        ({}, {}, "fp1"),
    ],
    ids=["summary", "blank-summary", "alertname", "fingerprint"],
)
def test_title(labels: dict[str, str], annotations: dict[str, str], expected: str) -> None:
    assert title(labels, annotations, "fp1") == expected


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        ({"description": "d", "message": "m"}, 'd\nlabels: {a="1", b="x \\"y\\""}'),
        ({"message": "m"}, 'm\nlabels: {a="1", b="x \\"y\\""}'),
        ({}, 'labels: {a="1", b="x \\"y\\""}'),
    ],
    ids=["description", "message", "labels-only"],
)
def test_detail(annotations: dict[str, str], expected: str) -> None:
    assert detail({"b": 'x "y"', "a": "1"}, annotations) == expected


def test_slamon_s_own_alerts_are_counted_and_left_out() -> None:
    assert SLAMON_LABEL == FINGERPRINT  # the label the alertmanager channel sets
    document = copy.deepcopy(TWO_FIRING)
    document["alerts"][1]["labels"][SLAMON_LABEL] = "e3b0c442"
    webhook = from_webhook(document)
    assert [a.target for a in webhook.alerts] == ["gpu-1"]
    assert webhook.echoed == 1


def test_an_older_or_newer_field_alertmanager_adds_is_ignored() -> None:
    document = copy.deepcopy(TWO_FIRING) | {"someNewField": {"x": 1}}
    document.pop("truncatedAlerts")  # before 0.22 there was none
    document.pop("version")
    document["alerts"][0]["newAlertField"] = [1, 2]
    assert len(from_webhook(document).alerts) == 2


def _broken(path: list[str | int], value: object) -> dict[str, Any]:
    document = copy.deepcopy(TWO_FIRING)
    *parents, last = path
    holder: Any = document
    for step in parents:
        holder = holder[step]
    if value is _DROP:
        del holder[last]
    else:
        holder[last] = value
    return document


_DROP = object()


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (["version"], "5", "version: '5' is not '4'"),
        (["alerts"], _DROP, "alerts: missing or not a list"),
        (["alerts"], {"a": 1}, "alerts: missing or not a list"),
        (["truncatedAlerts"], -1, "truncatedAlerts: -1 is not a count"),
        (["truncatedAlerts"], True, "truncatedAlerts: True is not a count"),
        (["receiver"], 7, "receiver: 7 is not text"),
        (["alerts", 1], "x", "alerts[1]: not an object"),
        (["alerts", 0, "status"], "pending", "alerts[0].status: 'pending' is neither firing"),
        (["alerts", 0, "status"], {"a": 1}, "alerts[0].status: {'a': 1} is neither firing"),
        (["alerts", 0, "labels"], {"gpu": 0}, "alerts[0].labels: not an object of text values"),
        (["alerts", 0, "annotations"], ["x"], "alerts[0].annotations: not an object of text"),
        (["alerts", 0, "fingerprint"], _DROP, "alerts[0].fingerprint: missing or not text"),
        (["alerts", 0, "fingerprint"], " ", "alerts[0].fingerprint: missing or not text"),
        (["alerts", 0, "startsAt"], _DROP, "alerts[0].startsAt: missing"),
        (["alerts", 0, "startsAt"], "0001-01-01T00:00:00Z", "alerts[0].startsAt: missing"),
        (["alerts", 0, "startsAt"], "yesterday", "alerts[0].startsAt: 'yesterday' is not an"),
        (["alerts", 0, "startsAt"], "2026-12-06T09:58:05", "alerts[0].startsAt: '2026-12-06T09"),
        (["alerts", 0, "startsAt"], 1765015085, "alerts[0].startsAt: 1765015085 is not an RFC"),
        (["alerts", 0, "startsAt"], "0001-01-01T00:00:00+01:00", "is out of range"),
        (["alerts", 0, "startsAt"], "2026-12-06 09:58:05Z", "is not an RFC 3339 time"),
        (["alerts", 0, "startsAt"], "2026-02-30T09:58:05Z", "is not an ISO 8601 time"),
        (["alerts", 0, "endsAt"], "soon", "alerts[0].endsAt: 'soon' is not an RFC 3339 time"),
        (["alerts", 0, "labels"], _DROP, "alerts[0].labels: missing"),
        (["alerts", 0, "fingerprint"], "f" * 201, "alerts[0].fingerprint: longer than 200"),
        (["alerts", 0, "generatorURL"], 7, "alerts[0].generatorURL: 7 is not text"),
        (["status"], "pending", "status: 'pending' is neither firing nor resolved"),
        (["externalURL"], None, "externalURL: None is not text"),
        (["truncatedAlerts"], None, "truncatedAlerts: None is not a count"),
        (["commonLabels"], {"a": 1}, "commonLabels: not an object of text values"),
    ],
    ids=[
        "version", "no-alerts", "alerts-object", "truncated-negative", "truncated-bool",
        "receiver-number", "alert-not-object", "status", "status-object", "label-number",
        "annotations-list",
        "no-fingerprint", "blank-fingerprint", "no-start", "zero-start", "start-words",
        "start-no-offset", "start-number", "start-before-year-1", "start-with-space",
        "start-no-such-day", "firing-end-words", "no-labels", "long-fingerprint",
        "generator-number", "group-status", "external-url-null", "truncated-null",
        "common-label-number",
    ],
)  # fmt: skip
def test_a_malformed_delivery_is_refused_naming_its_field(
    path: list[str | int], value: object, message: str
) -> None:
    with pytest.raises(MalformedWebhook) as raised:
        from_webhook(_broken(path, value))
    assert message in str(raised.value)


@pytest.mark.parametrize(
    "ends",
    ["0001-01-01T00:00:00Z", "2026-12-06T09:58:05.570538Z", None],
    ids=["zero-end", "before-start", "no-end"],
)
def test_a_resolved_alert_must_say_when_it_ended(ends: str | None) -> None:
    document = copy.deepcopy(ONE_RESOLVED)
    document["alerts"][0]["startsAt"] = "2026-12-06T09:58:05.570539Z"
    if ends is None:
        del document["alerts"][0]["endsAt"]
    else:
        document["alerts"][0]["endsAt"] = ends
    with pytest.raises(MalformedWebhook, match=r"^alerts\[0\]\.endsAt: a resolved alert"):
        from_webhook(document)


def test_a_firing_alert_s_end_is_ignored_it_is_open_until_resolved() -> None:
    document = copy.deepcopy(TWO_FIRING)
    document["alerts"][0]["endsAt"] = "2026-12-06T10:10:00Z"  # Prometheus' "valid until"
    event = from_webhook(document).alerts[0].event
    assert (event.status, event.ends_at) == ("open", None)
