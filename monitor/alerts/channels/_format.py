"""Text shared by the channel builders: timestamps, titles, label order, length limits, JSON."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from monitor.alerts.channels.model import AlertMessage

ELLIPSIS = "…"
# Labels people look for first, in this order; any others follow alphabetically.
LABEL_ORDER = ("target", "provider", "region", "zone", "pool", "component", "instance_type")
MARKERS = {"critical": "🔴", "warning": "🟠", "info": "🔵", "resolved": "✅"}


def iso(moment: datetime) -> str:
    """ISO 8601 in UTC with a ``Z``, as every slamon JSON output writes times."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def iso_or_none(moment: datetime | None) -> str | None:
    return None if moment is None else iso(moment)


def utf16_len(text: str) -> int:
    """Length as JavaScript counts it (Discord, Slack and Teams limits are checked in UTF-16
    code units); never less than the number of code points."""
    return len(text.encode("utf-16-le")) // 2


def truncate(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` UTF-16 code units (``limit`` ≥ 1), ending in ``…`` when
    cut; never splits a character."""
    if utf16_len(text) <= limit:
        return text
    kept: list[str] = []
    used = 1  # the ellipsis
    for char in text:
        width = 2 if ord(char) > 0xFFFF else 1
        if used + width > limit:
            break
        kept.append(char)
        used += width
    return "".join(kept) + ELLIPSIS


def ordered_labels(labels: dict[str, str]) -> list[tuple[str, str]]:
    known = [(key, labels[key]) for key in LABEL_ORDER if key in labels]
    return known + sorted((k, v) for k, v in labels.items() if k not in LABEL_ORDER)


def subject(message: AlertMessage) -> str:
    """What the alert is about, for titles: the target, else the provider, else the fingerprint."""
    return message.labels.get("target") or message.labels.get("provider") or message.fingerprint


def title(message: AlertMessage) -> str:
    """``FIRING (critical): target_down · trainer-0`` or ``RESOLVED: target_down · trainer-0``."""
    if message.event == "resolved":
        return f"RESOLVED: {message.rule} · {subject(message)}"
    return f"FIRING ({message.severity}): {message.rule} · {subject(message)}"


def marker(message: AlertMessage) -> str:
    """An emoji standing in for colour where a channel has none."""
    return MARKERS["resolved" if message.event == "resolved" else message.severity]


def shown_at(message: AlertMessage) -> datetime:
    """The moment a notification is about: when the alert resolved, else when it started."""
    return message.resolved_at or message.started_at


def http_link(message: AlertMessage) -> str | None:
    """The message's link when it is http(s); chat services reject other schemes in link fields,
    and a rejected payload would fail the whole notification."""
    url = message.url
    return url if url and url.startswith(("https://", "http://")) else None


def json_body(payload: Any) -> bytes:
    """Compact UTF-8 JSON; values JSON cannot hold (in ``extra``) are written as strings."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), default=str).encode()


def json_headers(idempotency_key: str) -> dict[str, str]:
    return {"Content-Type": "application/json", "Idempotency-Key": idempotency_key}
