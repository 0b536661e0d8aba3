"""Turning signals into alert state and outbox rows, in the caller's transaction: the state
change and its pending deliveries commit together or not at all (the transactional outbox)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import cast

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from monitor.alerts.channels.model import AlertMessage, Event, Extra, Severity, is_extra
from monitor.alerts.links import alert_url
from monitor.alerts.routing import route, silenced
from monitor.alerts.rules import Signal
from monitor.config.models import Config, SilenceConfig
from monitor.db.dialect import insert_ignoring_conflicts
from monitor.db.models import Alert, Channel, Delivery, Silence
from monitor.events import emitting
from monitor.history import incidents, maintenance
from monitor.sla.maintenance import in_maintenance, windows_for

NOTICE_RULES = frozenset({"monthly_report", "credit_claim_due"})
# Told when they fire and reminded once (a signal's ``remind_at``), never re-notified: work a
# provider announces two weeks ahead would otherwise be told again every ``renotify``.
ANNOUNCED_RULES = frozenset({"scheduled_maintenance"})
REMINDER_PREFIX = "Reminder: "


@dataclass(frozen=True, slots=True)
class Applied:
    changed: int
    deliveries: int


@dataclass(frozen=True, slots=True)
class Sweep:
    """What one application of signals works with: the config, the moment and the public URL
    the queued messages link under (None: they carry no link)."""

    config: Config
    now: datetime
    public_url: str | None


def apply(
    session: Session,
    signals: Iterable[Signal],
    config: Config,
    now: datetime,
    *,
    public_url: str | None = None,
) -> Applied:
    """Apply each signal; returns how many alerts changed and how many deliveries were queued.
    Each queued message links to its page under ``public_url`` (``Settings.public_url``)."""
    sweep = Sweep(config, now, public_url)
    changed = queued = 0
    for signal in signals:
        alert = _stored(session, signal)
        if signal.firing:
            outcome = _fire(session, alert, signal, sweep)
        else:
            outcome = _resolve(session, alert, signal, sweep)
        changed += outcome[0]
        queued += outcome[1]
    return Applied(changed, queued)


def _fire(session: Session, alert: Alert | None, signal: Signal, sweep: Sweep) -> tuple[int, int]:
    config, now = sweep.config, sweep.now
    if signal.rule in NOTICE_RULES:
        return _notice(session, alert, signal, sweep)
    if alert is not None and alert.state == "firing":
        alert.summary = signal.summary
        if alert.suppressed:
            return 0, 0
        if _reminder_due(alert, signal, now):
            return 0, _enqueue(session, alert, "firing", signal, sweep, reminder=True)
        due = alert.last_notified_at is None or now - alert.last_notified_at >= timedelta(
            seconds=config.alerts.renotify
        )
        if due and signal.rule not in ANNOUNCED_RULES:
            return 0, _enqueue(session, alert, "firing", signal, sweep, renotify=True)
        return 0, 0
    new = alert is None
    alert = alert or Alert(fingerprint=signal.fingerprint)
    alert.rule, alert.severity, alert.labels = signal.rule, signal.severity, dict(signal.labels)
    alert.summary, alert.state, alert.started_at, alert.resolved_at = (
        signal.summary,
        "firing",
        signal.at,
        None,
    )
    alert.group_key = _incident_group(session, signal, config)
    alert.suppressed = alert.group_key is not None or _muted(session, signal, config, now)
    alert.last_notified_at = None
    if new and not _inserted(session, alert):
        return _fire(session, _stored(session, signal), signal, sweep)
    session.flush()
    emitting.alert_firing(session, alert.rule, alert.labels, alert.suppressed)
    return 1, 0 if alert.suppressed else _enqueue(session, alert, "firing", signal, sweep)


def _inserted(session: Session, alert: Alert) -> bool:
    """Insert a new alert; False, adding nothing, when another transaction fired the same
    fingerprint since this one read it (two evaluations at once, or a push beside one: on
    PostgreSQL the insert waits for the other's commit, then collides on the fingerprint)."""
    try:
        with session.begin_nested():  # a savepoint: the collision leaves the transaction usable
            session.add(alert)
    except IntegrityError:
        return False
    return True


def _stored(session: Session, signal: Signal) -> Alert | None:
    """The signal's alert, as committed or as this transaction left it."""
    query = select(Alert).where(Alert.fingerprint == signal.fingerprint)
    return session.scalars(query).one_or_none()


def _reminder_due(alert: Alert, signal: Signal, now: datetime) -> bool:
    """The signal's reminder is due (``remind_at`` has come) and nothing was sent since it
    came: sent once, or again only when the provider moves the work and with it the moment."""
    remind_at = signal.remind_at
    if remind_at is None or now < remind_at:
        return False
    return alert.last_notified_at is None or alert.last_notified_at < remind_at


def _notice(session: Session, alert: Alert | None, signal: Signal, sweep: Sweep) -> tuple[int, int]:
    """A one-off announcement (a report is ready, a claim deadline is near): sent once per
    fingerprint, recorded as already resolved so no "resolved" message follows."""
    if alert is not None:
        return 0, 0
    alert = Alert(
        fingerprint=signal.fingerprint,
        rule=signal.rule,
        severity=signal.severity,
        labels=dict(signal.labels),
        summary=signal.summary,
        state="firing",
        started_at=signal.at,
        suppressed=False,
    )
    if not _inserted(session, alert):
        return 0, 0  # another transaction announced it a moment ago
    queued = _enqueue(session, alert, "firing", signal, sweep)
    alert.state, alert.resolved_at = "resolved", signal.at
    return 1, queued


def _resolve(
    session: Session, alert: Alert | None, signal: Signal, sweep: Sweep
) -> tuple[int, int]:
    if alert is None or alert.state != "firing":
        return 0, 0
    alert.state, alert.resolved_at, alert.summary = "resolved", signal.at, signal.summary
    emitting.alert_resolved(session, alert.rule, alert.labels)
    # A grouped alert's resolve is still delivered: people need to know each target is back.
    notify = alert.last_notified_at is not None or alert.group_key is not None
    return 1, _enqueue(session, alert, "resolved", signal, sweep) if notify else 0


def _muted(session: Session, signal: Signal, config: Config, now: datetime) -> bool:
    """Silenced (config or API) or inside a maintenance window (configured, or held by an
    operator's maintenance notice): recorded, not sent."""
    stored = session.scalars(select(Silence).where(Silence.starts_at <= now, Silence.ends_at > now))
    api_silences = [
        SilenceConfig(match=s.matchers, start=s.starts_at, end=s.ends_at) for s in stored
    ]
    matched = matchable(signal.labels, signal.rule, signal.severity)
    return (
        silenced(matched, [*config.silences, *api_silences], now)
        or in_maintenance(signal.labels, config.maintenance, now)
        or bool(windows_for(signal.labels, maintenance.announced_at(session, now)))
    )


def matchable(labels: dict[str, str], rule: str, severity: str) -> dict[str, str]:
    """What a route's or a silence's ``match`` is compared with: the alert's labels, and its
    ``rule`` and ``severity`` (``match: {severity: critical}`` pages on every critical alert)."""
    return {**labels, "rule": rule, "severity": severity}


def _incident_group(session: Session, signal: Signal, config: Config) -> str | None:
    """A target alert covered by an open provider incident in its region joins that incident's
    page instead of paging on its own."""
    provider, region = signal.labels.get("provider"), signal.labels.get("region")
    if not config.alerts.group_by_incident or signal.rule != "target_down" or not provider:
        return None
    for incident in incidents.open_of(session, provider):
        if not incident.regions or (region and region in incident.regions):
            return f"incident:{provider}:{incident.source_id}"
    return None


def _enqueue(
    session: Session,
    alert: Alert,
    event: str,
    signal: Signal,
    sweep: Sweep,
    renotify: bool = False,
    reminder: bool = False,
) -> int:
    """Queue ``event`` of ``alert`` to each channel its labels route to; a re-notification is
    keyed by its moment, a reminder by the moment it was due (so it is queued once)."""
    config, now = sweep.config, sweep.now
    matched = matchable(alert.labels, alert.rule, alert.severity)
    names = route(matched, config.routes, [c.name for c in config.channels])
    if not names:
        return 0
    channel_ids = _channel_ids(session, config, names)
    epoch = int(alert.started_at.timestamp())
    suffix = f":{int(now.timestamp())}" if renotify else ""
    if reminder and signal.remind_at is not None:
        suffix = f":reminder:{int(signal.remind_at.timestamp())}"
    payload = message_of(alert, event, signal, sweep.public_url, reminder=reminder).to_json()
    rows = [
        {
            "alert_id": alert.id,
            "channel_id": channel_ids[name],
            "event": event,
            "idempotency_key": f"{alert.fingerprint}:{epoch}:{event}:{name}{suffix}",
            "payload": payload,
            "status": "pending",
            "attempts": 0,
            "next_attempt_at": now,
            "created_at": now,
        }
        for name in names
    ]
    added = insert_ignoring_conflicts(session, Delivery, rows, ["idempotency_key"])
    alert.last_notified_at = now
    return added


def message_of(
    alert: Alert, event: str, signal: Signal, public_url: str | None, *, reminder: bool = False
) -> AlertMessage:
    """The message the outbox keeps for the sender (``AlertMessage.to_json`` in the row): the
    alert as it stands, its link under ``public_url`` and the signal's details. A reminder of a
    firing alert says so: its summary begins ``Reminder:`` and ``extra.reminder`` is true."""
    extra = {key: extra_value(value) for key, value in signal.extra.items()}
    summary = alert.summary
    if reminder:
        summary, extra["reminder"] = REMINDER_PREFIX + summary, True
    return AlertMessage(
        fingerprint=alert.fingerprint,
        rule=alert.rule,
        severity=cast(Severity, alert.severity),
        labels=dict(alert.labels),
        summary=summary,
        started_at=alert.started_at,
        resolved_at=alert.resolved_at if event == "resolved" else None,
        event=cast(Event, event),
        url=alert_url(public_url, alert.labels),
        extra=extra,
    )


def extra_value(value: object) -> Extra:
    """A signal's detail as a message holds it: JSON scalars and lists of strings (the targets
    an event names) as they are, anything else (a time) as its text."""
    if is_extra(value):
        return cast(Extra, value)
    if isinstance(value, tuple) and all(isinstance(item, str) for item in value):
        return list(value)
    return str(value)


def _channel_ids(session: Session, config: Config, names: list[str]) -> dict[str, int]:
    kinds = {c.name: c.kind for c in config.channels}
    existing = {c.name: c for c in session.scalars(select(Channel).where(Channel.name.in_(names)))}
    for name in names:
        if name not in existing:
            existing[name] = Channel(name=name, kind=kinds.get(name, "webhook"), enabled=True)
            session.add(existing[name])
    session.flush()
    return {name: row.id for name, row in existing.items()}
