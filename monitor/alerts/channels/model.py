"""What the channels are given and what they return: an alert message in, a built request out, and
the outcome of sending it. Plain values; no I/O."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, cast, get_args

from monitor.alerts.channels.redact import redact_url
from monitor.sla.times import parse_aware

Severity = Literal["critical", "warning", "info"]
Event = Literal["firing", "resolved"]

SEVERITIES: tuple[str, ...] = get_args(Severity)
EVENTS: tuple[str, ...] = get_args(Event)

Extra = str | int | float | bool | None | list[str]
"""What a value of ``AlertMessage.extra`` may be: a JSON scalar, or a list of strings (the
targets an account event names). A float may be infinite (a burn rate on a 100 % target): see
``AlertMessage.to_json``."""
EXTRA_TYPES = (str, int, float, bool, type(None))  # the scalars


def is_extra(value: object) -> bool:
    """Whether ``value`` may be a value of ``AlertMessage.extra`` (see ``Extra``)."""
    if isinstance(value, list):
        return all(isinstance(item, str) for item in value)
    return isinstance(value, EXTRA_TYPES)


NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
NON_FINITE_TAG = "non_finite"  # {"non_finite": "inf"}: how the outbox stores what JSON cannot


@dataclass(frozen=True, slots=True)
class AlertMessage:
    """One notification about one alert, the same for every channel.

    ``labels`` name what is affected (``provider``, ``region``, ``pool``, ``target``…). Times are
    timezone-aware. ``resolved_at`` is None while ``event`` is ``"firing"`` and set once it is
    ``"resolved"``. ``url`` links back to slamon (None without ``SLAMON_PUBLIC_URL``); ``extra``
    holds rule-specific details (burn rates, incident ids, an event's targets…) as JSON scalars
    or lists of strings (``Extra``) that channels with room for them pass on. Raises ValueError
    when inconsistent.
    """

    fingerprint: str
    rule: str
    severity: Severity
    labels: dict[str, str]
    summary: str
    started_at: datetime
    resolved_at: datetime | None = None
    event: Event = "firing"
    url: str | None = None
    extra: dict[str, Extra] = field(default_factory=dict)

    def __post_init__(self) -> None:
        problems = _problems(self)
        if problems:
            raise ValueError("AlertMessage: " + "; ".join(problems))

    def to_json(self) -> dict[str, Any]:
        """The whole message as strict JSON (what the outbox row stores): times in ISO 8601
        with their offset, ``url`` and every ``extra`` as is, except a non-finite float, which
        JSON cannot hold, as ``{"non_finite": "inf" | "-inf" | "nan"}``.
        ``AlertMessage.from_json(m.to_json()) == m``."""
        return {
            "fingerprint": self.fingerprint,
            "rule": self.rule,
            "severity": self.severity,
            "labels": dict(self.labels),
            "summary": self.summary,
            "started_at": self.started_at.isoformat(),
            "resolved_at": None if self.resolved_at is None else self.resolved_at.isoformat(),
            "event": self.event,
            "url": self.url,
            "extra": {key: _stored(value) for key, value in self.extra.items()},
        }

    @classmethod
    def from_json(cls, document: Mapping[str, Any]) -> AlertMessage:
        """The message ``to_json`` wrote, or one an outbox row of an older slamon holds (no
        ``url``, string extras only). Raises ValueError naming what is missing or malformed."""
        fingerprint, rule = _text(document, "fingerprint"), _text(document, "rule")
        severity, event = _text(document, "severity"), _text(document, "event")
        labels = _mapping(document, "labels")
        extra = _mapping(document, "extra", required=False)
        url = document.get("url")
        if url is not None and not isinstance(url, str):
            raise ValueError(f"AlertMessage JSON: url must be a string or null, got {url!r}")
        return cls(
            fingerprint=fingerprint,
            rule=rule,
            severity=cast(Severity, severity),
            labels={str(k): str(v) for k, v in labels.items()},
            summary=_text(document, "summary"),
            started_at=_moment(document, "started_at"),
            resolved_at=_optional_moment(document, "resolved_at"),
            event=cast(Event, event),
            url=url,
            extra={str(k): _loaded(str(k), v) for k, v in extra.items()},
        )


def _stored(value: Extra) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return {NON_FINITE_TAG: "nan" if math.isnan(value) else "inf" if value > 0 else "-inf"}
    return list(value) if isinstance(value, list) else value


def _loaded(key: str, value: Any) -> Extra:
    tagged = isinstance(value, dict) and set(value) == {NON_FINITE_TAG}
    if tagged and value[NON_FINITE_TAG] in NON_FINITE:
        return NON_FINITE[value[NON_FINITE_TAG]]
    if is_extra(value):
        return list(value) if isinstance(value, list) else cast(Extra, value)
    raise ValueError(
        f"AlertMessage JSON: extra {key!r} is not a JSON scalar or a list of strings: {value!r}"
    )


def _text(document: Mapping[str, Any], key: str) -> str:
    value = document.get(key)
    if not isinstance(value, str):
        raise ValueError(f"AlertMessage JSON: {key} must be a string, got {value!r}")
    return value


def _mapping(document: Mapping[str, Any], key: str, required: bool = True) -> Mapping[str, Any]:
    value = document.get(key)
    if value is None and not required:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"AlertMessage JSON: {key} must be an object, got {value!r}")
    return value


def _optional_moment(document: Mapping[str, Any], key: str) -> datetime | None:
    return None if document.get(key) is None else _moment(document, key)


def _moment(document: Mapping[str, Any], key: str) -> datetime:
    value = document.get(key)
    if not isinstance(value, str):
        raise ValueError(f"AlertMessage JSON: {key} must be an ISO 8601 time, got {value!r}")
    try:
        return parse_aware(value, key)
    except ValueError as exc:
        raise ValueError(f"AlertMessage JSON: {exc}") from None


def _problems(message: AlertMessage) -> list[str]:
    problems = []
    if not message.fingerprint:
        problems.append("fingerprint must not be empty")
    if message.severity not in SEVERITIES:
        problems.append(f"severity must be one of {', '.join(SEVERITIES)}")
    if message.event not in EVENTS:
        problems.append(f"event must be one of {', '.join(EVENTS)}")
    if (message.event == "resolved") != (message.resolved_at is not None):
        problems.append("resolved_at is set exactly when event is 'resolved'")
    moments = [message.started_at, message.resolved_at]
    if any(m is not None and m.utcoffset() is None for m in moments):
        problems.append("times must be timezone-aware")
    odd = sorted(k for k, v in message.extra.items() if not is_extra(v))
    if odd:
        problems.append(
            f"extra values must be strings, numbers, booleans, null or lists of strings: {odd}"
        )
    return problems


@dataclass(frozen=True, slots=True, repr=False)
class Outgoing:
    """An HTTP request ready to send. ``secrets`` lists strings (routing keys…) that must be
    scrubbed from any error text about this request; the URL's own secret parts always are.
    ``repr`` shows the redacted URL, the header names and the body size, never their values."""

    method: str
    url: str
    headers: dict[str, str]
    body: bytes
    secrets: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return (
            f"Outgoing({self.method} {redact_url(self.url)}, headers={sorted(self.headers)}, "
            f"body={len(self.body)} bytes)"
        )


Verdict = Literal["retry", "failed", "dead"]
"""What an answer that is not a 2xx means. ``retry``: the receiver or the network is having a
bad moment, later may work. ``failed``: this one message will never be accepted (a payload the
receiver rejects), but the channel works. ``dead``: the channel itself is gone or refused (a
revoked token, a deleted webhook, an archived Slack channel), so every later message would fail
the same way until someone changes its config: the channel is disabled and its deliveries held.
"""

TRANSIENT_STATUSES = frozenset({408, 425, 429})


@dataclass(frozen=True, slots=True)
class Answer:
    """A receiver's answer that is not a 2xx, as the per-kind rules judge it: the status and the
    start of the body on one line. The body is judged in memory and never stored as is (what is
    stored is the redacted error)."""

    status_code: int
    body: str = ""

    @property
    def transient(self) -> bool:
        """408, 425, 429 or 5xx: always worth another try, whatever the body says, so a
        receiver having a bad moment never disables a channel."""
        return self.status_code in TRANSIENT_STATUSES or self.status_code >= 500


def by_status(answer: Answer) -> Verdict:
    """The rule for a receiver we know nothing about: transient statuses are retried, any
    other answer (4xx, and 3xx, since a signed POST is not replayed elsewhere) fails the one
    message and never disables the channel, since we cannot tell a dead URL from a bad body."""
    return "retry" if answer.transient else "failed"


@dataclass(frozen=True, slots=True)
class SendOutcome:
    """What happened to one delivery attempt. ``retry`` is True only when trying again later may
    succeed (timeouts, connection errors, 408/425/429/5xx); a permanent failure (``retry`` and
    ``delivered`` False) fails this message. ``dead`` is a permanent failure that also says the
    channel is dead (see ``Verdict``). ``error`` never holds a secret. ``retry_after_s`` is the
    receiver's Retry-After, when it sent one in seconds."""

    delivered: bool
    retry: bool
    status_code: int | None = None
    error: str | None = None
    retry_after_s: float | None = None
    dead: bool = False

    @property
    def result(self) -> Literal["delivered", "retry", "failed", "dead"]:
        if self.delivered:
            return "delivered"
        if self.retry:
            return "retry"
        return "dead" if self.dead else "failed"

    @classmethod
    def ok(cls, status_code: int | None) -> SendOutcome:
        return cls(delivered=True, retry=False, status_code=status_code)

    @classmethod
    def retry_later(
        cls, status_code: int | None, error: str, retry_after_s: float | None = None
    ) -> SendOutcome:
        return cls(False, True, status_code, error, retry_after_s)

    @classmethod
    def permanent(cls, status_code: int | None, error: str) -> SendOutcome:
        return cls(delivered=False, retry=False, status_code=status_code, error=error)

    @classmethod
    def channel_dead(cls, status_code: int | None, error: str) -> SendOutcome:
        return cls(delivered=False, retry=False, status_code=status_code, error=error, dead=True)

    @classmethod
    def judged(
        cls, verdict: Verdict, status_code: int | None, error: str, retry_after_s: float | None
    ) -> SendOutcome:
        """The outcome a rule's ``verdict`` stands for; Retry-After only matters for a retry."""
        if verdict == "retry":
            return cls.retry_later(status_code, error, retry_after_s)
        if verdict == "dead":
            return cls.channel_dead(status_code, error)
        return cls.permanent(status_code, error)
