"""What the channel builders share: timestamps, titles, label order, length limits, and the
JSON POST most kinds send (``json_post``)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from monitor.alerts.channels.model import AlertMessage, Outgoing
from monitor.config.models import ChannelConfig

Build = Callable[[AlertMessage, ChannelConfig, str, datetime], Outgoing]

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
    """Compact UTF-8 strict JSON. A non-finite number (an ``extra`` burn rate of a 100 %
    target), which JSON cannot hold, is written as the string ``"inf"``, ``"-inf"`` or
    ``"nan"``; any other value JSON cannot hold as its text."""
    return json.dumps(
        finite(payload), ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False
    ).encode()


def finite(value: Any) -> Any:
    """``value`` with every non-finite float in it replaced by its name (``inf``, ``nan``)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite(item) for item in value]
    return value


def json_headers(idempotency_key: str) -> dict[str, str]:
    return {"Content-Type": "application/json", "Idempotency-Key": idempotency_key}


def json_post(payload: Callable[[AlertMessage], dict[str, Any]]) -> Build:
    """The builder of a kind that POSTs ``payload(message)`` as JSON to the channel's URL with
    the delivery's ``Idempotency-Key``, and nothing else (Slack, Teams, Discord)."""

    def build(
        message: AlertMessage, channel: ChannelConfig, idempotency_key: str, now: datetime
    ) -> Outgoing:
        return Outgoing(
            "POST", channel.url, json_headers(idempotency_key), json_body(payload(message))
        )

    return build
