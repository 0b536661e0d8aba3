"""Rows the health checks read, written straight into the tables (the scheduler's own writers
are tested with it: here only what they leave behind matters)."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import delete
from sqlalchemy.orm import Session

from monitor.db.base import utcnow
from monitor.db.models import (
    Alert,
    Channel,
    Delivery,
    Feed,
    Provider,
    SchedulerLease,
    ScheduleSlot,
    WatchdogPing,
)

PREFIX = "health-"
CHANNEL = "health-ops"
TABLES = (Delivery, Alert, Channel, Feed, Provider, ScheduleSlot, SchedulerLease, WatchdogPing)


def clear(session: Session) -> None:
    """Empty what the health checks read (in the caller's transaction, which the test's
    fixture rolls back)."""
    for model in TABLES:
        session.execute(delete(model))


def forget(session: Session) -> None:
    """Delete what these helpers committed (the scheduler's tables and the watchdog's, the
    deliveries, alerts and channel they made), and nothing another test may have left."""
    for model in (ScheduleSlot, SchedulerLease, WatchdogPing):
        session.execute(delete(model))
    session.execute(delete(Delivery).where(Delivery.idempotency_key.startswith(PREFIX)))
    session.execute(delete(Alert).where(Alert.fingerprint.startswith(PREFIX)))
    session.execute(delete(Channel).where(Channel.name == CHANNEL))


def put_lease(
    session: Session,
    holder: str = "web-1:4242",
    token: int = 7,
    *,
    held_for_s: float = 3600.0,
    expires_in_s: float = 15.0,
    now: datetime | None = None,
) -> SchedulerLease:
    at = now or utcnow()
    row = session.get(SchedulerLease, "beat") or SchedulerLease(name="beat")
    row.holder, row.token = holder, token
    row.acquired_at = at - timedelta(seconds=held_for_s)
    row.renewed_at = at
    row.expires_at = at + timedelta(seconds=expires_in_s)
    session.add(row)
    session.flush()
    return row


def put_slot(
    session: Session,
    name: str,
    period_s: float | None,
    *,
    done_ago_s: float | None = None,
    fenced: int = 0,
    repeated: int = 0,
    now: datetime | None = None,
) -> ScheduleSlot:
    """An entry whose last admitted slot was ``done_ago_s`` seconds ago (None: never)."""
    at = now or utcnow()
    row = session.get(ScheduleSlot, name) or ScheduleSlot(name=name, task=f"slamon.{name}")
    row.period_s, row.fenced, row.repeated = period_s, fenced, repeated
    if done_ago_s is not None:
        slot = at - timedelta(seconds=done_ago_s)
        row.sent_slot = row.done_slot = slot
        row.sent_at = row.done_at = slot
        row.sent_token = 7
    session.add(row)
    session.flush()
    return row


def put_delivery(
    session: Session, created_ago_s: float, status: str = "pending", now: datetime | None = None
) -> Delivery:
    at = now or utcnow()
    channel = session.query(Channel).filter_by(name=CHANNEL).one_or_none()
    if channel is None:
        channel = Channel(name=CHANNEL, kind="webhook")
        session.add(channel)
    count = session.query(Alert).count()
    alert = Alert(
        fingerprint=f"{PREFIX}{count}", rule="target_down", severity="critical", started_at=at
    )
    session.add(alert)
    session.flush()
    delivery = Delivery(
        alert_id=alert.id,
        channel_id=channel.id,
        event="firing",
        idempotency_key=f"{PREFIX}{alert.id}",
        payload={},
        status=status,
        created_at=at - timedelta(seconds=created_ago_s),
    )
    session.add(delivery)
    session.flush()
    return delivery


def put_feed(
    session: Session,
    url: str,
    *,
    polled_ago_s: float | None,
    enabled: bool = True,
    failing: bool = False,
    now: datetime | None = None,
) -> Feed:
    """A feed last polled ``polled_ago_s`` seconds ago (None: never), added a day ago; a
    ``failing`` one's poll failed (its last success is a day old)."""
    at = now or utcnow()
    provider = session.query(Provider).filter_by(slug="aws").one_or_none()
    if provider is None:
        provider = Provider(slug="aws", name="AWS")
        session.add(provider)
        session.flush()
    polled = at - timedelta(seconds=polled_ago_s) if polled_ago_s is not None else None
    feed = Feed(
        provider_id=provider.id,
        kind="aws-rss",
        url=url,
        enabled=enabled,
        created_at=at - timedelta(days=1),
        last_polled_at=polled,
        last_success_at=at - timedelta(days=1) if failing else polled,
        consecutive_failures=3 if failing else 0,
    )
    session.add(feed)
    session.flush()
    return feed
