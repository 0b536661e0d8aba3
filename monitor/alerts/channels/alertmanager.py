"""Prometheus Alertmanager: slamon's alerts posted to ``POST {url}/api/v2/alerts`` as Prometheus
posts its own, so a team that pages through Alertmanager gets slamon's alerts in the same
routes, groups, silences and inhibitions.

The body is a JSON list of ``postableAlert`` (Alertmanager's OpenAPI, ``api/v2/openapi.yaml``):

- ``labels``: ``alertname`` (the rule), ``severity``, ``slamon_fingerprint`` (slamon's
  fingerprint: it keeps apart two alerts whose labels read the same once renamed, and lets a
  route match slamon's alerts with ``slamon_fingerprint=~".+"``) and the alert's own labels,
  their names made Prometheus label names (``[a-zA-Z_][a-zA-Z0-9_]*``: any other character
  becomes ``_``, a leading digit gets a ``_`` before it; the first in name order wins a
  collision). A label named like one of slamon's three gives way to it; an empty value is left
  out (Prometheus reads it as no label).
- ``annotations``: ``summary``, ``slamon_url`` (the page for the alert, when
  ``SLAMON_PUBLIC_URL`` is set) and each of the message's ``extra`` details as a string (names
  made label names the same way; null left out; a list joined with ", ").
- ``startsAt``: when the alert started; ``endsAt``: when it resolved, or, while it fires, four
  resend periods from now, as Prometheus sets it: if slamon stops posting (it died), the alert
  resolves in Alertmanager by itself; while it lives, ``monitor/alerts/resend.py`` posts it
  again every period, moving ``endsAt`` on.
- ``generatorURL``: the same page, an absolute http(s) URL; left out without one.

Alertmanager answers 200, 400 (the alerts were refused: a body it cannot read) or 500
(``api/v2/openapi.yaml``, ``postAlerts``). A 400 fails this message; 5xx, timeouts and
connection errors are retried; a 404 or 405 says no Alertmanager API is at that URL (a wrong
path prefix), so a channel whose every Alertmanager answers that is dead. A channel of several
Alertmanagers (``urls``) posts to each; one that accepts is enough (``send.combined``), as
for Prometheus: the cluster gossips what it has notified. The channel's ``secret`` is not used
(the config refuses it); basic-auth credentials go in the URL.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from monitor.alerts.channels._format import http_link, iso, json_body, json_headers
from monitor.alerts.channels.model import AlertMessage, Answer, Extra, Outgoing, Verdict, by_status
from monitor.config.models import ChannelConfig

API_PATH = "/api/v2/alerts"
# endsAt of a firing alert: this many resend periods ahead (Prometheus: 4 × max(evaluation
# interval, resend delay)), so one or two lost resends never resolve it by mistake.
ENDS_AFTER_RESENDS = 4
MAX_BATCH = 64  # alerts per POST, as Prometheus' notifier sends them
ALERTNAME, SEVERITY, FINGERPRINT = "alertname", "severity", "slamon_fingerprint"
SUMMARY, LINK = "summary", "slamon_url"
DEAD_STATUSES = frozenset({404, 405})
_NOT_NAME = re.compile(r"[^a-zA-Z0-9_]")


def verdict(answer: Answer) -> Verdict:
    """Dead on 404/405 (no Alertmanager API at that URL); otherwise the generic rule: a 400
    refuses these alerts, a 5xx is retried."""
    if not answer.transient and answer.status_code in DEAD_STATUSES:
        return "dead"
    return by_status(answer)


def alerts_url(base: str) -> str:
    """``base`` (an Alertmanager's URL, with its path prefix if it has one) + ``/api/v2/alerts``;
    a URL that already ends so is used as it is."""
    trimmed = base.rstrip("/")
    return trimmed if trimmed.endswith(API_PATH) else trimmed + API_PATH


def label_name(name: str) -> str:
    """``name`` as a Prometheus label name: other characters ``_``; never a leading digit."""
    cleaned = _NOT_NAME.sub("_", name)
    return f"_{cleaned}" if not cleaned or cleaned[0].isdigit() else cleaned


def alert_labels(message: AlertMessage) -> dict[str, str]:
    own = {ALERTNAME: message.rule, SEVERITY: message.severity, FINGERPRINT: message.fingerprint}
    return {**_named(message.labels.items(), set(own)), **own}


def alert_annotations(message: AlertMessage) -> dict[str, str]:
    own = {SUMMARY: message.summary}
    link = http_link(message)
    if link is not None:
        own[LINK] = link
    details = ((key, _text(value)) for key, value in message.extra.items() if value is not None)
    return {**_named(details, set(own)), **own}


def postable(message: AlertMessage, channel: ChannelConfig, now: datetime) -> dict[str, Any]:
    """One ``postableAlert``; a firing alert ends ``ENDS_AFTER_RESENDS`` resend periods after
    ``now``, a resolved one when it resolved (never before it started)."""
    if message.resolved_at is not None:
        ends = max(message.resolved_at, message.started_at)
    else:
        ends = now + timedelta(seconds=ENDS_AFTER_RESENDS * channel.resend_s)
    alert: dict[str, Any] = {
        "labels": alert_labels(message),
        "annotations": alert_annotations(message),
        "startsAt": iso(message.started_at),
        "endsAt": iso(ends),
    }
    link = http_link(message)
    if link is not None:
        alert["generatorURL"] = link
    return alert


def build_batch(
    messages: Sequence[AlertMessage], channel: ChannelConfig, idempotency_key: str, now: datetime
) -> Outgoing:
    """One POST of all ``messages`` (at most ``MAX_BATCH``: the caller cuts longer lists) to the
    channel's ``url``; ``send.at_each_address`` gives a channel of several one per address."""
    body = json_body([postable(message, channel, now) for message in messages])
    return Outgoing("POST", alerts_url(channel.url), json_headers(idempotency_key), body)


def build(
    message: AlertMessage, channel: ChannelConfig, idempotency_key: str, now: datetime
) -> Outgoing:
    return build_batch([message], channel, idempotency_key, now)


def _named(pairs: Iterable[tuple[str, str]], taken: set[str]) -> dict[str, str]:
    """``pairs`` with label names, in name order; the first wins a collision, a name in
    ``taken`` and an empty value are left out."""
    named: dict[str, str] = {}
    for key, value in sorted(pairs):
        name = label_name(key)
        if value and name not in taken and name not in named:
            named[name] = value
    return named


def _text(value: Extra) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(value)
    return str(value)
