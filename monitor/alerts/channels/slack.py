"""Slack incoming webhook: ``{"text", "blocks"}`` posted to the channel URL (a secret).

``text`` is the notification and accessibility fallback Slack asks for alongside ``blocks``.
Blocks: a ``header`` (plain text, ≤ 150 characters) with an emoji for severity, since Block Kit
has no colour bar (only legacy attachments do, and we do not use them); a ``section`` with the
summary (mrkdwn, ≤ 3000) and a link to slamon; a ``section`` of label ``fields`` (≤ 10, each
≤ 2000); a ``context`` line with severity, times (``<!date>``, shown in the reader's time zone)
and the fingerprint; and, when the message links to slamon, an ``actions`` block with an "Open in
slamon" link button (its ``url`` opens the page for what the alert is about). Text is escaped
(``&``, ``<``, ``>``) so an alert cannot inject mentions or links. The channel's ``secret`` is
not used.

Slack answers an error with a plain-text code in the body (api.slack.com/messaging/webhooks,
"Handling errors"); :func:`verdict` reads it.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from monitor.alerts.channels._format import (
    http_link,
    iso,
    json_post,
    marker,
    ordered_labels,
    title,
    truncate,
    utf16_len,
)
from monitor.alerts.channels.model import AlertMessage, Answer, Verdict, by_status

HEADER_LIMIT = 150
TEXT_LIMIT = 3000
FIELD_LIMIT = 2000
MAX_FIELDS = 10
MAX_LINK = 1000
BUTTON_URL_LIMIT = 3000

# The webhook, its channel or its workspace is gone, or posting was forbidden by an admin: every
# later message gets the same answer. invalid_payload, too_many_attachments and the like reject
# one message only.
DEAD_ERRORS = frozenset(
    {
        "invalid_token",  # the app was removed or the installing user deactivated
        "channel_not_found",
        "channel_is_archived",
        "no_service",  # the webhook was revoked
        "no_service_id",  # the URL is malformed
        "no_team",
        "team_disabled",
        "action_prohibited",  # an admin restricted posting to the channel
        "posting_to_general_channel_denied",
        "no_active_hooks",
    }
)
DEAD_STATUSES = frozenset({404, 410})  # the webhook URL itself is unknown or gone


def verdict(answer: Answer) -> Verdict:
    """Dead on a 404/410 or one of ``DEAD_ERRORS``; otherwise the generic rule (5xx and 429
    retried first: Slack's ``rollup_error`` is a 500)."""
    if answer.transient:
        return "retry"
    if answer.status_code in DEAD_STATUSES or error_code(answer.body) in DEAD_ERRORS:
        return "dead"
    return by_status(answer)


def error_code(body: str) -> str:
    """The error code of a Slack answer: the body itself (incoming webhooks), or the ``error``
    field of ``{"ok": false, "error": …}`` (Web API style answers)."""
    text = body.strip()
    if text.startswith("{"):
        try:
            document = json.loads(text)
        except ValueError:
            return ""
        error = document.get("error") if isinstance(document, dict) else None
        return error if isinstance(error, str) else ""
    return text


def payload(message: AlertMessage) -> dict[str, Any]:
    fallback = f"{marker(message)} {title(message)}: {message.summary}"
    blocks = [
        _header(message),
        _summary(message),
        _labels(message),
        _context(message),
        _button(message),
    ]
    return {"text": mrkdwn(fallback, TEXT_LIMIT), "blocks": [b for b in blocks if b]}


build = json_post(payload)


def escape(text: str) -> str:
    """Slack's three control characters, escaped as its docs require."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def mrkdwn(text: str, limit: int) -> str:
    """``text`` escaped and cut to ``limit``, without cutting an escape in half."""
    cut = limit
    while cut > 0:
        escaped = escape(truncate(text, cut))
        over = utf16_len(escaped) - limit
        if over <= 0:
            return escaped
        cut -= over
    return ""


def _header(message: AlertMessage) -> dict[str, Any]:
    text = truncate(f"{marker(message)} {title(message)}", HEADER_LIMIT)
    return {"type": "header", "text": {"type": "plain_text", "text": text, "emoji": True}}


def _summary(message: AlertMessage) -> dict[str, Any]:
    link = _link(message)
    text = mrkdwn(message.summary or "(no summary)", TEXT_LIMIT - utf16_len(link)) + link
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def _labels(message: AlertMessage) -> dict[str, Any] | None:
    labels = ordered_labels(message.labels)[:MAX_FIELDS]
    if not labels:
        return None
    fields = [{"type": "mrkdwn", "text": mrkdwn(f"*{k}*\n{v}", FIELD_LIMIT)} for k, v in labels]
    return {"type": "section", "fields": fields}


def _context(message: AlertMessage) -> dict[str, Any]:
    parts = [f"*{message.severity}*", f"started {_date(message.started_at)}"]
    if message.resolved_at is not None:
        parts.append(f"resolved {_date(message.resolved_at)}")
    parts.append(f"`{escape(message.fingerprint)}`")
    text = truncate(" · ".join(parts), TEXT_LIMIT)
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": text}]}


def _button(message: AlertMessage) -> dict[str, Any] | None:
    """An "Open in slamon" link button, when the message links to slamon (Block Kit: a button
    ``url`` of at most 3000 characters opens in the reader's browser)."""
    url = http_link(message)
    if url is None or len(url) > BUTTON_URL_LIMIT:
        return None
    button = {
        "type": "button",
        "text": {"type": "plain_text", "text": "Open in slamon", "emoji": False},
        "url": url,
        "action_id": "open-in-slamon",
    }
    return {"type": "actions", "elements": [button]}


def _date(moment: datetime) -> str:
    """Slack's date token: rendered in each reader's time zone, ISO as the fallback."""
    return f"<!date^{int(moment.timestamp())}^{{date_short_pretty}} {{time}}|{iso(moment)}>"


def _link(message: AlertMessage) -> str:
    url = http_link(message)
    # "<url|label>" breaks on the characters Slack escapes and on "|"; such a link is left out,
    # and so is one too long to leave room for the summary.
    if url is None or escape(url) != url or "|" in url or len(url) > MAX_LINK:
        return ""
    return f"\n<{url}|Open in slamon>"
