"""Discord webhook: ``{"content", "embeds": [one embed], "allowed_mentions"}`` posted to the
channel URL (a secret: ``/api/webhooks/ID/TOKEN``).

``content`` is a one-line preview, what push notifications show. The embed carries the title,
the summary as description, a colour by severity, label fields and the time. Discord rejects
(400) a message over its limits, which would lose the alert, so every limit is honoured here:
content ≤ 2000, title ≤ 256, description ≤ 4096, ≤ 25 fields of name ≤ 256 and value ≤ 1024,
footer ≤ 2048, and ≤ 6000 characters over the whole embed (labels are dropped before the summary
is cut to nothing). ``allowed_mentions`` is empty, so an ``@everyone`` in alert text pings no one.
The channel's ``secret`` is not used.

Discord answers an error with ``{"message", "code"}`` (its JSON error codes); :func:`verdict`
reads the code.
"""

from __future__ import annotations

import json
from typing import Any

from monitor.alerts.channels._format import (
    http_link,
    iso,
    json_post,
    marker,
    ordered_labels,
    shown_at,
    title,
    truncate,
    utf16_len,
)
from monitor.alerts.channels.model import AlertMessage, Answer, Verdict, by_status

CONTENT_LIMIT = 2000
PREVIEW_LIMIT = 300  # content is a preview; the embed holds the whole summary
TITLE_LIMIT = 256
DESCRIPTION_LIMIT = 4096
FIELD_NAME_LIMIT = 256
FIELD_VALUE_LIMIT = 1024
MAX_FIELDS = 25
FOOTER_LIMIT = 2048
EMBED_LIMIT = 6000
MIN_DESCRIPTION = 1024  # labels give way before the summary is cut below this
# 401: the token in the URL is wrong; 404: the webhook (or its channel) was deleted.
DEAD_STATUSES = frozenset({401, 404})
DEAD_CODES = frozenset(
    {
        10003,  # Unknown Channel
        10015,  # Unknown Webhook
        50027,  # Invalid Webhook Token
    }
)
COLOURS = {"critical": 0xE01E5A, "warning": 0xF2A33A, "info": 0x3B82F6, "resolved": 0x2EB67D}


def verdict(answer: Answer) -> Verdict:
    """Dead on a 401/404 or one of ``DEAD_CODES`` (Discord's "Unknown Webhook" and "Invalid
    Webhook Token"); a 400 for an embed it refuses fails that message only."""
    if answer.transient:
        return "retry"
    if answer.status_code in DEAD_STATUSES or error_code(answer.body) in DEAD_CODES:
        return "dead"
    return by_status(answer)


def error_code(body: str) -> int | None:
    """The ``code`` of a Discord JSON error, None when the body is not one."""
    try:
        document = json.loads(body)
    except ValueError:
        return None
    code = document.get("code") if isinstance(document, dict) else None
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def payload(message: AlertMessage) -> dict[str, Any]:
    preview = f"{marker(message)} **{title(message)}** {message.summary}"
    return {
        "content": truncate(preview, min(PREVIEW_LIMIT, CONTENT_LIMIT)),
        "embeds": [embed(message)],
        "allowed_mentions": {"parse": []},
    }


build = json_post(payload)


def embed(message: AlertMessage) -> dict[str, Any]:
    head = truncate(title(message), TITLE_LIMIT)
    footer = truncate(f"slamon · {message.fingerprint}", FOOTER_LIMIT)
    budget = EMBED_LIMIT - utf16_len(head) - utf16_len(footer)
    fields = _fields(message, budget - MIN_DESCRIPTION)
    used = sum(utf16_len(f["name"]) + utf16_len(f["value"]) for f in fields)
    described = truncate(message.summary or "(no summary)", min(DESCRIPTION_LIMIT, budget - used))
    sent: dict[str, Any] = {
        "title": head,
        "description": described,
        "color": COLOURS["resolved" if message.event == "resolved" else message.severity],
        "fields": fields,
        "timestamp": iso(shown_at(message)),
        "footer": {"text": footer},
    }
    link = http_link(message)
    if link:
        sent["url"] = link
    return sent


def _fields(message: AlertMessage, budget: int) -> list[dict[str, Any]]:
    """Label fields, in label order, while they fit ``budget`` characters."""
    fields: list[dict[str, Any]] = []
    for key, value in ordered_labels(message.labels)[:MAX_FIELDS]:
        # Discord rejects empty names and values.
        name = truncate(key or "-", FIELD_NAME_LIMIT)
        shown = truncate(value or "-", FIELD_VALUE_LIMIT)
        cost = utf16_len(name) + utf16_len(shown)
        if cost > budget:
            break
        fields.append({"name": name, "value": shown, "inline": True})
        budget -= cost
    return fields
