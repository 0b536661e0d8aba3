"""PagerDuty Events API v2 (``POST https://events.pagerduty.com/v2/enqueue``).

The channel's ``secret`` is the routing key (the service integration's 32-character key), so it
can come from the environment like every other secret and never sits in a URL that ends up in a
log. The channel's ``url`` is the endpoint: the default one above, the EU one
(``https://events.eu.pagerduty.com/v2/enqueue``) or a proxy. A channel without a secret is a
configuration error.

``dedup_key`` is the alert fingerprint, so a re-notification updates the open PagerDuty alert
and the resolve closes it (fingerprints over PagerDuty's 255 characters are replaced by their
SHA-256, the same for trigger and resolve). A firing alert is a ``trigger`` with a ``payload``:
``summary`` (≤ 1024), ``source`` (the target, else the provider), ``severity`` (slamon's
critical/warning/info map to the same names; PagerDuty's ``error`` is not used), ``timestamp``
(when it started), ``component`` (the pool), ``group`` (provider/region), ``class`` (the rule)
and ``custom_details``. A resolved alert is a ``resolve`` carrying only the routing key, action
and dedup key, as PagerDuty documents it.

PagerDuty answers 202, 400 for an invalid event (its ``errors`` list says why), 429 when the
service is over its rate and 5xx when it is in trouble. A 400 about the routing key (a deleted
integration, a mistyped key) or a 404 (no Events API at that URL) means the channel is dead
(:func:`verdict`); a 400 about anything else fails that one event.
"""

from __future__ import annotations

import hashlib
import re
from datetime import datetime
from typing import Any

from monitor.alerts.channels._format import (
    http_link,
    iso,
    iso_or_none,
    json_body,
    json_headers,
    ordered_labels,
    truncate,
)
from monitor.alerts.channels.model import AlertMessage, Answer, Outgoing, Verdict, by_status
from monitor.config.models import ChannelConfig
from monitor.errors import ConfigError

EVENTS_URL = "https://events.pagerduty.com/v2/enqueue"
SUMMARY_LIMIT = 1024
DEDUP_KEY_LIMIT = 255
FIELD_LIMIT = 255  # source, component, group and class are short identifiers
DEAD_STATUSES = frozenset({404})
ROUTING_KEY_ERROR = re.compile(r"routing[ _-]?key", re.IGNORECASE)


def build(
    message: AlertMessage, channel: ChannelConfig, idempotency_key: str, now: datetime
) -> Outgoing:
    """Raises ConfigError when the channel has no routing key in ``secret``."""
    if not channel.secret:
        raise ConfigError(
            f"channel {channel.name!r}: a pagerduty channel needs its routing key in 'secret'"
        )
    body = json_body(event(message, channel.secret))
    return Outgoing("POST", channel.url, json_headers(idempotency_key), body, (channel.secret,))


def verdict(answer: Answer) -> Verdict:
    """Dead on a 404, or a 400 whose errors name the routing key; else the generic rule."""
    if answer.transient:
        return "retry"
    if answer.status_code in DEAD_STATUSES:
        return "dead"
    if answer.status_code == 400 and ROUTING_KEY_ERROR.search(answer.body):
        return "dead"
    return by_status(answer)


def event(message: AlertMessage, routing_key: str) -> dict[str, Any]:
    action = "resolve" if message.event == "resolved" else "trigger"
    sent: dict[str, Any] = {
        "routing_key": routing_key,
        "event_action": action,
        "dedup_key": dedup_key(message.fingerprint),
    }
    if action == "trigger":
        sent |= {"payload": _payload(message), "client": "slamon"}
        link = http_link(message)
        if link:
            sent |= {"client_url": link, "links": [{"href": link, "text": "Open in slamon"}]}
    return sent


def dedup_key(fingerprint: str) -> str:
    if len(fingerprint) <= DEDUP_KEY_LIMIT:
        return fingerprint
    return hashlib.sha256(fingerprint.encode()).hexdigest()


def _payload(message: AlertMessage) -> dict[str, Any]:
    labels = message.labels
    group = "/".join(labels[k] for k in ("provider", "region") if labels.get(k))
    optional = {"component": labels.get("pool"), "group": group}
    return {
        "summary": truncate(message.summary or message.rule, SUMMARY_LIMIT),
        "source": _short(labels.get("target") or labels.get("provider") or "slamon"),
        "severity": message.severity,
        "timestamp": iso(message.started_at),
        "class": _short(message.rule),
        **{key: _short(value) for key, value in optional.items() if value},
        "custom_details": _details(message),
    }


def _details(message: AlertMessage) -> dict[str, Any]:
    return {
        "fingerprint": message.fingerprint,
        "rule": message.rule,
        "labels": dict(ordered_labels(message.labels)),
        "started_at": iso(message.started_at),
        "resolved_at": iso_or_none(message.resolved_at),
        **({"extra": dict(message.extra)} if message.extra else {}),
    }


def _short(text: str) -> str:
    return truncate(text, FIELD_LIMIT)
