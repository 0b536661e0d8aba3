"""Microsoft Teams: an Adaptive Card message, posted to the channel URL (a secret).

The same body serves the retiring Office 365 "Incoming Webhook" connector and its replacement, a
Workflows "When a Teams webhook request is received" URL: ``{"type": "message", "attachments":
[{"contentType": "application/vnd.microsoft.card.adaptive", "contentUrl": null, "content":
<AdaptiveCard 1.4>}]}``. The card holds a title coloured by severity (``attention``, ``warning``,
``accent``; ``good`` once resolved), the summary, a FactSet of labels and times, and an "Open in
slamon" button when the message links to slamon. Teams caps a message at about 28 KB, so text is
bounded. The channel's ``secret`` is not used.

A connector that was removed, or a Workflow that was deleted, answers 404 or 410: the channel is
dead (:func:`verdict`). Any other 4xx (a card Teams refuses, 413 for an oversized one) fails that
message only.
"""

from __future__ import annotations

from typing import Any

from monitor.alerts.channels._format import (
    http_link,
    iso,
    json_post,
    ordered_labels,
    title,
    truncate,
)
from monitor.alerts.channels.model import AlertMessage, Answer, Verdict, by_status

CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"
CARD_SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
CARD_VERSION = "1.4"  # what both incoming webhooks and Workflows render
COLOURS = {"critical": "attention", "warning": "warning", "info": "accent", "resolved": "good"}
TITLE_LIMIT = 200
SUMMARY_LIMIT = 4000
FACT_LIMIT = 500
MAX_FACTS = 20
DEAD_STATUSES = frozenset({404, 410})


def verdict(answer: Answer) -> Verdict:
    """Dead on a 404/410, else the generic rule."""
    if not answer.transient and answer.status_code in DEAD_STATUSES:
        return "dead"
    return by_status(answer)


def payload(message: AlertMessage) -> dict[str, Any]:
    attachment = {"contentType": CARD_CONTENT_TYPE, "contentUrl": None, "content": card(message)}
    return {"type": "message", "attachments": [attachment]}


build = json_post(payload)


def card(message: AlertMessage) -> dict[str, Any]:
    content: dict[str, Any] = {
        "$schema": CARD_SCHEMA,
        "type": "AdaptiveCard",
        "version": CARD_VERSION,
        "msteams": {"width": "Full"},
        "body": [_title(message), _summary(message), _facts(message)],
    }
    link = http_link(message)
    if link:
        content["actions"] = [{"type": "Action.OpenUrl", "title": "Open in slamon", "url": link}]
    return content


def _title(message: AlertMessage) -> dict[str, Any]:
    colour = COLOURS["resolved" if message.event == "resolved" else message.severity]
    return {
        "type": "TextBlock",
        "text": truncate(title(message), TITLE_LIMIT),
        "size": "Large",
        "weight": "Bolder",
        "color": colour,
        "wrap": True,
    }


def _summary(message: AlertMessage) -> dict[str, Any]:
    text = truncate(message.summary or "(no summary)", SUMMARY_LIMIT)
    return {"type": "TextBlock", "text": text, "wrap": True}


def _facts(message: AlertMessage) -> dict[str, Any]:
    facts = [*ordered_labels(message.labels)[:MAX_FACTS], ("severity", message.severity)]
    facts.append(("started", iso(message.started_at)))
    if message.resolved_at is not None:
        facts.append(("resolved", iso(message.resolved_at)))
    facts.append(("fingerprint", message.fingerprint))
    return {
        "type": "FactSet",
        "facts": [
            {"title": truncate(k, FACT_LIMIT), "value": truncate(v, FACT_LIMIT)} for k, v in facts
        ],
    }
