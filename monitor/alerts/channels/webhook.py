"""The generic webhook: versioned JSON, signed when the channel has a secret (docs/DESIGN.md,
Alerts).

The body is ``{"version": 1, "event", "alert": {"fingerprint", "rule", "severity", "labels",
"summary", "started_at", "resolved_at", "url", "extra"}, "sent_at"}``; times are ISO 8601 UTC.
Headers: ``Content-Type``, ``Idempotency-Key`` (the same on every retry of one delivery: a
receiver that remembers it processes each delivery once), ``X-Slamon-Event`` (``firing`` or
``resolved``) and, with a secret, ``X-Slamon-Signature: t=<unix>,v1=<hex>``, where the hex is
HMAC-SHA256 under the secret of ``"<t>."`` followed by the raw body bytes.

A receiver verifies with the standard library alone::

    import hashlib, hmac, time

    def verify(secret: bytes, header: str, body: bytes, tolerance_s: int = 300) -> bool:
        fields = dict(part.partition("=")[::2] for part in header.split(","))
        t = fields.get("t", "")
        if not (t.isascii() and t.isdigit()) or abs(time.time() - int(t)) > tolerance_s:
            return False  # missing, or too old or too far ahead: a replay
        expected = hmac.new(secret, t.encode() + b"." + body, hashlib.sha256).hexdigest()
        return hmac.compare_digest(expected.encode(), fields.get("v1", "").encode())

Verify the raw body before parsing it, and drop repeated ``Idempotency-Key`` values.

A receiver that answers 401 or 403 refuses our credentials (a rotated secret), and one that
answers 404 or 410 is not there any more: the channel is dead (:func:`verdict`). A 400 or 422
rejects that one delivery.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import datetime
from typing import Any

from monitor.alerts.channels._format import iso, iso_or_none, json_body, json_headers
from monitor.alerts.channels.model import AlertMessage, Answer, Outgoing, Verdict, by_status
from monitor.config.models import ChannelConfig

PAYLOAD_VERSION = 1
EVENT_HEADER = "X-Slamon-Event"
SIGNATURE_HEADER = "X-Slamon-Signature"
DEFAULT_TOLERANCE_S = 300
MAX_SIGNATURE_HEADER = 4096  # several v1= values during a secret rotation fit easily
MAX_STAMP_DIGITS = 12  # unix seconds until the year 33658
DEAD_STATUSES = frozenset({401, 403, 404, 410})


def verdict(answer: Answer) -> Verdict:
    """Dead on 401/403/404/410, else the generic rule."""
    if not answer.transient and answer.status_code in DEAD_STATUSES:
        return "dead"
    return by_status(answer)


def payload(message: AlertMessage, now: datetime) -> dict[str, Any]:
    return {
        "version": PAYLOAD_VERSION,
        "event": message.event,
        "alert": {
            "fingerprint": message.fingerprint,
            "rule": message.rule,
            "severity": message.severity,
            "labels": dict(message.labels),
            "summary": message.summary,
            "started_at": iso(message.started_at),
            "resolved_at": iso_or_none(message.resolved_at),
            "url": message.url,
            "extra": dict(message.extra),
        },
        "sent_at": iso(now),
    }


def build(
    message: AlertMessage, channel: ChannelConfig, idempotency_key: str, now: datetime
) -> Outgoing:
    """A POST of :func:`payload` to the channel URL, signed at ``now`` when it has a secret."""
    body = json_body(payload(message, now))
    headers = {**json_headers(idempotency_key), EVENT_HEADER: message.event}
    if channel.secret:
        headers[SIGNATURE_HEADER] = sign(channel.secret, body, now)
    secrets = (channel.secret,) if channel.secret else ()
    return Outgoing("POST", channel.url, headers, body, secrets)


def sign(secret: str, body: bytes, now: datetime) -> str:
    """The ``X-Slamon-Signature`` value for ``body`` sent at ``now``."""
    stamp = int(now.timestamp())
    return f"t={stamp},v1={_digest(secret, stamp, body)}"


def verify_signature(
    secret: str,
    header: str | None,
    body: bytes,
    now: datetime,
    tolerance_s: float = DEFAULT_TOLERANCE_S,
) -> bool:
    """True when ``header`` signs ``body`` under ``secret`` at a time within ``tolerance_s`` of
    ``now`` (either side: older is a replay, newer a forged or skewed clock). Any ``v1`` value
    may match, so a sender can sign with an old and a new secret during a rotation. Missing,
    malformed or oversized headers give False; this never raises."""
    parsed = _parse(header)
    if parsed is None or not secret:
        return False
    stamp, candidates = parsed
    if abs(now.timestamp() - stamp) > tolerance_s:
        return False
    expected = _digest(secret, stamp, body).encode()
    # Compare against every candidate, so timing does not reveal which one matched.
    matches = [hmac.compare_digest(expected, c.encode()) for c in candidates]
    return any(matches)


def _digest(secret: str, stamp: int, body: bytes) -> str:
    signed = f"{stamp}.".encode() + body
    return hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()


def _parse(header: str | None) -> tuple[int, list[str]] | None:
    """``(t, [v1, …])`` from ``t=…,v1=…``; None when malformed. Unknown schemes (``v0=``, a
    future ``v2=``) are skipped so senders can add one without breaking receivers."""
    if not isinstance(header, str) or len(header) > MAX_SIGNATURE_HEADER:
        return None
    stamps, signatures = [], []
    for part in header.split(","):
        key, sep, value = part.strip().partition("=")
        if not sep:
            return None
        if key == "t":
            stamps.append(value)
        elif key == "v1":
            signatures.append(value)
    if len(stamps) != 1 or not signatures:
        return None
    stamp = stamps[0]
    if not (stamp.isascii() and stamp.isdigit()) or len(stamp) > MAX_STAMP_DIGITS:
        return None
    return int(stamp), signatures
