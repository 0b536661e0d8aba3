"""An Alertmanager webhook (version 4) as account events (pure): the team's own Prometheus alerts
(dcgm-exporter's XID errors, node exporter's full disks) beside what the providers tell the
account, so a target's page, the events list and the report's evidence show them.

Each alert of a delivery is one event of provider ``prometheus``, source ``alertmanager``, kind
``issue``: ``open`` while it fires, ``closed`` once resolved. Its key is the alert's
``fingerprint`` (a hash of its labels) and its ``startsAt``: Alertmanager re-sends a firing alert
with the same start every ``repeat_interval`` and resolves it with the same start, while a new
firing after the resolution starts anew and is a new event. The same delivery read twice gives
the same events.

A delivery carries no time of its own, so the order of two readings of one alert is told by what
they say: a firing reading is as new as the alert's start, a resolved one as new as its end
(always after the start). A resolved reading therefore beats a firing one however they arrive,
and a late firing repeat (another replica of an HA pair, a retry) never reopens an alert already
resolved.

The target an alert is about is the value of the first of ``target_labels`` it carries (the
config's ``alertmanager_receiver.target_labels``, ``slamon_target`` by default), a target's name
as slamon knows it; an alert carrying none is about no target.

slamon's own alerts, posted to Alertmanager by an ``alertmanager`` channel, carry the label
``slamon_fingerprint``; a route that sends them back here (a catch-all receiver) would store each
of them again as the team's alert, so they are counted and left out (``Webhook.echoed``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from monitor.account.model import AccountEvent, EventStatus, Provider
from monitor.sla.times import parse_aware

PROVIDER: Provider = "prometheus"
SOURCE = "alertmanager"
VERSION = "4"  # the webhook's version Alertmanager 0.x sends
DEFAULT_TARGET_LABELS = ("slamon_target",)
# the label an alertmanager channel puts on slamon's own alerts (monitor/alerts/channels/
# alertmanager.py's FINGERPRINT, which sits above this layer: a test holds the two equal)
SLAMON_LABEL = "slamon_fingerprint"
STATUSES: dict[str, EventStatus] = {"firing": "open", "resolved": "closed"}
DETAIL_CHARS = 2000
TITLE_CHARS = 500
SERVICE_CHARS = 100
FINGERPRINT_CHARS = 200  # Alertmanager's are 16 hex digits
TARGET_CHARS = 200  # a target's name is at most this long (monitor/db/models.py Target.name)
ZERO_YEAR = 1  # Go's zero time, 0001-01-01T00:00:00Z: Alertmanager's "no end"
# a resolved alert that ends at its start is still newer than its firing readings
AFTER_START = timedelta(microseconds=1)
# RFC 3339's date-time (JSON Schema's format): what Go's time.Time marshals to
RFC_3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", re.ASCII
)


class MalformedWebhook(ValueError):
    """The body is not Alertmanager's webhook: the message names the field first."""


@dataclass(frozen=True, slots=True)
class ReceivedAlert:
    """One alert of a delivery: its event, the target its labels name (None: none), and
    whether it is one of slamon's own (it carries ``SLAMON_LABEL``)."""

    event: AccountEvent
    target: str | None
    alertname: str
    from_slamon: bool = False


@dataclass(frozen=True, slots=True)
class Webhook:
    """A delivery: its receiver and group, the team's alerts in it in order, how many of
    slamon's own it carried (``echoed``, left out) and how many alerts Alertmanager left out of
    it (``truncatedAlerts``: the receiver's ``max_alerts`` was reached)."""

    receiver: str
    group_key: str
    status: str
    alerts: tuple[ReceivedAlert, ...]
    echoed: int = 0
    truncated_alerts: int = 0


def from_webhook(
    raw: Mapping[str, Any], target_labels: Sequence[str] = DEFAULT_TARGET_LABELS
) -> Webhook:
    """The delivery ``raw`` (the webhook's JSON body) read; raises :class:`MalformedWebhook`
    naming the field when it is not the documented version 4 shape (a field Alertmanager
    always sends may be absent; present, it must have its documented type)."""
    version = raw.get("version", VERSION)
    if version != VERSION:
        raise MalformedWebhook(f"version: {version!r} is not {VERSION!r}")
    alerts = raw.get("alerts")
    if not isinstance(alerts, list):
        raise MalformedWebhook("alerts: missing or not a list")
    truncated = raw.get("truncatedAlerts", 0)
    if isinstance(truncated, bool) or not isinstance(truncated, int) or truncated < 0:
        raise MalformedWebhook(f"truncatedAlerts: {truncated!r} is not a count")
    status = _text(raw, "status")
    if status and status not in STATUSES:
        raise MalformedWebhook(f"status: {status!r} is neither firing nor resolved")
    _text(raw, "externalURL")
    for name in ("groupLabels", "commonLabels", "commonAnnotations"):
        _strings(raw, name, "")
    every = [received(alert, f"alerts[{n}]", target_labels) for n, alert in enumerate(alerts)]
    return Webhook(
        receiver=_text(raw, "receiver"),
        group_key=_text(raw, "groupKey"),
        status=status,
        alerts=tuple(alert for alert in every if not alert.from_slamon),
        echoed=sum(alert.from_slamon for alert in every),
        truncated_alerts=truncated,
    )


def received(raw: object, where: str, target_labels: Sequence[str]) -> ReceivedAlert:
    """One alert of the delivery (``where`` names it in errors: ``alerts[0]``)."""
    if not isinstance(raw, Mapping):
        raise MalformedWebhook(f"{where}: not an object")
    state = raw.get("status")
    if not isinstance(state, str) or state not in STATUSES:
        raise MalformedWebhook(f"{where}.status: {state!r} is neither firing nor resolved")
    if "labels" not in raw:
        raise MalformedWebhook(f"{where}.labels: missing")
    labels = _strings(raw, "labels", f"{where}.")
    annotations = _strings(raw, "annotations", f"{where}.")
    _text(raw, "generatorURL", f"{where}.")
    fingerprint = raw.get("fingerprint")
    if not isinstance(fingerprint, str) or not fingerprint.strip():
        raise MalformedWebhook(f"{where}.fingerprint: missing or not text")
    if len(fingerprint) > FINGERPRINT_CHARS:
        raise MalformedWebhook(f"{where}.fingerprint: longer than {FINGERPRINT_CHARS} characters")
    starts = _time(raw, "startsAt", where)
    if starts is None:
        raise MalformedWebhook(f"{where}.startsAt: missing")
    ends = _time(raw, "endsAt", where)
    if state == "firing":
        ends = None  # Alertmanager sends no end while it fires; another sender's is a guess
    elif ends is None or ends < starts:
        raise MalformedWebhook(f"{where}.endsAt: a resolved alert must end at or after its start")
    alertname = labels.get("alertname", "")
    event = AccountEvent(
        provider=PROVIDER,
        source=SOURCE,
        key=alert_key(fingerprint.strip(), starts),
        kind="issue",
        status=STATUSES[state],
        starts_at=starts,
        ends_at=ends,
        updated_at=max(ends, starts + AFTER_START) if ends is not None else starts,
        service=labels.get("job", "")[:SERVICE_CHARS] or None,
        title=title(labels, annotations, fingerprint)[:TITLE_CHARS],
        detail=detail(labels, annotations)[:DETAIL_CHARS],
        raw_type=alertname,
    )
    return ReceivedAlert(event, target_of(labels, target_labels), alertname, SLAMON_LABEL in labels)


def alert_key(fingerprint: str, starts_at: datetime) -> str:
    """``abccd36610cf5b47@2026-12-06T09:57:52.066815Z``: one firing of one alert."""
    return f"{fingerprint}@{starts_at.astimezone(UTC).isoformat().replace('+00:00', 'Z')}"


def target_of(labels: Mapping[str, str], target_labels: Sequence[str]) -> str | None:
    """The value of the first of ``target_labels`` the alert carries that could be a target's
    name (not empty, at most ``TARGET_CHARS``), else None."""
    for name in target_labels:
        value = labels.get(name, "").strip()
        if value and len(value) <= TARGET_CHARS:
            return value
    return None


def title(labels: Mapping[str, str], annotations: Mapping[str, str], fingerprint: str) -> str:
    """Its ``summary`` annotation, else its ``alertname``, else its fingerprint."""
    for text in (annotations.get("summary"), labels.get("alertname"), fingerprint):
        if text and text.strip():
            return " ".join(text.split())
    return fingerprint


def detail(labels: Mapping[str, str], annotations: Mapping[str, str]) -> str:
    """Its ``description`` (else ``message``) annotation, then a line of its labels as
    Prometheus writes them (``labels: {alertname="DCGMXidErrors", gpu="0"}``)."""
    words = (annotations.get("description") or annotations.get("message") or "").strip()
    pairs = ", ".join(f"{name}={json.dumps(labels[name])}" for name in sorted(labels))
    return "\n".join(part for part in (words, f"labels: {{{pairs}}}" if pairs else "") if part)


def _text(raw: Mapping[str, Any], name: str, where: str = "") -> str:
    """``raw[name]`` as text; ``""`` when absent (``where``: the path before ``name``)."""
    if name not in raw:
        return ""
    value = raw[name]
    if not isinstance(value, str):
        raise MalformedWebhook(f"{where}{name}: {value!r} is not text")
    return value


def _strings(raw: Mapping[str, Any], name: str, where: str) -> dict[str, str]:
    """``raw[name]``, an object of text values; empty when absent."""
    value = raw.get(name, {})
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise MalformedWebhook(f"{where}{name}: not an object of text values")
    return dict(value)


def _time(raw: Mapping[str, Any], name: str, where: str) -> datetime | None:
    """``raw[name]`` as an aware UTC time; None when absent or Go's zero time. Anything but
    RFC 3339 text with its offset is refused: Alertmanager always writes one."""
    if name not in raw:
        return None
    value = raw[name]
    if not isinstance(value, str) or not RFC_3339.fullmatch(value):
        raise MalformedWebhook(f"{where}.{name}: {value!r} is not an RFC 3339 time")
    try:
        when = parse_aware(value.upper(), "")
    except ValueError as exc:  # a day or an hour out of range
        raise MalformedWebhook(f"{where}.{name}:{exc}") from None
    except OverflowError:  # 0001-01-01T00:00:00+01:00 is before year 1 in UTC
        raise MalformedWebhook(f"{where}.{name}: {value!r} is out of range") from None
    return None if when.year == ZERO_YEAR else when
