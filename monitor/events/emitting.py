"""Printing events: now (``emit``), or when the session's transaction commits
(``after_commit``, forgotten on a rollback), and one emitter per event found inside a
transaction (an outage, an incident, an alert, a channel, a feed)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from monitor.events.words import (
    ALERT_DELIVERED,
    ALERT_FIRING,
    ALERT_RESOLVED,
    CHANNEL_DISABLED,
    CHANNEL_ENABLED,
    DELIVERY_GIVEN_UP,
    FEED_BACK,
    FEED_FAILING,
    INCIDENT_OPENED,
    INCIDENT_RESOLVED,
    OutageChange,
    alert_delivered_text,
    alert_firing_text,
    alert_resolved_text,
    channel_disabled_text,
    channel_enabled_text,
    delivery_given_up_text,
    feed_back_text,
    feed_failing_text,
    incident_opened_text,
    incident_resolved_text,
    line,
    outage_lines,
)

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

LOGGER_NAME = "slamon.events"
log = logging.getLogger(LOGGER_NAME)

_PENDING = "slamon.events.pending"  # session.info key: events waiting for the commit


def emit(word: str, facts: str) -> None:
    """Print one event now (outside any transaction, or when it does not depend on one)."""
    log.info("%s", line(word, facts))


def after_commit(session: Session, word: str, facts: str) -> None:
    """Print one event when ``session``'s transaction commits; forget it on a rollback."""
    pending: list[tuple[str, str]] | None = session.info.get(_PENDING)
    if pending is None:
        from sqlalchemy import event as sa_event

        pending = session.info[_PENDING] = []
        sa_event.listen(session, "after_commit", _print_pending)
        sa_event.listen(session, "after_rollback", _drop_pending)
    pending.append((word, facts))


def _print_pending(session: Session) -> None:
    if session.in_nested_transaction():
        return  # a savepoint was released: the outer transaction may still roll back
    pending = session.info.get(_PENDING) or []
    for word, facts in pending:
        emit(word, facts)
    pending.clear()


def _drop_pending(session: Session) -> None:
    if not session.in_nested_transaction():
        (session.info.get(_PENDING) or []).clear()


def outages_changed(session: Session, changes: Sequence[OutageChange], now: datetime) -> None:
    for word, facts in outage_lines(changes, now):
        after_commit(session, word, facts)


def incident_opened(
    session: Session, provider: str, title: str, *, maintenance: bool, relevant: bool
) -> None:
    facts = incident_opened_text(provider, title, maintenance=maintenance, relevant=relevant)
    after_commit(session, INCIDENT_OPENED, facts)


def incident_resolved(session: Session, provider: str, title: str, lasted_s: float | None) -> None:
    after_commit(session, INCIDENT_RESOLVED, incident_resolved_text(provider, title, lasted_s))


def alert_firing(session: Session, rule: str, labels: Mapping[str, str], muted: bool) -> None:
    after_commit(session, ALERT_FIRING, alert_firing_text(rule, labels, muted=muted))


def alert_resolved(session: Session, rule: str, labels: Mapping[str, str]) -> None:
    after_commit(session, ALERT_RESOLVED, alert_resolved_text(rule, labels))


def alert_delivered(
    session: Session, rule: str, labels: Mapping[str, str], channel: str, event: str
) -> None:
    after_commit(session, ALERT_DELIVERED, alert_delivered_text(rule, labels, channel, event))


def delivery_given_up(
    session: Session,
    rule: str,
    labels: Mapping[str, str],
    channel: str,
    attempts: int,
    error: str | None,
) -> None:
    facts = delivery_given_up_text(rule, labels, channel, attempts, error)
    after_commit(session, DELIVERY_GIVEN_UP, facts)


def channel_disabled(session: Session, channel: str, kind: str, error: str | None) -> None:
    after_commit(session, CHANNEL_DISABLED, channel_disabled_text(channel, kind, error))


def channel_enabled(session: Session, channel: str, why: str, held: int) -> None:
    after_commit(session, CHANNEL_ENABLED, channel_enabled_text(channel, why, held))


def feed_failing(session: Session, provider: str, url: str, error: str) -> None:
    after_commit(session, FEED_FAILING, feed_failing_text(provider, url, error))


def feed_back(
    session: Session, provider: str, url: str, failures: int, down_s: float | None
) -> None:
    after_commit(session, FEED_BACK, feed_back_text(provider, url, failures, down_s))
